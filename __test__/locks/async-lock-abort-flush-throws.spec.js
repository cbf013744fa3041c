'use strict';
// An abort flushes its own waiter out of the queue with notify(…, Infinity).
// When that notify throws (abort() near the stack limit, a failing notify),
// the waiter stays queued and the holder's unlock may wake it (notify 1):
// the aborted call must pass that wake-up on, or the next waiter sleeps on
// with the word at 0.

const assert = require('assert');
const api = require('../..');
const { until, lockWithFailingNotify } = require('../helpers');

/**
 * An AbortSignal enough for the lock: a real one reports a listener's throw
 * as an uncaught exception, this one keeps it for the test to look at (the
 * lock's listener throws nothing).
 */
function fakeSignal() {
  const listeners = [];
  const signal = {
    aborted: false,
    reason: undefined,
    addEventListener: (type, f) => listeners.push(f),
    removeEventListener: (type, f) => {
      const i = listeners.indexOf(f);
      if (i >= 0) listeners.splice(i, 1);
    },
  };
  const abort = () => {
    signal.aborted = true;
    signal.reason = new Error('aborted by the test');
    const errors = [];
    for (const f of listeners.slice()) {
      try {
        f();
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  };
  return { signal, abort };
}

describe('AsyncLock: an abort whose flush throws', function () {
  const faulty = lockWithFailingNotify(() => new RangeError('Maximum call stack size exceeded'));
  const { AsyncLock } = faulty;
  const queued = (lock) => api.waitersForTesting(lock.i32a, lock.index).registry;

  for (const op of ['acquire', 'waitForUnlock']) {
    it(`${op}: the waiter behind the aborted one gets the lock`, async () => {
      const lock = new AsyncLock();
      const holder = new AsyncLock(lock.sab);
      const release = holder.lockGuard();
      const { signal, abort } = fakeSignal();
      let aborted = null;
      new AsyncLock(lock.sab)[op]({ signal }).then(
        () => (aborted = 'resolved'),
        (error) => (aborted = error.message)
      );
      await until(() => queued(lock) === 1, 'the first waiter to queue');
      let next = null;
      lock.acquire().then((r) => (next = r));
      await until(() => queued(lock) === 2, 'the second waiter to queue');
      faulty.fail(1);
      const errors = abort();
      assert.strictEqual(faulty.left(), 0, 'the flush was tried, and threw');
      // (Kept in the listener: a real signal would report it uncaught.)
      assert.deepStrictEqual(errors, [], 'the listener threw');
      release(); // wakes the aborted waiter first (FIFO)
      try {
        await until(() => aborted !== null && next !== null, 'both to settle', 3000);
      } finally {
        if (next === null) api.notify(lock.i32a, lock.index); // unfixed: let the sleeper go
      }
      assert.strictEqual(aborted, 'aborted by the test');
      next();
      assert.strictEqual(lock.isLocked(), false);
      assert.strictEqual(queued(lock), 0);
    });
  }
});
