'use strict';
// No way out of executeLocked / acquire / waitForUnlock leaves the lock taken
// for nobody, or a waiter of theirs queued with nobody listening:
// - where %Promise% cannot be found (globalThis.Promise and
//   Promise.prototype.constructor both replaced before the package loads),
//   every await calls the program's %Promise.prototype.then%; a `then` that
//   throws on any call must not reject the caller's promise while an inner
//   async frame of the lock waits on and later takes the lock (held for
//   good, by nobody);
// - the waiter whose await failed is flushed out of the queue;
// - a lock taken before a signal's removeEventListener threw, or before the
//   release function could be made, is given back.

const assert = require('assert');
const { Worker } = require('worker_threads');
const { AsyncLock, waitersForTesting } = require('../..');
const { root, until } = require('../helpers');

// Runs in a worker (the replaced globals stay there). For each op and each
// n, another instance holds the lock, the op is called with a `then` that
// throws on its n-th call from then on, the holder unlocks once the op's
// microtasks have run, and the report says how the op ended, whether its
// waiter was left queued when it rejected, and whether the lock is free
// once every wait of this thread has settled. Awaits nothing while `then`
// may throw (the harness would count).
const source = `
  const { parentPort, workerData } = require('worker_threads');
  const proto = Object.getPrototypeOf((async () => {})());
  const originalThen = proto.then;
  globalThis.Promise = Promise.prototype.constructor = function Promise() { throw new Error('not this one'); };
  const { AsyncLock, waitersForTesting } = require(workerData.root);
  let calls = 0;
  let failAt = 0;
  proto.then = function (onFulfilled, onRejected) {
    if (failAt !== 0 && ++calls === failAt) throw new Error('then #' + failAt);
    return originalThen.call(this, onFulfilled, onRejected);
  };
  const cases = [];
  for (const op of ['executeLocked', 'acquire', 'waitForUnlock']) for (const n of [1, 2, 3]) cases.push([op, n]);
  const reports = {};
  const next = () => {
    if (cases.length === 0) return parentPort.postMessage(reports);
    const [op, n] = cases.shift();
    const lock = new AsyncLock();
    const holder = new AsyncLock(lock.sab);
    const queued = () => waitersForTesting(lock.i32a, 0);
    holder.tryLock();
    const report = { outcome: 'pending' };
    reports[op + ', then #' + n + ' throws'] = report;
    calls = 0;
    failAt = n;
    const promise = op === 'executeLocked' ? lock.executeLocked(() => 'ran') : lock[op]();
    originalThen.call(
      promise,
      (value) => {
        report.outcome = 'resolved ' + typeof value;
        if (typeof value === 'function') value();
      },
      (error) => {
        report.outcome = 'rejected: ' + error.message;
        report.queuedWhenRejected = queued().registry;
      }
    );
    setImmediate(() => {
      failAt = 0;
      holder.unlock();
      const settled = () => {
        if (queued().pending !== 0) return setImmediate(settled);
        // One more turn: every microtask of a settled wait has run.
        setImmediate(() => {
          report.lockedAfter = lock.isLocked();
          report.queuedAfter = queued().registry;
          next();
        });
      };
      settled();
    });
  };
  next();
`;

