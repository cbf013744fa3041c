'use strict';
// Fake timers (@sinonjs/fake-timers, jest's modern timers) replace
// process.hrtime, performance and Date with a clock that stands still
// until the test ticks it, each fake marked with its clock. Installed before the package loads (jest's
// fakeTimers.enableGlobally, sinon in a mocha --require), they must leave
// the family's deadlines real: the waits under a deadline (the engine's,
// Node's timers) run in real time, and a deadline on a frozen clock would
// never come. Each case runs in a child process, killed if it hangs.

const assert = require('assert');
const { runNode, root } = require('../helpers');

// What the fakes do to the clocks, before the package loads: each fake
// function marked with its clock, as @sinonjs/fake-timers marks them.
const FREEZE = `
  const clock = { now: 0 };
  const frozen = [1000, 0];
  const hrtime = () => frozen.slice();
  hrtime.bigint = () => 1000000000000n;
  hrtime.clock = clock;
  process.hrtime = hrtime;
  const now = Date.now();
  Date.now = () => now;
  // Node's timers module too (fake-timers 11 and later, on Node's own
  // global): the global's fakes, the module's own kept on the clock.
  const timers = require('timers');
  clock.timersModuleMethods = ['setTimeout', 'clearTimeout'].map((methodName) => ({ methodName, original: timers[methodName] }));
  const fakeSetTimeout = () => ({ ref() { return this; }, unref() { return this; }, hasRef: () => true }); // never fires
  const fakeClearTimeout = () => {};
  fakeSetTimeout.clock = clock;
  fakeClearTimeout.clock = clock;
  timers.setTimeout = globalThis.setTimeout = fakeSetTimeout;
  timers.clearTimeout = globalThis.clearTimeout = fakeClearTimeout;
  if (process.env.STACKED) {
    // A second install over the first (one that leaves Date alone): its
    // clock keeps the first's fakes as the module's own.
    const second = { timersModuleMethods: [{ methodName: 'setTimeout', original: fakeSetTimeout }, { methodName: 'clearTimeout', original: fakeClearTimeout }] };
    const again = (f) => Object.assign((...args) => f(...args), { clock: second });
    timers.setTimeout = globalThis.setTimeout = again(fakeSetTimeout);
    timers.clearTimeout = globalThis.clearTimeout = again(fakeClearTimeout);
  }
  Object.defineProperty(globalThis, 'performance', { value: { now: () => 0, timeOrigin: now }, configurable: true, writable: true });
`;

describe('deadlines under fake timers installed before the package loads', function () {
  this.timeout(60000);

  it('a blocking timed wait and an async one end when their time is up', function () {
    const result = runNode(['-e', `${FREEZE}
      const api = require(${JSON.stringify(root)});
      const latch = new api.Latch(1);
      const blocking = latch.wait(100);
      const semaphore = new api.Semaphore(1);
      semaphore.acquireSync(1);
      const acquired = semaphore.acquireSync(1, 50);
      latch.waitAsync({ timeout: 100 }).then((opened) => {
        console.log(JSON.stringify({ blocking, acquired, opened }));
      });
    `], { timeout: 20000 });
    assert.strictEqual(result.signal, null, `killed (${result.signal}): a deadline never came`);
    assert.strictEqual(result.status, 0, result.stderr);
    assert.deepStrictEqual(JSON.parse(result.stdout.trim()), { blocking: false, acquired: false, opened: false });
  });

  for (const stacked of [false, true]) {
    it(`an async take waiting behind another times out (its timer is Node's own)${stacked ? ', under two clocks stacked' : ''}`, function () {
      inFreshNodeTimesOut(stacked);
    });
  }

  function inFreshNodeTimesOut(stacked) {
    const result = runNode(['-e', `${FREEZE}
      const api = require(${JSON.stringify(root)});
      const semaphore = new api.Semaphore(1);
      semaphore.acquireSync(1);
      semaphore.acquire(1).catch(() => {}); // first in line, no timeout
      semaphore.acquire(1, { timeout: 100 }).then(
        () => console.log(JSON.stringify('acquired')),
        (error) => { console.log(JSON.stringify(error.code)); process.exit(0); }
      );
    `], { timeout: 20000, env: { ...process.env, STACKED: stacked ? '1' : '' } });
    assert.strictEqual(result.signal, null, `killed (${result.signal}): the timeout never came`);
    assert.strictEqual(result.status, 0, result.stderr);
    assert.strictEqual(JSON.parse(result.stdout.trim()), 'ERR_SEMAPHORE_TIMEOUT');
  }
});
