'use strict';
// AsyncLock returns intrinsic promises (%Promise%), whatever globalThis.Promise
// is, as waitAsync does (wait-notify/wait-async-intrinsic-promise.spec.js):
// with `globalThis.Promise = class extends Promise {}` (zone.js, bluebird
// and core-js replace it in real programs) its methods must not return the
// replacement's promises, nor throw with a replacement whose constructor
// throws. Each case runs in a worker, so that the replaced global stays
// there.
//
// Nor may setting `Promise[Symbol.species]` or
// `Promise.prototype.constructor` change what AsyncLock returns (chaining
// with the saved intrinsic `then` alone looks up
// `promise.constructor[Symbol.species]` on every call). With a species that
// throws, executeLocked(async f) must not leave a free lock held for good,
// nor queue on a held lock a waiter nobody listens to (the holder's unlock
// would wake that dead waiter: a lost wake-up). The lock must be free after
// every call here, and another worker's lock() must still get it.

const assert = require('assert');
const { Worker } = require('worker_threads');
const { root, until } = require('../helpers');

// `replace` runs before or after the package loads; then every AsyncLock
// method that returns a promise, on a free lock and on one another instance
// holds, one after the other. Posts, for each, whether it returned an
// intrinsic promise and what it settled with, or what it threw.
function source(replace, when) {
  return `
    const { workerData, parentPort } = require('worker_threads');
    const intrinsic = Object.getPrototypeOf((async () => {})());
    const IntrinsicPromise = Promise;
    // Awaits a promise of the lock without looking up its (maybe replaced)
    // constructor's species: the harness must not depend on what it tests.
    const settled = (promise) => {
      Object.defineProperty(promise, 'constructor', { value: IntrinsicPromise });
      return promise;
    };
    const replace = () => { ${replace} };
    if (${JSON.stringify(when)} === 'before') replace();
    const { AsyncLock } = require(workerData.root);
    if (${JSON.stringify(when)} === 'after') replace();
    const lock = new AsyncLock();
    const holder = new AsyncLock(lock.sab);
    const viaRelease = (release) => { release(); return 'released'; };
    // [name, call, whether another instance holds the lock meanwhile]
    const calls = [
      ['executeLocked, free', () => lock.executeLocked(() => 1), false],
      ['executeLocked, f throws', () => lock.executeLocked(() => { throw new Error('f'); }), false],
      ['executeLocked, f async', () => lock.executeLocked(async () => 2), false],
      ['executeLocked, not a function', () => lock.executeLocked(7), false],
      ['acquire, free', () => lock.acquire(), false],
      ['waitForUnlock, free', () => lock.waitForUnlock(), false],
      ['executeLocked, held', () => lock.executeLocked(() => 3), true],
      ['waitForUnlock, held', () => lock.waitForUnlock(), true],
      ['acquire, held', () => lock.acquire(), true],
    ];
    (async () => {
      const seen = {};
      for (const [name, call, held] of calls) {
        if (held && !holder.tryLock()) throw new Error('the lock is not free');
        let result;
        try {
          result = call();
        } catch (error) {
          seen[name] = { threw: String(error) };
          if (held) holder.unlock();
          continue;
        }
        seen[name] = { intrinsic: Object.getPrototypeOf(result) === intrinsic };
        if (held) holder.unlock();
        try {
          const value = await settled(result);
          seen[name].value = String(typeof value === 'function' ? viaRelease(value) : value);
        } catch (error) {
          seen[name].value = 'rejected: ' + error.message;
        }
        seen[name].free = !lock.isLocked();
      }
      parentPort.postMessage(seen);
    })();
  `;
}

const replacements = {
  'a subclass as globalThis.Promise': 'globalThis.Promise = class extends Promise {};',
  'a constructor that throws as globalThis.Promise': 'globalThis.Promise = function Promise() { throw new Error("not this one"); };',
  // Then %Promise% cannot be found at load: promises are made without it.
  'a constructor that throws as both globalThis.Promise and Promise.prototype.constructor':
    'globalThis.Promise = Promise.prototype.constructor = function Promise() { throw new Error("not this one"); };',
  'a subclass as Promise[Symbol.species]':
    'Object.defineProperty(Promise, Symbol.species, { value: class extends Promise {} });',
  'a throwing constructor as Promise[Symbol.species]':
    'Object.defineProperty(Promise, Symbol.species, { value: function () { throw new Error("not this species"); } });',
  'a subclass as Promise.prototype.constructor':
    'Promise.prototype.constructor = class extends Promise {};',
  'an object with a throwing species as Promise.prototype.constructor':
    'Promise.prototype.constructor = { [Symbol.species]: function () { throw new Error("not this species"); } };',
  // Resolving with a function or object looks up its `then`: the release
  // function must not reach these.
  'a Function.prototype.then': 'Function.prototype.then = function (resolve) { resolve("polluted"); };',
  'an Object.prototype.then': 'Object.prototype.then = function (resolve) { resolve("polluted"); };',
};

