'use strict';
// Which calls the lock makes: none beyond Atomics.compareExchange when
// uncontended, notify only when the word says someone may wait (its WAITERS
// bit), and never the global Atomics.wait / waitAsync / notify, in any
// thread.

const assert = require('assert');
const api = require('../..');
const binding = require('../../binding');
const { createAsyncLock } = require('../../lib/async-lock');
const { startLockWorker } = require('../fixtures/async-lock-helpers');
const { until } = require('../helpers');

// Words as src/robust.rs lays them out: held by owner 2, with and without
// WAITERS, and held by owner 3 with it.
const HELD = 2 << 1;
const CONTENDED = (2 << 1) | 1;
const OTHERS = (3 << 1) | 1;

/**
 * An AsyncLock class over the package's triple and releaseLock that counts
 * every call (a releaseLock as a notify: it frees the word and notifies).
 */
function countingLock() {
  const calls = { wait: 0, waitAsync: 0, notify: 0 };
  const AsyncLock = createAsyncLock({
    lockOwner: binding.lockOwner,
    lockWatch: binding.lockWatch,
    wait(...args) {
      calls.wait++;
      return api.wait(...args);
    },
    waitAsync(...args) {
      calls.waitAsync++;
      return api.waitAsync(...args);
    },
    notify(...args) {
      calls.notify++;
      return api.notify(...args);
    },
    releaseLock(...args) {
      calls.notify++;
      return binding.releaseLock(...args);
    },
  });
  return { AsyncLock, calls };
}