describe('AsyncLock: no way out leaves the lock taken or a waiter queued for nobody', function () {
  this.timeout(60000);

  it('without %Promise%, a then that throws on any call: the lock ends free, nothing queued', async () => {
    // The package must load after the globals are replaced: keep the forced
    // polyfill run's preload (__test__/setup-polyfill.js, inherited through
    // execArgv) from loading it first, which would find %Promise% and make
    // no call to the replaced then at all.
    const env = Object.assign({}, process.env);
    delete env.ATOMICS_WAITASYNC_TEST_POLYFILL;
    const worker = new Worker(source, { eval: true, workerData: { root }, env });
    try {
      const reports = await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      const expected = {};
      for (const op of ['executeLocked', 'acquire', 'waitForUnlock']) {
        // The one await on the waitAsync promise calls then once: the 1st
        // call throws, and the waiter is flushed out before the rejection.
        expected[`${op}, then #1 throws`] = {
          outcome: 'rejected: then #1',
          queuedWhenRejected: 0,
          lockedAfter: false,
          queuedAfter: 0,
        };
        // No 2nd or 3rd call: the op waits on, takes the lock when it is
        // unlocked, and gives it back.
        for (const n of [2, 3]) {
          expected[`${op}, then #${n} throws`] = {
            outcome: { executeLocked: 'resolved string', acquire: 'resolved function', waitForUnlock: 'resolved undefined' }[op],
            lockedAfter: false,
            queuedAfter: 0,
          };
        }
      }
      assert.deepStrictEqual(reports, expected);
    } finally {
      await worker.terminate();
    }
  });

  /** A lock another instance holds, and the holder. */
  function held() {
    const lock = new AsyncLock();
    const holder = new AsyncLock(lock.sab);
    assert.ok(holder.tryLock());
    return { lock, holder };
  }
  const queued = (lock) => waitersForTesting(lock.i32a, 0).registry;

  for (const op of ['executeLocked', 'acquire']) {
    it(`${op}: a signal whose removeEventListener throws after the take: the lock is given back`, async () => {
      const { lock, holder } = held();
      const failure = new Error('removeEventListener failed');
      const signal = {
        aborted: false,
        addEventListener() {},
        removeEventListener() {
          throw failure;
        },
      };
      let ran = false;
      const promise =
        op === 'executeLocked'
          ? lock.executeLocked(() => {
              ran = true;
            }, { signal })
          : lock.acquire({ signal });
      await until(() => queued(lock) === 1, 'the op queued');
      holder.unlock();
      await assert.rejects(promise, (error) => error === failure);
      assert.strictEqual(ran, false);
      assert.strictEqual(lock.isLocked(), false);
      assert.strictEqual(queued(lock), 0);
    });
  }

  // makeReleaser defines its properties (async-lock-dispose-setter.spec.js):
  // a setter on Function.prototype cannot make it throw, only the stack can. An
  // acquire on a free lock makes it before returning, at the caller's
  // depth: called at each depth from "cannot start" to "fits", it must
  // never leave the lock taken without a release function.
  it('acquire on a free lock: if the release function cannot be made (out of stack), the lock is given back', async function () {
    /** acquire() `shift` frames above stack exhaustion; how it ended. */
    async function trial(shift) {
      const lock = new AsyncLock();
      let promise = null;
      let thrown = null;
      let target = -1;
      const rec = (n) => {
        try {
          rec(n + 1);
        } catch (_) {
          if (target < 0) target = n - shift;
        }
        if (n === target && promise === null && thrown === null) {
          try {
            promise = lock.acquire();
          } catch (error) {
            thrown = error.name;
          }
        }
      };
      rec(0);
      let out = thrown === null ? 'pending' : `threw ${thrown}`;
      if (promise !== null) {
        try {
          (await promise)();
          out = 'ok';
        } catch (error) {
          out = `rejected ${error.name}`;
        }
      }
      assert.strictEqual(lock.isLocked(), false, `at shift ${shift}: ${out}, the lock left taken`);
      return out;
    }
    const outs = {};
    let fits = 0;
    for (let out; (out = await trial(fits)) !== 'ok'; fits += 16) {
      outs[out] = (outs[out] || 0) + 1;
      if (fits > 4000) throw new Error('the call never fit');
    }
    for (let shift = Math.max(0, fits - 128); shift < fits + 32; shift++) {
      const out = await trial(shift);
      outs[out] = (outs[out] || 0) + 1;
    }
    assert.ok(outs.ok > 0 && outs['rejected RangeError'] > 0, JSON.stringify(outs));
  });
});
