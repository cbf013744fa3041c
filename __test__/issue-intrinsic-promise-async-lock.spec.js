'use strict';
// AsyncLock returns intrinsic promises (%Promise%), whatever globalThis.Promise
// is, as waitAsync does (issue-intrinsic-promise.spec.js). lib/async-lock.js
// used the global Promise of the moment: with `globalThis.Promise = class
// extends Promise {}` (zone.js, bluebird and core-js replace it in real
// programs) its methods returned the replacement's promises, and with a
// replacement whose constructor throws, they threw. Each case runs in a
// worker, so that the replaced global stays there.

const assert = require('assert');
const { Worker } = require('worker_threads');
const { root } = require('./helpers');

// `replace` runs before or after the package loads; then every AsyncLock
// method that returns a promise, on a free lock and on one another instance
// holds, one after the other. Posts, for each, whether it returned an
// intrinsic promise and what it settled with, or what it threw.
function source(replace, when) {
  return `
    const { workerData, parentPort } = require('worker_threads');
    const intrinsic = Object.getPrototypeOf((async () => {})());
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
          const value = await result;
          seen[name].value = String(typeof value === 'function' ? viaRelease(value) : value);
        } catch (error) {
          seen[name].value = 'rejected: ' + error.message;
        }
      }
      parentPort.postMessage(seen);
    })();
  `;
}

const replacements = {
  'a subclass': 'globalThis.Promise = class extends Promise {};',
  'a constructor that throws': 'globalThis.Promise = function Promise() { throw new Error("not this one"); };',
};

const expected = {
  'executeLocked, free': { intrinsic: true, value: '1' },
  'executeLocked, f throws': { intrinsic: true, value: 'rejected: f' },
  'executeLocked, f async': { intrinsic: true, value: '2' },
  'executeLocked, not a function': { intrinsic: true, value: 'rejected: The "f" argument must be a function. Received 7' },
  'acquire, free': { intrinsic: true, value: 'released' },
  'waitForUnlock, free': { intrinsic: true, value: 'undefined' },
  'executeLocked, held': { intrinsic: true, value: '3' },
  'waitForUnlock, held': { intrinsic: true, value: 'undefined' },
  'acquire, held': { intrinsic: true, value: 'released' },
};

describe('issue: AsyncLock returns intrinsic promises, whatever globalThis.Promise is', function () {
  this.timeout(60000);
  const started = [];
  afterEach(() => Promise.all(started.splice(0).map((worker) => worker.terminate())));

  for (const [name, replace] of Object.entries(replacements)) {
    for (const when of ['before', 'after']) {
      it(`with ${name} as globalThis.Promise, set ${when} the package loads`, async () => {
        const worker = new Worker(source(replace, when), { eval: true, workerData: { root } });
        started.push(worker);
        const seen = await new Promise((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
        });
        assert.deepStrictEqual(seen, expected);
      });
    }
  }
});
