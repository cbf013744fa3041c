'use strict';
// A notify that picks a waiter whose worker is being terminated must not
// lose the wake-up: the dying thread never sees it, so it goes on to the
// next waiter, as if the dead one had never been queued.
//
// The window is real: a worker blocked in wait() stays queued until its
// current 10 ms slice ends, and a pending waitAsync until the worker's env
// is torn down, so `worker.terminate(); notify(ta, i, 1)` picks it every
// time. Native Atomics on Node 20 lose the wake-up in this very sequence
// (10 of 10 for wait, 9 of 10 for waitAsync; the next waiter sleeps on).

const assert = require('assert');
const { Worker } = require('worker_threads');
const { notify, waitAsync, waitersForTesting, AsyncLock } = require('../..');
const { root, until } = require('../helpers');

// Every worker a test starts, terminated after each test: a failing test
// would otherwise leave a waiter blocked and mocha hanging.
const started = [];
function track(worker) {
  started.push(worker);
  return worker;
}

/** A worker that waits on ta[index] (wait or waitAsync) and posts the result. */
function waiter(sab, mode, index = 0) {
  const source = `
    const { workerData, parentPort } = require('worker_threads');
    const { wait, waitAsync } = require(workerData.root);
    const ta = new Int32Array(workerData.sab);
    if (workerData.mode === 'wait') {
      parentPort.postMessage(wait(ta, workerData.index, 0));
    } else {
      waitAsync(ta, workerData.index, 0).value.then((value) => parentPort.postMessage(value));
    }
  `;
  const worker = track(new Worker(source, { eval: true, workerData: { root, sab, mode, index } }));
  const result = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  return { worker, result, exited };
}

/** Two waiter workers on ta[0] of a fresh buffer, queued in this order. */
async function twoWaiters(mode) {
  const sab = new SharedArrayBuffer(8);
  const ta = new Int32Array(sab);
  const first = waiter(sab, mode);
  await until(() => waitersForTesting(ta, 0).registry === 1, 'the first waiter to queue');
  const second = waiter(sab, mode);
  await until(() => waitersForTesting(ta, 0).registry === 2, 'the second waiter to queue');
  return { ta, first, second };
}

