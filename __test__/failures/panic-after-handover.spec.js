'use strict';
// A panic in one of the core's methods (a bug; injected here with
// `panicForTesting(method)`) is caught in the core and comes back as
// `Panicked`. In these places the caller has already handed something over
// that it cannot get back, and must not take `Panicked` to mean "nothing
// happened": a mailbox left full with no signal on its way, a released
// ThreadsafeFunction that other threads could still call, a sync waiter
// left queued with nobody parked, wake-ups dropped. Each of those loses a
// wake-up for good, so the child process never finishes.
//
// Child processes (__test__/fixtures/panic-handover.js): one that hangs is
// killed by the runner.

const assert = require('assert');
const { fixture, runNodeAsync } = require('../helpers');

const PANICKED = 'atomics-waitasync: internal error (panic in the addon)';
const empty = { registry: 0, pending: 0, timers: 0, retriers: 0 };

async function run(scenario) {
  const r = await runNodeAsync([fixture('panic-handover.js'), scenario]);
  assert.deepStrictEqual([r.status, r.signal], [0, null], `${scenario} did not finish:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stderr, /panic_for_testing in/, 'the panic was injected');
  return JSON.parse(r.stdout);
}

describe('a panic in the core after the caller handed something over', function () {
  this.timeout(60000);

  it("close panicking twice at a worker's teardown: the process aborts rather than release a TSFN in use", async () => {
    // An unfinished close cannot be recovered from: other threads may
    // still deliver to the mailbox and call its TSFN.
    const r = await runNodeAsync([fixture('panic-handover.js'), 'closeTwice']);
    assert.deepStrictEqual([r.status, r.signal, r.stdout], [null, 'SIGABRT', ''], r.stderr);
    assert.match(r.stderr, /closing an environment's mailbox panicked twice; aborting/);
  });

  it('drain: the env signals itself and settles on a later turn', async () => {
    const report = await run('drain');
    assert.deepStrictEqual(report, { notified: 1, first: 'ok', notified2: 1, second: 'ok', counts: empty });
  });

  it("close at a worker's teardown: tried again, so the wake-up delivered to it goes on", async () => {
    const report = await run('close');
    assert.deepStrictEqual(report, { notified: 1, behind: 'ok', counts: empty });
  });

  it("abandon_sync at the teardown of a worker blocked in wait(): tried again, so its waiter leaves the queue", async () => {
    const report = await run('abandonAtTeardown');
    assert.deepStrictEqual(report.afterTerminate, empty);
    assert.deepStrictEqual([report.notified, report.behind], [1, 'ok']);
  });

  it("abandon_sync in waitAbandon: the waiter stays the thread's, and its next wait() ends it", async () => {
    const report = await run('abandonThenWait');
    assert.deepStrictEqual(report, {
      first: 3, // PENDING
      abandonError: PANICKED,
      stillQueued: 1,
      nextWait: 'not-equal',
      afterNextWait: 0,
      notified: 1,
      behind: 'ok',
    });
  });

  it("pass_on in waitAbandon: the wake-up stays the thread's, and its next wait() passes it on", async () => {
    const report = await run('passOnThenWait');
    assert.deepStrictEqual(report, {
      notified: 1,
      first: 3, // PENDING
      abandonError: PANICKED,
      nextWait: 'not-equal',
      behind: 'ok',
    });
  });
});
