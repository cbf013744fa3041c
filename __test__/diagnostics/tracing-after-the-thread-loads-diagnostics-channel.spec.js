'use strict';
// executeLocked leaves diagnostics_channel alone while its thread has not
// loaded it (nobody can listen then: lib/diagnostics.js runTraced), and is
// traced as ever from the moment a subscriber comes: one that subscribes
// after the lock's first use, having loaded diagnostics_channel only then,
// gets every event from its subscription on, and none once it has gone.
// Each case runs in a fresh Node, whose main thread has not loaded
// diagnostics_channel (this one has); where Node loads it at start-up
// (Node 22 and later), the first case does not apply.

const assert = require('assert');
const path = require('path');
const { runNode } = require('../helpers');
const { hasTracing } = require('../fixtures/diagnostics');

const root = path.join(__dirname, '..', '..');

/** Runs `body` (an async function's body) in a fresh Node and returns the JSON it returns. */
function inFreshNode(body) {
  const script = `const root = ${JSON.stringify(root)};
    const dcLoaded = () => process.moduleLoadList.includes('NativeModule diagnostics_channel');
    (async () => { ${body} })().then(
      (value) => { console.log(JSON.stringify(value)); process.exit(0); },
      (error) => { console.error(error); process.exit(1); });`;
  const result = runNode(['-e', script]);
  assert.strictEqual(result.status, 0, result.stderr);
  return JSON.parse(result.stdout.trim().split('\n').pop());
}

// Subscribes to the four events of executeLocked's tracing channel; `events` lists them.
const TRACE = `
  function trace(dc) {
    const tracing = dc.tracingChannel('atomics-waitasync:AsyncLock:run');
    const events = [];
    const handlers = {};
    for (const event of ['start', 'end', 'asyncStart', 'asyncEnd']) handlers[event] = (context) => events.push(event + ' ' + context.result);
    tracing.subscribe(handlers);
    return { events, stop: () => tracing.unsubscribe(handlers) };
  }
`;

describe('diagnostics: executeLocked before and after its thread loads diagnostics_channel', function () {
  before(function () {
    if (!hasTracing) this.skip(); // (Node < 18.19: no tracingChannel)
  });

  it('executeLocked does not load diagnostics_channel where the thread has not', function () {
    const seen = inFreshNode(`
      const atStart = dcLoaded();
      const { AsyncLock } = require(root);
      const lock = new AsyncLock();
      await lock.executeLocked(() => 1);
      require('zlib'); // (another built-in module: looked through, not diagnostics_channel)
      await lock.executeLocked(() => 2);
      return { atStart, after: dcLoaded() };
    `);
    if (seen.atStart) this.skip(); // (this Node loads it at start-up)
    assert.deepStrictEqual(seen, { atStart: false, after: false });
  });

  it('a subscriber that loads diagnostics_channel after the lock\'s first use gets every event from then on', function () {
    const seen = inFreshNode(`${TRACE}
      const { AsyncLock } = require(root);
      const lock = new AsyncLock();
      const results = [await lock.executeLocked(() => 1)];
      const t = trace(require('diagnostics_channel'));
      results.push(await lock.executeLocked(() => 2));
      results.push(await lock.executeLocked(async () => 3));
      t.stop();
      results.push(await lock.executeLocked(() => 4));
      return { results, events: t.events };
    `);
    assert.deepStrictEqual(seen.results, [1, 2, 3, 4]);
    assert.deepStrictEqual(seen.events, [
      'start undefined', 'end undefined', 'asyncStart 2', 'asyncEnd 2',
      'start undefined', 'end undefined', 'asyncStart 3', 'asyncEnd 3',
    ]);
  });

  it('a subscriber that comes after the package loaded, before the lock\'s first use, hears that use', function () {
    const seen = inFreshNode(`${TRACE}
      const { AsyncLock } = require(root);
      const lock = new AsyncLock();
      const t = trace(require('diagnostics_channel'));
      const result = await lock.executeLocked(() => 1);
      t.stop();
      return { result, events: t.events };
    `);
    assert.deepStrictEqual(seen, { result: 1, events: ['start undefined', 'end undefined', 'asyncStart 1', 'asyncEnd 1'] });
  });
});