/** Resolves with `promise`'s value, or with 'still waiting' after `ms`. */
function within(promise, ms) {
  let timer;
  const late = new Promise((resolve) => (timer = setTimeout(resolve, ms, 'still waiting')));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('a wake-up that hits a terminated worker goes on to the next waiter', function () {
  this.timeout(60000);
  const rounds = 5;

  afterEach(() => Promise.all(started.splice(0).map((worker) => worker.terminate())));

  for (const mode of ['wait', 'waitAsync']) {
    it(`${mode}: terminate() the first waiter, then notify one: the second wakes`, async () => {
      for (let round = 0; round < rounds; round++) {
        const { ta, first, second } = await twoWaiters(mode);
        first.worker.terminate();
        assert.strictEqual(notify(ta, 0, 1), 1);
        assert.strictEqual(await within(second.result, 5000), 'ok', `round ${round}: the wake-up was lost`);
        await first.exited;
        assert.strictEqual(waitersForTesting(ta, 0).registry, 0);
      }
    });
  }

  it('wait, through a binding that does not say it checks for a stopping worker (one built before it did): the interrupt point stops it, and the second wakes', async () => {
    // Such a binding answers a woken wait of a terminated worker with a
    // plain OK: lib/atomics.js must then take the interrupt point itself.
    const oldBindingSource = `
      const { workerData, parentPort } = require('worker_threads');
      const binding = require(workerData.root + '/binding.js');
      const { createAtomics } = require(workerData.root + '/lib/atomics.js');
      // OK_STOPPING (4) -> OK, inline: a function call after the native
      // one would itself let the termination land (at its stack check).
      // No JS promise table (false): only wait() is used, and a preloaded
      // polyfill has already given this thread's binding its table.
      const { wait } = createAtomics(Object.assign({}, binding, {
        waitSeesStop: undefined,
        wait: (...args) => {
          const code = binding.wait(...args);
          return code === 4 ? 0 : code;
        },
        waitContinue: () => {
          const code = binding.waitContinue();
          return code === 4 ? 0 : code;
        },
      }), undefined, false);
      parentPort.postMessage(wait(new Int32Array(workerData.sab), 0, 0));
    `;
    for (let round = 0; round < rounds; round++) {
      const sab = new SharedArrayBuffer(8);
      const ta = new Int32Array(sab);
      const first = track(new Worker(oldBindingSource, { eval: true, workerData: { root, sab } }));
      const firstExited = new Promise((resolve) => first.once('exit', resolve));
      await until(() => waitersForTesting(ta, 0).registry === 1, 'the first waiter to queue');
      const second = waiter(sab, 'wait');
      await until(() => waitersForTesting(ta, 0).registry === 2, 'the second waiter to queue');
      first.terminate();
      assert.strictEqual(notify(ta, 0, 1), 1);
      assert.strictEqual(await within(second.result, 5000), 'ok', `round ${round}: the wake-up was lost`);
      await firstExited;
      assert.strictEqual(waitersForTesting(ta, 0).registry, 0);
    }
  });

  it('a wake-up the terminated worker did see is not passed on', async () => {
    for (const mode of ['wait', 'waitAsync']) {
      const { ta, first, second } = await twoWaiters(mode);
      assert.strictEqual(notify(ta, 0, 1), 1);
      assert.strictEqual(await first.result, 'ok', 'the first waiter saw its wake-up');
      await first.worker.terminate();
      assert.strictEqual(waitersForTesting(ta, 0).registry, 1, `${mode}: the second waiter is still queued`);
      assert.strictEqual(await within(second.result, 100), 'still waiting');
      assert.strictEqual(notify(ta, 0, 1), 1);
      assert.strictEqual(await second.result, 'ok');
    }
  });

  it('a worker terminated while its undrained mailbox holds 1,000 wake-ups passes every one on', async () => {
    // The worker queues a waitAsync on each of 1,000 elements, then blocks
    // its event loop in a native Atomics.wait: notifies that take its
    // waiters put them in its mailbox, which it never drains. Behind each,
    // the main thread waits on the same element. At terminate() all 1,000
    // are still in the mailbox: each wake-up must go on to the main
    // thread's waiter, as if the dead one had never been queued. (Node 20
    // runs the pending settle during the worker's cleanup, when JS can no
    // longer run: each resolve fails and its wake-up goes on; one that
    // arrives after that is handed back when the cleanup hook closes the
    // mailbox. Without the first, this test fails.)
    const K = 1000;
    const source = `
      const { workerData } = require('worker_threads');
      const { waitAsync } = require(workerData.root);
      const ta = new Int32Array(workerData.sab);
      const control = new Int32Array(workerData.control);
      for (let e = 0; e < ta.length; e++) waitAsync(ta, e, 0);
      Atomics.store(control, 0, 1); // queued
      Atomics.wait(control, 1, 0); // blocks the event loop until terminated
    `;
    const sab = new SharedArrayBuffer(4 * K);
    const ta = new Int32Array(sab);
    const control = new Int32Array(new SharedArrayBuffer(8));
    const worker = track(new Worker(source, { eval: true, workerData: { root, sab, control: control.buffer } }));
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    await until(() => Atomics.load(control, 0) === 1, 'the worker to queue its waiters');
    const behind = [];
    for (let e = 0; e < K; e++) behind.push(waitAsync(ta, e, 0).value);
    for (let e = 0; e < K; e++) {
      assert.strictEqual(waitersForTesting(ta, e).registry, 2, `element ${e}: both waiters queued`);
      assert.strictEqual(notify(ta, e, 1), 1, `element ${e}: the notify took the worker's waiter`);
    }
    assert.strictEqual(await within(Promise.race(behind), 100), 'still waiting', 'the worker\'s waiters were woken, not the main thread\'s');
    await worker.terminate();
    await exited;
    const outcomes = await within(Promise.all(behind), 5000);
    assert.notStrictEqual(outcomes, 'still waiting', 'wake-ups in the dead worker\'s mailbox were lost');
    assert.deepStrictEqual(new Set(outcomes), new Set(['ok']));
    assert.strictEqual(waitersForTesting().registry, 0);
  });

  it('AsyncLock: a waiter terminated just before unlock() does not strand the others', async () => {
    const source = `
      const { workerData } = require('worker_threads');
      const { AsyncLock } = require(workerData.root);
      const lock = AsyncLock.from(workerData.lock);
      const flags = new Int32Array(workerData.flags);
      lock.lock();
      Atomics.store(flags, workerData.slot, 1); // acquired
      lock.unlock();
    `;
    for (let round = 0; round < rounds; round++) {
      const lock = new AsyncLock();
      const flags = new Int32Array(new SharedArrayBuffer(8));
      const start = (slot) => {
        const worker = track(new Worker(source, { eval: true, workerData: { root, lock, flags: flags.buffer, slot } }));
        return { worker, exited: new Promise((resolve) => worker.once('exit', resolve)) };
      };
      lock.lock(); // the main thread holds it; both workers block in lock()
      const first = start(0);
      await until(() => waitersForTesting().registry === 1, 'the first worker to block');
      const second = start(1);
      await until(() => waitersForTesting().registry === 2, 'the second worker to block');
      first.worker.terminate();
      lock.unlock(); // wakes the first in line: the dying worker
      await within(
        until(() => Atomics.load(flags, 1) === 1, 'the second worker to get the lock', 5000),
        6000
      );
      assert.strictEqual(Atomics.load(flags, 1), 1, `round ${round}: the second worker never got the lock`);
      await Promise.all([first.exited, second.exited]);
      assert.strictEqual(lock.isLocked(), false);
    }
  });
});
