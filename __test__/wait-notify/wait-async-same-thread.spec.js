'use strict';
// waitAsync and notify in one thread: result shapes, settle strings, FIFO
// order, notify counts, and that nothing is left queued afterwards.

const assert = require('assert');
const { waitAsync, notify, waitersForTesting } = require('../..');
const { until } = require('../helpers');

const shared = (n = 4) => new Int32Array(new SharedArrayBuffer(n * 4));

describe('waitAsync in one thread', () => {
  it('returns { async: false, value: "not-equal" } when the value differs', () => {
    const ta = shared();
    ta[1] = 7;
    assert.deepStrictEqual(waitAsync(ta, 1, 6), { async: false, value: 'not-equal' });
    assert.deepStrictEqual(waitAsync(ta, 1, 6, 0), { async: false, value: 'not-equal' });
    assert.strictEqual(waitersForTesting(ta, 1).registry, 0);
  });

  it('returns { async: false, value: "timed-out" } for timeout 0 (and negative), queuing nothing', () => {
    const ta = shared();
    assert.deepStrictEqual(waitAsync(ta, 0, 0, 0), { async: false, value: 'timed-out' });
    assert.deepStrictEqual(waitAsync(ta, 0, 0, -5), { async: false, value: 'timed-out' });
    assert.deepStrictEqual(waitAsync(ta, 0, 0, -Infinity), { async: false, value: 'timed-out' });
    assert.strictEqual(waitersForTesting(ta, 0).registry, 0);
  });

  it('returns { async: true, value: Promise } and resolves "ok" on notify', async () => {
    const ta = shared();
    const result = waitAsync(ta, 0, 0);
    assert.deepStrictEqual(Object.keys(result), ['async', 'value']);
    assert.strictEqual(result.async, true);
    assert.ok(result.value instanceof Promise);
    assert.strictEqual(waitersForTesting(ta, 0).registry, 1);
    assert.strictEqual(notify(ta, 0), 1);
    assert.strictEqual(await result.value, 'ok');
    assert.deepStrictEqual(waitersForTesting(ta, 0), { registry: 0, pending: 0, timers: 0, retriers: 0 });
  });

  it('wakes in FIFO order and returns how many it woke', async () => {
    const ta = shared();
    const order = [];
    const promises = [0, 1, 2, 3, 4].map((n) => waitAsync(ta, 2, 0).value.then((v) => order.push([n, v])));
    assert.strictEqual(notify(ta, 2, 2), 2);
    await Promise.all(promises.slice(0, 2));
    assert.deepStrictEqual(order, [[0, 'ok'], [1, 'ok']]);
    assert.strictEqual(waitersForTesting(ta, 2).registry, 3);
    assert.strictEqual(notify(ta, 2, 1), 1);
    assert.strictEqual(notify(ta, 2), 2);
    await Promise.all(promises);
    assert.deepStrictEqual(order.map(([n]) => n), [0, 1, 2, 3, 4]);
    assert.strictEqual(notify(ta, 2), 0, 'nothing left to wake');
  });

  it('keeps separate queues per element', async () => {
    const ta = shared();
    const a = waitAsync(ta, 0, 0).value;
    const b = waitAsync(ta, 1, 0).value;
    assert.strictEqual(notify(ta, 1), 1);
    assert.strictEqual(await b, 'ok');
    assert.strictEqual(waitersForTesting(ta, 0).registry, 1);
    assert.strictEqual(notify(ta, 0), 1);
    assert.strictEqual(await a, 'ok');
  });

  it('the promise is never rejected and settles exactly once', async () => {
    const ta = shared();
    const p = waitAsync(ta, 0, 0, 20).value;
    const settled = await p.then((v) => v, (e) => `rejected: ${e}`);
    assert.strictEqual(settled, 'timed-out');
    assert.strictEqual(notify(ta, 0), 0, 'a timed-out waiter is not counted');
  });

  it('notify in the same turn as waitAsync still resolves "ok"', async () => {
    const ta = shared();
    const promises = [];
    for (let i = 0; i < 100; i++) {
      promises.push(waitAsync(ta, 3, 0, 1e9).value);
      assert.strictEqual(notify(ta, 3, 1), 1);
    }
    assert.deepStrictEqual(new Set(await Promise.all(promises)), new Set(['ok']));
    assert.strictEqual(waitersForTesting(ta, 3).registry, 0);
    assert.strictEqual(waitersForTesting().pending, 0);
    // Cancels reach the notifier thread asynchronously; none may stay behind.
    await until(() => waitersForTesting().timers === 0, 'the notifier to drop cancelled deadlines');
  });
});
