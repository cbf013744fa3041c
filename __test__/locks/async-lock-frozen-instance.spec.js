'use strict';
// A frozen AsyncLock works: "this instance holds the lock" lives where
// freezing does not reach (a WeakMap of the factory's). Kept in an own
// property, its write would throw after the compareExchange took the lock:
// taken for good, with no holder to unlock it.

const assert = require('assert');
const { AsyncLock } = require('../..');

describe('AsyncLock: a frozen instance', function () {
  it('tryLock / unlock, lock / unlock, lockGuard, executeLocked, acquire all work and leave it free', async () => {
    const lock = Object.freeze(new AsyncLock());
    const check = (what, take) => {
      try {
        take();
      } finally {
        if (lock.isLocked()) lock.unlock(); // throws ERR_ASYNC_LOCK_NOT_HELD if nobody holds it
      }
      assert.strictEqual(lock.isLocked(), false, what);
    };
    check('tryLock', () => assert.strictEqual(lock.tryLock(), true));
    check('lock', () => assert.strictEqual(lock.lock(), true));
    check('lockGuard', () => lock.lockGuard());
    assert.strictEqual(await lock.executeLocked(() => 'ran'), 'ran');
    assert.strictEqual(lock.isLocked(), false);
    (await lock.acquire())();
    assert.strictEqual(lock.isLocked(), false);
  });

  it('a frozen holder still excludes another instance, and its unlock wakes it', async () => {
    const lock = Object.freeze(new AsyncLock());
    const other = new AsyncLock(lock.sab);
    assert.strictEqual(lock.tryLock(), true);
    assert.strictEqual(other.tryLock(), false);
    const waiter = other.acquire();
    lock.unlock();
    (await waiter)();
    assert.strictEqual(lock.isLocked(), false);
  });
});
