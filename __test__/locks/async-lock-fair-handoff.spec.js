'use strict';
// A waiter that has waited long gets the lock next: it marks the held word
// FAIR (bit 31), and the holder's release then hands the lock over (HANDED)
// instead of freeing it, so that a thread that barges in on the release
// does not take it first; only a waiter that the release woke takes a
// HANDED word, or any after a short grace period, and a hand-over that
// finds nobody to take it is free again.

const assert = require('assert');
const { threadId } = require('worker_threads');
const { AsyncLock, waitAsync, waitersForTesting } = require('../..');
const binding = require('../../binding');
const { startLockWorker } = require('../fixtures/async-lock-helpers');
const { until, contendedHere } = require('../helpers');

const FAIR = 1 << 31;
const HANDED = FAIR | 1;

describe('AsyncLock hands the lock over to a waiter that has waited long', function () {
  this.timeout(30000);

  it('a release of a FAIR word hands it to the waiter it wakes: a thread barging in right after the release does not get it', async () => {
    const lock = new AsyncLock();
    const worker = startLockWorker(lock);
    try {
      assert.strictEqual(await worker.call('lock', {}), true);
      const got = lock.acquire();
      await until(() => waitersForTesting(lock.i32a, 0).registry === 1, 'the main thread to queue');
      // As a waiter that has waited kFairAfter ms does when it looks again:
      Atomics.or(lock.i32a, 0, FAIR);
      assert.strictEqual(await worker.call('unlockThenTryLock'), false, 'the barging tryLock lost');
      const release = await got;
      assert.strictEqual(lock.holder(), threadId);
      assert.strictEqual(release.abandoned, false);
      release();
      assert.strictEqual(lock.isLocked(), false);
      assert.strictEqual(await worker.call('tryLock'), true);
      await worker.call('unlock');
    } finally {
      await worker.terminate();
    }
  });

  it("the binding's release of a FAIR word leaves HANDED and wakes one; with nobody to wake it frees the word", async () => {
    const i32a = new Int32Array(new SharedArrayBuffer(4));
    const held = contendedHere() | FAIR;
    i32a[0] = held;
    const waiter = waitAsync(i32a, 0, held).value;
    assert.strictEqual(binding.releaseLock(i32a, 0, false, held), held);
    assert.strictEqual(i32a[0], HANDED);
    assert.strictEqual(await waiter, 'ok');
    i32a[0] = held;
    assert.strictEqual(binding.releaseLock(i32a, 0, false, held), held);
    assert.strictEqual(i32a[0], 0, 'nobody to hand it to');
    // A FAIR bit set after the holder looked is still the holder's word.
    i32a[0] = held;
    assert.strictEqual(binding.releaseLock(i32a, 0, false, held & ~FAIR), held);
    assert.strictEqual(i32a[0], 0);
  });

  it('a HANDED word: nobody holds it; tryLock() leaves it to its waiter; lock() and acquire() take it after the grace period; waitForUnlock() resolves', async () => {
    const lock = new AsyncLock();
    lock.i32a[0] = HANDED; // its waiter never came
    assert.strictEqual(lock.isLocked(), false);
    assert.strictEqual(lock.holder(), null);
    assert.strictEqual(lock.tryLock(), false);
    await lock.waitForUnlock();
    assert.strictEqual(lock.lock(), true);
    assert.strictEqual(lock.abandoned, false);
    lock.unlock();
    lock.i32a[0] = HANDED;
    const release = await lock.acquire();
    release();
    assert.strictEqual(lock.i32a[0], 0);
  });

  it("a thread with async waits of its own queued takes a HANDED word at once (the hand-over may be its own waiter's, which cannot run while it spins)", async () => {
    const held = new AsyncLock();
    const worker = startLockWorker(held);
    try {
      assert.strictEqual(await worker.call('lock', {}), true);
      const queued = held.acquire(); // an async wait of this thread, queued
      await until(() => waitersForTesting(held.i32a, 0).registry === 1, 'the wait to queue');
      const other = new AsyncLock();
      other.i32a[0] = HANDED;
      assert.strictEqual(other.tryLock(), true);
      other.unlock();
      other.i32a[0] = HANDED;
      assert.strictEqual(other.lock(), true, 'lock() too, without the grace period');
      other.unlock();
      await worker.call('unlock');
      (await queued)();
    } finally {
      await worker.terminate();
    }
  });

  it('a release by a thread with async waits of its own on the lock does not hand it over (they could not take it before it yields)', async () => {
    const lock = new AsyncLock();
    lock.lock();
    // (Another instance's: one of this instance's own would wait in its line, off the word.)
    const queued = new AsyncLock(lock.sab).executeLocked(() => 'ran');
    await until(() => waitersForTesting(lock.i32a, 0).registry === 1, 'the wait to queue');
    Atomics.or(lock.i32a, 0, FAIR);
    lock.unlock();
    assert.strictEqual(lock.i32a[0], 0, 'freed, not HANDED');
    assert.strictEqual(await queued, 'ran');
  });

  it('a unlock() of a word a waiter marked FAIR meanwhile releases it (not "not held")', async () => {
    const lock = new AsyncLock();
    lock.lock();
    Atomics.store(lock.i32a, 0, contendedHere() | FAIR);
    lock.unlock();
    assert.strictEqual(lock.i32a[0], 0, 'handed to nobody: free');
  });
});
