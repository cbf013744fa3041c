'use strict';
// An unlock() whose notify fails other than out of stack. Only a
// RangeError (the stack) is worth a retry from the caller: unlock() then
// takes the lock back and throws. After any other failure (a panic in the
// addon surfaces as a plain Error) the lock is released and the wake-up
// retried by the package itself (a thread of the addon, or a timer when
// those are all busy). Taking every failure for "out of stack" would leave
// executeLocked, when its one retry failed again, rejecting with the lock
// still taken and its instance marked the holder, a frame nobody can reach
// any more: held by nobody, for good.

const assert = require('assert');
const api = require('../..');
const binding = require('../../binding');
const { until, lockWithFailingNotify } = require('../helpers');

describe('AsyncLock: an unlock whose notify fails other than out of stack', function () {
  const faulty = lockWithFailingNotify(() => new Error('atomics-waitasync: internal error (panic in the addon)'));
  const { AsyncLock } = faulty;
  const queued = (lock) => api.waitersForTesting(lock.i32a, lock.index).registry;

  /** Waits for `waiter` (a promise of a release function) to settle. */
  async function settles(waiter) {
    let release = null;
    waiter.then((r) => (release = r));
    await until(() => release !== null, 'the waiter to get the lock', 3000);
    return release;
  }

  /**
   * A lock of class `Lock` that another instance (`holder`) holds, with an
   * executeLocked of `lock` queued behind it; `ran()` says whether its f ran.
   */
  async function heldWithWaiter(Lock) {
    const lock = new Lock();
    made.push(lock);
    const holder = new Lock(lock.sab);
    holder.lock();
    let got = false;
    const waiter = lock.executeLocked(() => (got = true));
    await until(() => queued(lock) === 1, 'the waiter to queue');
    return { lock, holder, ran: () => got, waiter };
  }

  // Every lock a test made: should it fail, its sleepers are let go, so that
  // no pending wait keeps the process alive.
  let made = [];
  afterEach(async () => {
    faulty.fail(0);
    for (const lock of made) {
      while (queued(lock) !== 0) {
        new AsyncLock(lock.sab).forceUnlock();
        await new Promise(setImmediate);
      }
    }
    made = [];
  });

  it('executeLocked rejects with the error, and the queued waiter still gets the lock', async () => {
    const lock = new AsyncLock();
    made.push(lock);
    const other = new AsyncLock(lock.sab);
    let waiter;
    const outcome = lock.executeLocked(async () => {
      waiter = other.acquire();
      await until(() => queued(lock) === 1, 'the waiter to queue');
      faulty.fail(1); // the unlock's releaseLock: the word is freed, a thread of the addon retries the wake-up
      return 'ran';
    });
    await assert.rejects(outcome, { message: /panic in the addon/ });
    const release = await settles(waiter);
    release();
    assert.strictEqual(lock.isLocked(), false);
    assert.strictEqual(queued(lock), 0);
    // The instance that ran f does not hold the lock: it can take it again.
    assert.strictEqual(await lock.executeLocked(() => 'again'), 'again');
    assert.strictEqual(lock.isLocked(), false);
  });

  it('unlock() throws the error with the lock released, and the queued waiter gets it', async () => {
    const lock = new AsyncLock();
    made.push(lock);
    const holder = new AsyncLock(lock.sab);
    holder.lock();
    const waiter = lock.acquire();
    await until(() => queued(lock) === 1, 'the waiter to queue');
    faulty.fail(1);
    assert.throws(() => holder.unlock(), { message: /panic in the addon/ });
    assert.throws(() => holder.unlock(), { code: 'ERR_ASYNC_LOCK_NOT_HELD' });
    const release = await settles(waiter);
    release();
    assert.strictEqual(lock.isLocked(), false);
  });

  it('a panic in the binding\'s notify (panicForTesting): executeLocked rejects, the waiter gets the lock', async () => {
    const { AsyncLock: RealLock } = api;
    const lock = new RealLock();
    made.push(lock);
    const other = new RealLock(lock.sab);
    let waiter;
    const outcome = lock.executeLocked(async () => {
      waiter = other.acquire();
      await until(() => queued(lock) === 1, 'the waiter to queue');
      // The unlock's releaseLock frees the word, and its notify panics, and
      // so does the retry; passing the wake-up on then panics twice more
      // (lib/atomics.js's notify tries the binding once more on its slow
      // path), and a timer delivers it.
      binding.panicForTesting('notify', 4);
    });
    await assert.rejects(outcome, { message: /internal error/ });
    const release = await settles(waiter);
    release();
    assert.strictEqual(lock.isLocked(), false);
  });

  it('a release function whose unlock failed so is spent: calling it again frees no later hold', async () => {
    const lock = new AsyncLock();
    made.push(lock);
    const other = new AsyncLock(lock.sab);
    const first = await lock.acquire();
    const waiter = other.acquire();
    await until(() => queued(lock) === 1, 'the waiter to queue');
    faulty.fail(1); // the unlock's notify; the wake-up then goes at once
    assert.throws(() => first(), { message: /panic in the addon/ });
    (await settles(waiter))();
    const second = await lock.acquire(); // the same instance holds it again
    first(); // a retry of the spent function: nothing
    assert.strictEqual(other.tryLock(), false, 'the retry freed the second hold');
    second();
    assert.strictEqual(lock.isLocked(), false);
  });

  for (const failures of [1, 2, 3]) it(`a worker whose unlock's notify failed so ${failures} time(s), and that then exits at once: the main thread still gets the lock`, async () => {
    const { AsyncLock: RealLock } = api;
    const lock = new RealLock();
    made.push(lock);
    const { Worker } = require('worker_threads');
    const gate = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(
      `
      const { workerData, parentPort } = require('worker_threads');
      const { lockWithFailingNotify } = require(workerData.root + '/__test__/helpers.js');
      const faulty = lockWithFailingNotify(() => new Error('internal error (panic in the addon)'));
      const { AsyncLock } = faulty;
      const lock = new AsyncLock(workerData.sab);
      const gate = new Int32Array(workerData.gate);
      lock.lock();
      parentPort.postMessage('locked');
      Atomics.wait(gate, 0, 0); // until the main thread's waiter is queued
      faulty.fail(workerData.failures);
      try { lock.unlock(); } catch (_) {}
      // exits now: a retry from a timer needs the thread to stay
    `,
      { eval: true, workerData: { root: require('path').join(__dirname, '..', '..'), sab: lock.sab, gate: gate.buffer, failures } }
    );
    await new Promise((resolve) => worker.once('message', resolve));
    const waiting = lock.executeLocked(() => 'ran');
    await until(() => queued(lock) === 1, 'the main thread to queue');
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    let outcome = null;
    waiting.then((v) => (outcome = v));
    try {
      await until(() => outcome !== null, 'the main thread to get the lock', 5000);
    } finally {
      await worker.terminate();
    }
    assert.strictEqual(outcome, 'ran');
    assert.strictEqual(lock.isLocked(), false);
  });

  it("with the addon's retrying threads all busy, the unlock passes the wake-up on itself (a timer), and the waiter gets the lock", async () => {
    await until(() => api.waitersForTesting().retriers === 0, 'earlier retries to end');
    const { lock, holder, ran, waiter } = await heldWithWaiter(api.AsyncLock);
    // Every notify fails until disarmed: eight other releases take every
    // retrying thread, so the unlock's wake-up is its own to pass on.
    const others = new Int32Array(new SharedArrayBuffer(32));
    binding.panicForTesting('notify', 1e6);
    try {
      for (let i = 0; i < 8; i++) {
        others[i] = 5; // held by owner 2, with waiters (src/robust.rs)
        binding.releaseLock(others, i, false, 5);
      }
      assert.strictEqual(api.waitersForTesting().retriers, 8);
      assert.throws(() => holder.unlock(), { message: /panic in the addon/ });
      assert.strictEqual(lock.i32a[0], 0, 'released');
      assert.strictEqual(queued(lock), 1, 'not woken yet');
    } finally {
      binding.panicForTesting('notify', 0);
    }
    await waiter; // woken by the unlock's timer once notifies work
    assert.strictEqual(ran(), true);
    assert.strictEqual(lock.isLocked(), false);
    await until(() => api.waitersForTesting().retriers === 0, 'the retrying threads to end');
  });

  it("a wake-up whose notify failed while JavaScript cannot even set a timer (out of stack) is still delivered, by a thread of the addon", async () => {
    const { lock, holder, ran, waiter } = await heldWithWaiter(AsyncLock);
    // The release's notify panics (twice); passing it on from JavaScript
    // would notify (which fails) and then set a timer, which cannot be set.
    faulty.fail(2);
    const realSetTimeout = global.setTimeout;
    global.setTimeout = () => {
      throw new RangeError('Maximum call stack size exceeded');
    };
    try {
      // The release's own error: nothing was passed on from here (that
      // would have thrown setTimeout's RangeError).
      assert.throws(() => holder.unlock(), { name: 'Error', message: /panic in the addon/ });
    } finally {
      global.setTimeout = realSetTimeout;
      faulty.fail(0);
    }
    assert.strictEqual(lock.i32a[0], 0, 'released');
    await until(ran, 'the waiter to get the lock', 3000);
    await waiter;
    assert.strictEqual(lock.isLocked(), false);
  });
});

