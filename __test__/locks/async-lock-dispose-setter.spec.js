'use strict';
// makeReleaser defines `[Symbol.dispose]` and `[Symbol.asyncDispose]` on the
// release function (no setter runs): put there by assignment, a throwing
// setter on Function.prototype (or Object.prototype) would make lockGuard()
// throw with the lock taken, held by nobody, for good. Should making the
// release function fail anyway, lockGuard gives the lock back.

const assert = require('assert');
const { AsyncLock } = require('../..');

const keys = [Symbol.dispose, Symbol.asyncDispose].filter((key) => typeof key === 'symbol');

describe('AsyncLock: lockGuard with a throwing setter for Symbol.dispose', function () {
  if (keys.length === 0) {
    it.skip('needs Symbol.dispose');
    return;
  }

  for (const key of keys) {
    for (const where of ['Function.prototype', 'Object.prototype']) {
      it(`${where}[${String(key)}] with a throwing setter: lockGuard and acquire still work`, async () => {
        const target = where === 'Function.prototype' ? Function.prototype : Object.prototype;
        const before = Object.getOwnPropertyDescriptor(target, key);
        Object.defineProperty(target, key, {
          configurable: true,
          get() {
            return undefined;
          },
          set() {
            throw new Error('setter ran');
          },
        });
        try {
          const lock = new AsyncLock();
          let release;
          try {
            release = lock.lockGuard();
          } finally {
            // Whatever happened, the lock must not be left taken.
            assert.strictEqual(lock.isLocked(), release !== undefined, 'held only with a release function');
          }
          assert.strictEqual(typeof release[key], 'function', 'its own dispose method');
          release[key]();
          assert.strictEqual(lock.isLocked(), false);
          const release2 = await lock.acquire();
          assert.strictEqual(typeof release2[key], 'function');
          release2();
          assert.strictEqual(lock.isLocked(), false);
        } finally {
          if (before) Object.defineProperty(target, key, before);
          else delete target[key];
        }
      });
    }
  }
});
