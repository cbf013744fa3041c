'use strict';
// executeLocked on a lock seen free, taken by another instance before its
// own compareExchange (runFree's rare branch): it then waits as the general
// path does and awaits that frame's promise, first giving the promise an own
// `constructor` (%Promise%) so that the await never calls a program's
// `then`. When giving it the constructor fails (out of stack), it is given
// again after an await, from the bottom of the stack: awaited as it was,
// with Promise.prototype.constructor replaced (as zone.js-like code does),
// the promise would go through the program's species and `then`.
//
// In a worker, whose globals the test can replace: a fresh copy of
// lib/async-lock.js (and lib/core.js, and lib/describe.js, which takes
// Reflect.defineProperty at load) whose Reflect.defineProperty fails once,
// as out of stack, on the call that marks runFree's promise.

const assert = require('assert');
const { Worker } = require('worker_threads');
const { root } = require('../helpers');

const source = `
  const { workerData, parentPort } = require('worker_threads');
  const api = require(workerData.root);
  const binding = require(workerData.root + '/binding');
  api.AsyncLock; // (the files the fresh copy shares with it load now, as they are)
  const realDefine = Reflect.defineProperty;
  let failAt = 0; // the failAt-th call from when it is set throws
  Reflect.defineProperty = function (...args) {
    if (failAt > 0 && --failAt === 0) throw new RangeError('Maximum call stack size exceeded');
    return realDefine.apply(Reflect, args);
  };
  const modulePath = require.resolve(workerData.root + '/lib/async-lock');
  delete require.cache[modulePath];
  delete require.cache[require.resolve(workerData.root + '/lib/core')];
  delete require.cache[require.resolve(workerData.root + '/lib/describe')];
  const { createAsyncLock } = require(modulePath);
  Reflect.defineProperty = realDefine;
  const Lock = createAsyncLock({
    wait: api.wait,
    waitAsync: api.waitAsync,
    notify: api.notify,
    releaseLock: binding.releaseLock,
    lockOwner: binding.lockOwner,
    lockWatch: binding.lockWatch,
  });
  const lock = new Lock();
  const other = new Lock(lock.sab);
  const IntrinsicPromise = Promise;
  let made = 0; // promises made through the replaced constructor
  class Replacement extends Promise {
    constructor(executor) {
      made++;
      super(executor);
    }
  }
  // The race: the first compareExchange after this (runFree's) finds the
  // word taken by another instance.
  const realCas = Atomics.compareExchange;
  Atomics.compareExchange = function (...args) {
    Atomics.compareExchange = realCas;
    other.lock();
    return realCas.apply(Atomics, args);
  };
  Promise.prototype.constructor = Replacement;
  // The first mark is runFree's own (the waitAsync promise the general
  // path awaits gets its constructor as a class field: lib/core.js
  // oursAwaited, not through Reflect.defineProperty).
  failAt = 1;
  const result = lock.executeLocked(() => 'ran');
  const failed = failAt === 0;
  realDefine(result, 'constructor', { value: IntrinsicPromise }); // the harness's own await
  other.unlock();
  (async () => {
    const value = await result;
    Promise.prototype.constructor = IntrinsicPromise;
    parentPort.postMessage({ failed, value, made, free: !lock.isLocked() });
  })();
`;

describe("AsyncLock: executeLocked's race with another instance (runFree's rare branch)", function () {
  it('marks its promise again after an await when marking failed out of stack: no program `then` is called', async () => {
    const worker = new Worker(source, { eval: true, workerData: { root } });
    const seen = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    assert.deepStrictEqual(seen, { failed: true, value: 'ran', made: 0, free: true });
  });
});