describe('AsyncLock native calls', function () {
  it('an uncontended lock/unlock, tryLock, executeLocked and acquire make no wait/notify call', async () => {
    const { AsyncLock, calls } = countingLock();
    const lock = new AsyncLock();
    for (let i = 0; i < 100; i++) {
      lock.lock();
      lock.unlock();
      assert.ok(lock.tryLock());
      lock.unlock();
      await lock.executeLocked(() => i);
      (await lock.acquire())();
      await lock.waitForUnlock();
    }
    assert.deepStrictEqual(calls, { wait: 0, waitAsync: 0, notify: 0 });
  });

  it("a release to a take waiting in the instance's line makes no native call", async () => {
    const { AsyncLock, calls } = countingLock();
    const lock = new AsyncLock();
    const release = await lock.acquire();
    const queued = [lock.executeLocked(() => 'second'), lock.acquire(), lock.waitForUnlock()];
    assert.strictEqual(lock.i32a[0] & 1, 0, 'nobody waits on the word');
    release();
    assert.strictEqual(await queued[0], 'second');
    (await queued[1])();
    await queued[2];
    assert.strictEqual(lock.isLocked(), false);
    assert.deepStrictEqual(calls, { wait: 0, waitAsync: 0, notify: 0 });
  });

  it('unlock notifies exactly once when someone waits (the WAITERS bit), and not after', async () => {
    const { AsyncLock, calls } = countingLock();
    const lock = new AsyncLock();
    const release = await lock.acquire();
    // (Another instance's take: one of this instance's would wait in its line, off the word.)
    const queued = new AsyncLock(lock.sab).executeLocked(() => 'second');
    assert.strictEqual(lock.i32a[0] & 1, 1, 'the word says someone waits');
    assert.deepStrictEqual(calls, { wait: 0, waitAsync: 1, notify: 0 });
    release();
    assert.strictEqual(calls.notify, 1);
    assert.strictEqual(await queued, 'second');
    // The waiter took the word with WAITERS set: its own unlock pays one
    // spare notify (Drepper's trade-off); the next round is silent again.
    assert.strictEqual(calls.notify, 2);
    lock.lock();
    lock.unlock();
    assert.deepStrictEqual(calls, { wait: 0, waitAsync: 1, notify: 2 });
  });

  it('works across threads with every global Atomics.wait/waitAsync/notify replaced by a thrower', async () => {
    const saved = { wait: Atomics.wait, notify: Atomics.notify, waitAsync: Atomics.waitAsync };
    const counter = new SharedArrayBuffer(4);
    const lock = new api.AsyncLock();
    const worker = startLockWorker(lock, { counter, stubGlobals: true });
    try {
      for (const name of Object.keys(saved)) {
        Atomics[name] = () => {
          throw new Error(`global Atomics.${name} was called`);
        };
      }
      await worker.call('isLocked');
      // The main thread holds; the worker blocks in lock() through the package's wait.
      const release = await lock.acquire();
      const workerGot = worker.call('lock', {});
      await until(() => api.waitersForTesting(lock.i32a, 0).registry === 1, 'the worker to queue');
      release(); // state 2: notifies through the package
      assert.strictEqual(await workerGot, true);
      // Now the worker holds: the main thread queues through the package's waitAsync.
      const mainGot = lock.executeLocked(() => 'main');
      await until(() => api.waitersForTesting(lock.i32a, 0).registry === 1, 'the main thread to queue');
      await worker.call('unlock');
      assert.strictEqual(await mainGot, 'main');
      assert.strictEqual(await worker.call('increment', { n: 1000 }), 1000);
    } finally {
      Object.assign(Atomics, saved);
      await worker.terminate();
    }
  });

  it("the binding's releaseLock: frees the caller's contended word and wakes one, or any word and all when forced; throws, having done nothing, for any array it would not take", async () => {
    // Before each armed panic: no thread of the addon still retrying (its
    // notify could take one).
    const noRetriers = () => until(() => api.waitersForTesting().retriers === 0, 'retrying threads to end');
    const i32a = new Int32Array(new SharedArrayBuffer(8));
    for (const [held, all, after] of [
      [CONTENDED, false, 0],
      [HELD, false, HELD],
      [OTHERS, false, OTHERS],
      [1, false, 1],
      [0, false, 0],
      [1, true, 0],
      [OTHERS, true, 0],
      [0, true, 0],
    ]) {
      i32a[1] = held;
      assert.strictEqual(binding.releaseLock(i32a, 1, all, CONTENDED), held);
      assert.strictEqual(i32a[1], after, `after ${held}, all: ${all}`);
    }
    // Freed, and then the notify panicked, and its retry too: the old value
    // minus 2^32 (below any i32): a thread of the addon retries it.
    for (const [held, all] of [[CONTENDED, false], [-5, true], [-(2 ** 31), true], [2 ** 31 - 1, true]]) {
      await noRetriers();
      i32a[1] = held;
      binding.panicForTesting('notify', 2);
      assert.strictEqual(binding.releaseLock(i32a, 1, all, CONTENDED), held - 2 ** 32);
      assert.strictEqual(i32a[1], 0);
    }
    // One panic: the retry delivers it.
    await noRetriers();
    i32a[1] = CONTENDED;
    binding.panicForTesting('notify', 1);
    assert.strictEqual(binding.releaseLock(i32a, 1, false, CONTENDED), CONTENDED);
    binding.panicForTesting('notify', 0);
    i32a[1] = CONTENDED;
    assert.throws(() => binding.releaseLock(new BigInt64Array(new SharedArrayBuffer(16)), 1, false, CONTENDED), TypeError);
    assert.throws(() => binding.releaseLock(new Int32Array(4), 1, false, CONTENDED), TypeError);
    assert.throws(() => binding.releaseLock(i32a, 2, false, CONTENDED), RangeError);
    assert.throws(() => binding.releaseLock(i32a, -1, false, CONTENDED), RangeError);
    assert.throws(() => binding.releaseLock(i32a, '1', false, CONTENDED), { name: 'TypeError', message: /index/ });
    assert.throws(() => binding.releaseLock(i32a, 1, 'yes', CONTENDED), { name: 'TypeError', message: /all/ });
    assert.throws(() => binding.releaseLock(i32a, 1), { name: 'TypeError', message: /all/ });
    assert.throws(() => binding.releaseLock(i32a, 1, false), { name: 'TypeError', message: /held/ });
    assert.strictEqual(i32a[1], CONTENDED);
  });

  it("the binding's releaseLock wakes exactly one waiter of the caller's contended word, in the order they queued, and every waiter when forced", async () => {
    const i32a = new Int32Array(new SharedArrayBuffer(4));
    i32a[0] = CONTENDED;
    const woken = [];
    const waits = [0, 1, 2].map((n) => api.waitAsync(i32a, 0, CONTENDED).value.then(() => woken.push(n)));
    assert.strictEqual(api.waitersForTesting(i32a, 0).registry, 3);
    assert.strictEqual(binding.releaseLock(i32a, 0, false, CONTENDED), CONTENDED);
    await until(() => woken.length === 1, 'the first waiter');
    assert.deepStrictEqual([woken, api.waitersForTesting(i32a, 0).registry], [[0], 2]);
    i32a[0] = OTHERS; // another owner's: nothing is freed, nobody woken
    assert.strictEqual(binding.releaseLock(i32a, 0, false, CONTENDED), OTHERS);
    assert.strictEqual(api.waitersForTesting(i32a, 0).registry, 2);
    assert.strictEqual(binding.releaseLock(i32a, 0, true, CONTENDED), OTHERS);
    await Promise.all(waits);
    assert.deepStrictEqual(woken, [0, 1, 2]);
    assert.strictEqual(i32a[0], 0);
  });

  it('a binding without releaseLock (a binary older than the JS): no AsyncLock can be made, and nothing else fails at load', () => {
    const Lock = createAsyncLock({ wait: api.wait, waitAsync: api.waitAsync, notify: api.notify });
    assert.throws(() => new Lock(), { name: 'Error', message: /no releaseLock/ });
    assert.throws(() => Lock.from({ sab: new SharedArrayBuffer(4), index: 0 }), { message: /no releaseLock/ });
  });

  it("the binding's releaseLock: a wake-up whose notify keeps failing is retried by a thread of the addon, at most 8 at a time; beyond that it is the caller's", async () => {
    await until(() => api.waitersForTesting().retriers === 0, 'earlier retries to end');
    const words = new Int32Array(new SharedArrayBuffer(4 * 9));
    const woken = [];
    const waits = [];
    for (let i = 0; i < 9; i++) {
      words[i] = CONTENDED;
      waits.push(api.waitAsync(words, i, CONTENDED).value.then(() => woken.push(i)));
    }
    const results = [];
    binding.panicForTesting('notify', 1e6); // every notify in the process, until disarmed
    try {
      for (let i = 0; i < 9; i++) results.push(binding.releaseLock(words, i, false, CONTENDED));
      assert.strictEqual(api.waitersForTesting().retriers, 8);
    } finally {
      binding.panicForTesting('notify', 0);
    }
    assert.deepStrictEqual(results, [...Array(8).fill(CONTENDED - 2 ** 32), CONTENDED - 2 ** 33]);
    assert.deepStrictEqual(Array.from(words), Array(9).fill(0));
    // Once notifies work again, the threads deliver theirs and end ...
    await until(() => woken.length === 8 && api.waitersForTesting().retriers === 0, 'the retrying threads');
    assert.deepStrictEqual(woken.sort(), [0, 1, 2, 3, 4, 5, 6, 7]);
    // ... and the ninth is still the caller's to pass on.
    assert.strictEqual(api.waitersForTesting(words, 8).registry, 1);
    api.notify(words, 8, 1);
    await Promise.all(waits);
  });
});
