'use strict';
// waitAsync timeouts run on the notifier thread: they settle "timed-out",
// not early, are not counted by a later notify, and leave nothing behind.

const assert = require('assert');
const { waitAsync, notify, waitersForTesting } = require('../..');
const { until } = require('../helpers');

const shared = () => new Int32Array(new SharedArrayBuffer(16));

describe('waitAsync timeouts', () => {
  it('settles "timed-out", not before the timeout', async () => {
    const ta = shared();
    const start = process.hrtime.bigint();
    const value = await waitAsync(ta, 0, 0, 50).value;
    const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
    assert.strictEqual(value, 'timed-out');
    assert.ok(elapsedMs >= 49, `settled after ${elapsedMs} ms`);
    assert.strictEqual(notify(ta, 0), 0);
    assert.deepStrictEqual(waitersForTesting(ta, 0), { registry: 0, pending: 0, timers: 0, retriers: 0 });
  });

  it('coerces timeouts: NaN and undefined wait forever, strings and objects become numbers', async () => {
    const ta = shared();
    const forever = [waitAsync(ta, 0, 0, NaN), waitAsync(ta, 0, 0), waitAsync(ta, 0, 0, undefined)];
    const fromString = waitAsync(ta, 1, 0, '10').value;
    const fromObject = waitAsync(ta, 1, 0, { valueOf: () => 10 }).value;
    assert.deepStrictEqual(await Promise.all([fromString, fromObject]), ['timed-out', 'timed-out']);
    assert.strictEqual(waitersForTesting(ta, 0).registry, 3, 'the infinite waits are still queued');
    assert.strictEqual(notify(ta, 0), 3);
    for (const r of forever) assert.strictEqual(await r.value, 'ok');
  });

  it('notify before the deadline wins and cancels the deadline', async () => {
    const ta = shared();
    const p = waitAsync(ta, 0, 0, 60000).value;
    await until(() => waitersForTesting().timers >= 1, 'the deadline to reach the notifier');
    assert.strictEqual(notify(ta, 0), 1);
    assert.strictEqual(await p, 'ok');
    await until(() => waitersForTesting().timers === 0, 'the deadline to be cancelled');
  });

  it('timeouts and notifies racing over many waiters: each settles once, counts add up', async () => {
    const ta = shared();
    const n = 2000;
    const promises = [];
    for (let i = 0; i < n; i++) promises.push(waitAsync(ta, 0, 0, i % 10).value);
    let notified = 0;
    // Notify in small steps while the deadlines expire around us.
    while (waitersForTesting(ta, 0).registry > 0) {
      notified += notify(ta, 0, 7);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const values = await Promise.all(promises);
    const ok = values.filter((v) => v === 'ok').length;
    const timedOut = values.filter((v) => v === 'timed-out').length;
    assert.strictEqual(ok + timedOut, n);
    assert.strictEqual(ok, notified, 'every counted wake settled "ok"');
    assert.deepStrictEqual(waitersForTesting(ta, 0).registry, 0);
    await until(() => waitersForTesting().timers === 0, 'no deadline left behind');
  });
});
