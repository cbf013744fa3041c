'use strict';
// Waiters and notifiers in different threads share one FIFO queue per
// element: same thread, main→worker, worker→main, worker→worker, sync and
// async mixed. Tests wait on the registry count, not on sleeps.

const assert = require('assert');
const { waitAsync, wait, notify, waitersForTesting } = require('../..');
const { until, startWorker } = require('../helpers');

const queuedOn = (ta, index, n) => until(() => waitersForTesting(ta, index).registry === n, `${n} waiters queued`);

describe('across threads', function () {
  let workers = [];
  const spawn = () => {
    const w = startWorker();
    workers.push(w);
    return w;
  };
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.terminate()));
    workers = [];
  });

  it('main → worker: notify wakes a worker blocked in wait', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    const w = spawn();
    const result = w.call({ op: 'wait', buffer: ta.buffer, index: 1, value: 0 });
    await queuedOn(ta, 1, 1);
    assert.strictEqual(notify(ta, 1), 1);
    assert.strictEqual(await result, 'ok');
  });

  it('main → worker: notify settles a worker\'s waitAsync on the worker\'s own loop', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    const w = spawn();
    const { queued, settled } = w.waitAsync({ buffer: ta.buffer, index: 2, value: 0 });
    assert.deepStrictEqual(await queued, { async: true });
    assert.strictEqual(waitersForTesting(ta, 2).registry, 1);
    assert.strictEqual(waitersForTesting().pending, 0, 'the waiter is the worker\'s, not ours');
    assert.strictEqual(notify(ta, 2), 1);
    assert.strictEqual(await settled, 'ok');
  });

  it('worker → main: a worker\'s notify settles the main thread\'s waitAsync', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    const w = spawn();
    const p = waitAsync(ta, 0, 0).value;
    assert.strictEqual(await w.call({ op: 'notify', buffer: ta.buffer, index: 0 }), 1);
    assert.strictEqual(await p, 'ok');
  });

  it('worker → worker: one worker wakes another\'s wait and waitAsync', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    const [a, b] = [spawn(), spawn()];
    const sync = a.call({ op: 'wait', buffer: ta.buffer, index: 3, value: 0 });
    await queuedOn(ta, 3, 1);
    const { queued, settled } = b.waitAsync({ buffer: ta.buffer, index: 3, value: 0 });
    assert.deepStrictEqual(await queued, { async: true });
    assert.strictEqual(waitersForTesting(ta, 3).registry, 2);
    const c = spawn();
    assert.strictEqual(await c.call({ op: 'notify', buffer: ta.buffer, index: 3 }), 2);
    assert.strictEqual(await sync, 'ok');
    assert.strictEqual(await settled, 'ok');
  });

  it('sync and async waiters of several threads form one FIFO queue', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    const log = [];
    const [a, b] = [spawn(), spawn()];
    // Queue, in this order: main async, A sync, main async, B async, B... (B is busy), A is blocked.
    const m1 = waitAsync(ta, 0, 0).value.then((v) => log.push(['m1', v]));
    const aSync = a.call({ op: 'wait', buffer: ta.buffer, index: 0, value: 0 }).then((v) => log.push(['a', v]));
    await queuedOn(ta, 0, 2);
    const m2 = waitAsync(ta, 0, 0).value.then((v) => log.push(['m2', v]));
    const bAsync = b.waitAsync({ buffer: ta.buffer, index: 0, value: 0 });
    await bAsync.queued;
    const bSettled = bAsync.settled.then((v) => log.push(['b', v]));
    assert.strictEqual(waitersForTesting(ta, 0).registry, 4);
    // Wake one at a time; each must be the oldest remaining.
    const expectations = [['m1', m1], ['a', aSync], ['m2', m2], ['b', bSettled]];
    for (const [name, done] of expectations) {
      assert.strictEqual(notify(ta, 0, 1), 1);
      await done;
      assert.deepStrictEqual(log[log.length - 1], [name, 'ok']);
    }
    assert.strictEqual(log.length, 4);
  });

  it('an Int32Array and a BigInt64Array over the same bytes share a queue, in any thread', async () => {
    const sab = new SharedArrayBuffer(32);
    const i32 = new Int32Array(sab);
    const i64 = new BigInt64Array(sab);
    const w = spawn();
    // i64[1] starts at byte 8 = i32[2].
    const { queued, settled } = w.waitAsync({ buffer: sab, bigint: true, index: 1, value: 0n });
    await queued;
    assert.strictEqual(notify(i32, 2), 1);
    assert.strictEqual(await settled, 'ok');
    const p = waitAsync(i32, 4, 0).value;
    assert.strictEqual(await w.call({ op: 'notify', buffer: sab, bigint: true, index: 2 }), 1);
    assert.strictEqual(await p, 'ok');
  });

  it('a view with a byte offset waits on the right element', async () => {
    const sab = new SharedArrayBuffer(64);
    const whole = new Int32Array(sab);
    const view = new Int32Array(sab, 12, 4); // view[1] is whole[4]
    const w = spawn();
    const result = w.call({ op: 'wait', buffer: sab, byteOffset: 12, index: 1, value: 0 });
    await queuedOn(whole, 4, 1);
    assert.strictEqual(notify(whole, 3), 0, 'the neighbour has no waiter');
    assert.strictEqual(notify(view, 1), 1);
    assert.strictEqual(await result, 'ok');
  });

  it('a worker times out its own sync wait', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    const w = spawn();
    assert.strictEqual(await w.call({ op: 'wait', buffer: ta.buffer, index: 0, value: 0, timeout: 30 }), 'timed-out');
    assert.strictEqual(await w.call({ op: 'wait', buffer: ta.buffer, index: 0, value: 1 }), 'not-equal');
    assert.strictEqual(await w.call({ op: 'wait', buffer: ta.buffer, index: 0, value: 0, timeout: 0 }), 'timed-out');
    assert.strictEqual(waitersForTesting(ta, 0).registry, 0);
  });

  it('the main thread may block in wait, and a worker\'s notify wakes it', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    assert.strictEqual(wait(ta, 0, 0, 10), 'timed-out');
    assert.strictEqual(wait(ta, 0, 1), 'not-equal');
    // A worker stores then notifies once the main thread is queued; the
    // worker watches the registry count from its side.
    const w = spawn();
    await w.call({ op: 'counts' }); // the worker is up and has loaded the package
    const wakeLater = w.call({ op: 'notify-when-queued', buffer: ta.buffer, index: 0 });
    assert.strictEqual(wait(ta, 0, 0, 20000), 'ok');
    assert.strictEqual(await wakeLater, 1);
  });
});
