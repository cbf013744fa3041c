'use strict';
// Bounded waits for a lock held by a worker: lock(timeout) returns false,
// acquire / executeLocked / waitForUnlock reject with ERR_ASYNC_LOCK_TIMEOUT
// or the AbortSignal's reason, and leave nothing queued or pending; an abort
// does not cost another waiter its turn.

const assert = require('assert');
const { AsyncLock, waitersForTesting } = require('../..');
const { startLockWorker, makeAbortController } = require('../fixtures/async-lock-helpers');
const { until } = require('../helpers');

describe('AsyncLock timeouts and aborts', function () {
  let lock;
  let holder;

  beforeEach(async () => {
    lock = new AsyncLock();
    holder = startLockWorker(lock);
    assert.strictEqual(await holder.call('lock', {}), true);
  });

  afterEach(() => holder.terminate());

  /** Nothing of ours is left: no waiter on the word, no pending waitAsync here. */
  function assertNothingLeft() {
    assert.strictEqual(waitersForTesting(lock.i32a, 0).registry, 0, 'no waiter queued on the word');
    assert.strictEqual(waitersForTesting().pending, 0, 'no pending waitAsync in this thread');
  }

  const queued = (n) => until(() => waitersForTesting(lock.i32a, 0).registry === n, `${n} waiter(s) to queue`);

  it('acquire({ timeout }) rejects with ERR_ASYNC_LOCK_TIMEOUT and leaves nothing behind', async () => {
    await assert.rejects(lock.acquire({ timeout: 30 }), {
      name: 'Error',
      code: 'ERR_ASYNC_LOCK_TIMEOUT',
      message: 'Timed out after 30 ms waiting for the AsyncLock',
    });
    assertNothingLeft();
    assert.strictEqual(await holder.call('isLocked'), true, 'still the worker\'s');
    await holder.call('unlock');
    assert.strictEqual(lock.isLocked(), false);
  });

  it('executeLocked(f, { timeout }) rejects without running f; waitForUnlock({ timeout }) rejects', async () => {
    let ran = false;
    await assert.rejects(lock.executeLocked(() => {
      ran = true;
    }, { timeout: 20 }), { code: 'ERR_ASYNC_LOCK_TIMEOUT' });
    assert.strictEqual(ran, false);
    await assert.rejects(lock.waitForUnlock({ timeout: 20 }), { code: 'ERR_ASYNC_LOCK_TIMEOUT' });
    await assert.rejects(lock.acquire({ timeout: 0 }), { code: 'ERR_ASYNC_LOCK_TIMEOUT' });
    assertNothingLeft();
  });

  it('lock(timeout) returns false in the main thread and in a worker', async () => {
    assert.strictEqual(lock.lock(20), false);
    assert.strictEqual(lock.tryLock(), false);
    await holder.call('unlock');
    assert.strictEqual(lock.lock(20), true);
    assert.strictEqual(await holder.call('lock', { timeout: 20 }), false);
    assertNothingLeft();
    lock.unlock();
    assert.strictEqual(await holder.call('lock', { timeout: 20 }), true);
  });

  it('a timed wait that gets the lock in time resolves and leaves nothing queued', async () => {
    const got = lock.acquire({ timeout: 60000 });
    await queued(1);
    await holder.call('unlock');
    const release = await got;
    assert.strictEqual(lock.isLocked(), true);
    release();
    assertNothingLeft();
  });

  it('an already aborted signal rejects at once with its reason, without queuing', async () => {
    const controller = makeAbortController();
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(lock.acquire({ signal: controller.signal }), (e) => e === reason);
    await assert.rejects(lock.executeLocked(() => 1, { signal: controller.signal }), (e) => e === reason);
    assert.strictEqual(lock.i32a[0] & 1, 0, 'the word was not even marked contended');
    assertNothingLeft();
  });

  it('abort while queued rejects with the reason once nothing is left queued', async () => {
    const controller = makeAbortController();
    const reason = new Error('user cancelled');
    const got = lock.acquire({ signal: controller.signal, timeout: 60000 });
    const free = lock.waitForUnlock({ signal: controller.signal }); // (behind it, in the instance's line)
    await queued(1);
    controller.abort(reason);
    await assert.rejects(got, (e) => e === reason);
    await assert.rejects(free, (e) => e === reason);
    assertNothingLeft();
    assert.strictEqual(await holder.call('isLocked'), true);
    await holder.call('unlock');
    assert.strictEqual(lock.isLocked(), false);
  });

  it('abort without a reason rejects with an AbortError', async () => {
    const controller = makeAbortController();
    const got = lock.executeLocked(() => 1, { signal: controller.signal });
    await queued(1);
    controller.abort();
    await assert.rejects(got, { name: 'AbortError' });
    assertNothingLeft();
  });

  it('an abort does not cost a blocked worker its turn', async () => {
    const other = startLockWorker(lock);
    try {
      const otherGot = other.call('lock', {});
      await queued(1);
      const controller = makeAbortController();
      const got = lock.acquire({ signal: controller.signal });
      await queued(2);
      controller.abort(new Error('no thanks'));
      await assert.rejects(got, { message: 'no thanks' });
      // The abort woke everyone to flush its own waiter; the worker queues again.
      await queued(1);
      await holder.call('unlock');
      assert.strictEqual(await otherGot, true);
      await other.call('unlock');
      assert.strictEqual(lock.isLocked(), false);
      assertNothingLeft();
    } finally {
      await other.terminate();
    }
  });
});