const expected = {
  'executeLocked, free': { intrinsic: true, value: '1', free: true },
  'executeLocked, f throws': { intrinsic: true, value: 'rejected: f', free: true },
  'executeLocked, f async': { intrinsic: true, value: '2', free: true },
  'executeLocked, not a function': { intrinsic: true, value: 'rejected: The "f" argument must be a function. Received 7', free: true },
  'acquire, free': { intrinsic: true, value: 'released', free: true },
  'waitForUnlock, free': { intrinsic: true, value: 'undefined', free: true },
  'executeLocked, held': { intrinsic: true, value: '3', free: true },
  'waitForUnlock, held': { intrinsic: true, value: 'undefined', free: true },
  'acquire, held': { intrinsic: true, value: 'released', free: true },
};

// f's own promise is awaited as any code awaiting it would: with a
// Promise.prototype.constructor whose species throws, that await rejects
// (ECMA-262's PromiseResolve, then \`then\`'s SpeciesConstructor). The lock is
// released all the same.
const expectedFor = (name) =>
  name === 'an object with a throwing species as Promise.prototype.constructor'
    ? { ...expected, 'executeLocked, f async': { intrinsic: true, value: 'rejected: not this species', free: true } }
    : expected;

describe('AsyncLock returns intrinsic promises, whatever globalThis.Promise is', function () {
  this.timeout(60000);
  const started = [];
  afterEach(() => Promise.all(started.splice(0).map((worker) => worker.terminate())));

  for (const [name, replace] of Object.entries(replacements)) {
    for (const when of ['before', 'after']) {
      it(`with ${name}, set ${when} the package loads`, async () => {
        const worker = new Worker(source(replace, when), { eval: true, workerData: { root } });
        started.push(worker);
        const seen = await new Promise((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
        });
        assert.deepStrictEqual(seen, expectedFor(name));
      });
    }
  }

  // Worker A sets a species that throws, holds the lock through one
  // instance and calls executeLocked on another, which must queue a waiter
  // that listens; worker B then blocks in lock(). When A unlocks, the wake-up
  // goes to A's waiter (queued first): A must run f and pass the lock on, so
  // that B gets it. (Before: A's waiter had no listener, the wake-up died
  // with it, and B waited for good.)
  for (const when of ['before', 'after']) {
    it(`a held lock and a throwing species set ${when} the package loads: the next worker still gets the lock`, async () => {
      const { AsyncLock, waitersForTesting } = require(root);
      const lock = new AsyncLock();
      const a = new Worker(
        `
        const { workerData, parentPort } = require('worker_threads');
        const IntrinsicPromise = Promise;
        const replace = () => Object.defineProperty(Promise, Symbol.species, {
          value: function () { throw new Error('not this species'); },
        });
        if (${JSON.stringify(when)} === 'before') replace();
        const { AsyncLock } = require(workerData.root);
        if (${JSON.stringify(when)} === 'after') replace();
        const holder = AsyncLock.from(workerData.lock);
        const lock = AsyncLock.from(workerData.lock);
        if (!holder.tryLock()) throw new Error('the lock is not free');
        let result;
        try {
          result = lock.executeLocked(() => 'ran');
        } catch (error) {
          result = IntrinsicPromise.reject(error);
        }
        Object.defineProperty(result, 'constructor', { value: IntrinsicPromise });
        parentPort.postMessage('queued');
        // Not an async listener: Node chains its result with \`then\`.
        parentPort.once('message', () => {
          holder.unlock();
          (async () => {
            try {
              parentPort.postMessage({ value: await result });
            } catch (error) {
              parentPort.postMessage({ rejected: String(error) });
            }
          })();
        });
      `,
        { eval: true, workerData: { root, lock } }
      );
      started.push(a);
      // A worker's next message; rejects if it fails or ends first.
      const message = (worker) =>
        new Promise((resolve, reject) => {
          const fail = (error) => {
            worker.off('message', got);
            worker.off('exit', exited);
            reject(error);
          };
          const exited = (code) => fail(new Error(`the worker exited (${code})`));
          const got = (value) => {
            worker.off('error', fail);
            worker.off('exit', exited);
            resolve(value);
          };
          worker.once('message', got);
          worker.once('error', fail);
          worker.once('exit', exited);
        });
      assert.strictEqual(await message(a), 'queued');
      let aDied = null;
      a.once('error', (error) => {
        aDied = error;
      });
      const b = new Worker(
        `
        const { workerData, parentPort } = require('worker_threads');
        const { AsyncLock } = require(workerData.root);
        const lock = AsyncLock.from(workerData.lock);
        lock.lock();
        lock.unlock();
        parentPort.postMessage('locked');
      `,
        { eval: true, workerData: { root, lock } }
      );
      started.push(b);
      const locked = message(b);
      // Both wait in the queue: A's executeLocked and B's lock().
      await until(() => {
        if (aDied) throw aDied;
        return waitersForTesting(lock.i32a, 0).registry >= 2;
      }, 'A\'s executeLocked and B\'s lock() to queue');
      if (aDied) throw aDied;
      a.postMessage('unlock');
      assert.deepStrictEqual(await message(a), { value: 'ran' });
      assert.strictEqual(await locked, 'locked');
      assert.strictEqual(lock.isLocked(), false);
    });
  }
});
