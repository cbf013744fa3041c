'use strict';
// A worker terminated while it holds the lock, or while it waits for it.
// Holder: its teardown gives the lock back, and the next holder is told it
// was abandoned (more in async-lock-robust.spec.js). Waiter: its queue
// entry goes with it, and the lock passes to the next waiter as usual.

const assert = require('assert');
const { AsyncLock, waitersForTesting } = require('../..');
const { startLockWorker } = require('../fixtures/async-lock-helpers');
const { until } = require('../helpers');

describe('AsyncLock with terminated workers', function () {
  let lock;
  let workers;

  beforeEach(() => {
    lock = new AsyncLock(new Int32Array(new SharedArrayBuffer(8)), 1);
    workers = [];
  });

  afterEach(() => Promise.all(workers.map((w) => w.terminate())));

  const start = () => {
    const w = startLockWorker(lock);
    workers.push(w);
    return w;
  };
  const queued = (n) => until(() => waitersForTesting(lock.i32a, lock.index).registry === n, `${n} waiter(s) to queue`);

  it('a holder terminated gives the lock back: the queued worker gets it and is told it was abandoned', async () => {
    const holder = start();
    assert.strictEqual(await holder.call('lock', {}), true);
    assert.strictEqual(lock.holder(), holder.worker.threadId);
    const waiter = start();
    const waiterGot = waiter.call('lock', {});
    await queued(1);
    assert.strictEqual(await holder.terminate(), 1, 'terminated, not finished');

    assert.strictEqual(await waiterGot, true);
    assert.strictEqual(lock.holder(), waiter.worker.threadId);
    assert.strictEqual(await waiter.call('abandoned'), true, 'the first holder after the dead one learns it');
    await waiter.call('unlock');
    assert.strictEqual(lock.isLocked(), false);
    assert.strictEqual(lock.tryLock(), true);
    assert.strictEqual(lock.abandoned, false, 'only the first holder after it learns');
    lock.unlock();
    assert.strictEqual(waitersForTesting(lock.i32a, lock.index).registry, 0);
  });

  it('a waiter terminated while blocked in lock() leaves the queue; the next waiter gets the lock', async () => {
    assert.ok(lock.tryLock());
    const doomed = start();
    doomed.call('lock', {}).catch(() => {}); // never replies: terminated first
    await queued(1);
    const next = start();
    const nextGot = next.call('lock', {});
    await queued(2);
    assert.strictEqual(await doomed.terminate(), 1);
    assert.strictEqual(waitersForTesting(lock.i32a, lock.index).registry, 1, 'its queue entry went with it');

    lock.unlock(); // notifies one waiter: the live one, not the dead one
    assert.strictEqual(await nextGot, true);
    await next.call('unlock');
    assert.strictEqual(lock.isLocked(), false);
    assert.strictEqual(await next.call('tryLock'), true);
    await next.call('unlock');
  });

  it('terminating waiters one after another never breaks the lock for the main thread', async () => {
    assert.ok(lock.tryLock());
    for (let i = 0; i < 2; i++) {
      const w = start();
      w.call('lock', {}).catch(() => {});
      await queued(1);
      await w.terminate();
      assert.strictEqual(waitersForTesting(lock.i32a, lock.index).registry, 0);
    }
    const mainSecond = new AsyncLock(lock.i32a, lock.index).executeLocked(() => 'main');
    await queued(1);
    lock.unlock();
    assert.strictEqual(await mainSecond, 'main');
    assert.strictEqual(lock.isLocked(), false);
  });
});
