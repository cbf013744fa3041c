'use strict';
// Which calls the lock makes: none beyond Atomics.compareExchange when
// uncontended, notify only when the word says someone may wait (2), and
// never the global Atomics.wait / waitAsync / notify, in any thread.

const assert = require('assert');
const api = require('..');
const { createAsyncLock } = require('../lib/async-lock');
const { startLockWorker } = require('./fixtures/async-lock-helpers');
const { until } = require('./helpers');

/** An AsyncLock class over the package's triple that counts every call. */
function countingLock() {
  const calls = { wait: 0, waitAsync: 0, notify: 0 };
  const AsyncLock = createAsyncLock({
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

  it('unlock notifies exactly once when someone waits (state 2), and not after', async () => {
    const { AsyncLock, calls } = countingLock();
    const lock = new AsyncLock();
    const release = await lock.acquire();
    const queued = lock.executeLocked(() => 'second');
    assert.strictEqual(lock.i32a[0], AsyncLock.CONTENDED);
    assert.deepStrictEqual(calls, { wait: 0, waitAsync: 1, notify: 0 });
    release();
    assert.strictEqual(calls.notify, 1);
    assert.strictEqual(await queued, 'second');
    // The waiter took the word with exchange(2): its own unlock pays one
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
});
