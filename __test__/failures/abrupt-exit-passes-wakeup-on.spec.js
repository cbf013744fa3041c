'use strict';
// A wake-up is never lost on an abrupt exit. Whatever way a
// wait ends, its waiter's outcome is either delivered or, when nobody can
// receive it, passed on to the next waiter on the same element:
// (a) a queued waitAsync taken back (`cancel`) after a notify already took it;
// (b) a sync wait() whose loop throws (waitContinue, waitDone);
// (c) a settle that fails half-way through a chunk of outcomes.
// Each test queues a live waiter behind the one that exits abruptly and
// checks that the notify's wake-up reaches it.

const assert = require('assert');
const { Worker } = require('worker_threads');
const { waitAsync, notify, waitersForTesting } = require('../..');
const binding = require('../../binding');
const { createAtomics } = require('../../lib/atomics');
const { root, until } = require('../helpers');

/** The real binding, but with `overrides` in place of some of its functions. */
const faulty = (overrides) => createAtomics(Object.assign({}, binding, overrides));
const overflow = () => {
  throw new RangeError('Maximum call stack size exceeded');
};

// A worker that blocks in wait(ta, 0, 0) once `ready(ta)` holds, and posts
// what it returned.
const sleeperSource = `
  const { workerData, parentPort } = require('worker_threads');
  const { wait, waitersForTesting } = require(workerData.root);
  const ta = new Int32Array(workerData.sab);
  const nap = new Int32Array(new SharedArrayBuffer(4));
  while (waitersForTesting(ta, 0).registry < workerData.after) Atomics.wait(nap, 0, 0, 1);
  parentPort.postMessage(wait(ta, 0, 0));
`;

// A worker that notifies one waiter on ta[0] once `after` are queued there.
const notifierSource = `
  const { workerData } = require('worker_threads');
  const { notify, waitersForTesting } = require(workerData.root);
  const ta = new Int32Array(workerData.sab);
  const nap = new Int32Array(new SharedArrayBuffer(4));
  while (waitersForTesting(ta, 0).registry < workerData.after) Atomics.wait(nap, 0, 0, 1);
  notify(ta, 0, 1);
`;

const started = [];
// Every element a test waits on: woken in afterEach, so that a waiter a
// failing test leaves pending does not keep mocha alive.
const elements = [];
function fresh(length = 4) {
  const ta = new Int32Array(new SharedArrayBuffer(4 * length));
  elements.push(ta);
  return ta;
}

function start(source, workerData) {
  const worker = new Worker(source, { eval: true, workerData: { root, ...workerData } });
  started.push(worker);
  const messages = [];
  const waiting = [];
  worker.on('message', (message) => (waiting.length ? waiting.shift()(message) : messages.push(message)));
  worker.on('error', (error) => waiting.splice(0).forEach((resolve) => resolve({ error: String(error) })));
  const next = () => new Promise((resolve) => (messages.length ? resolve(messages.shift()) : waiting.push(resolve)));
  return { worker, next };
}

/** Resolves with `promise`'s value, or with 'still waiting' after `ms` (a failure bound only). */
function within(promise, ms) {
  let timer;
  const late = new Promise((resolve) => (timer = setTimeout(resolve, ms, 'still waiting')));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Blocks the main thread until ta[index] !== 0 (at most 10 s: a worker that failed never sets it). */
function blockUntilSet(ta, index) {
  const deadline = Date.now() + 10000;
  while (Atomics.load(ta, index) === 0) {
    if (Date.now() > deadline) throw new Error('the worker never got there');
    Atomics.wait(ta, index, 0, 100);
  }
}

describe('abrupt exits lose no wake-up', function () {
  this.timeout(60000);
  afterEach(async () => {
    await Promise.all(started.splice(0).map((worker) => worker.terminate()));
    for (const ta of elements.splice(0)) notify(ta, 0);
  });

  it('(a) cancel() of a waitAsync a notify already took passes the wake-up on', async () => {
    // The worker drives the binding as lib/pending.js does, and cancels its
    // queued waiter (as when its promise cannot be made) only after the
    // main thread's notify took it.
    const source = `
      const { workerData, parentPort } = require('worker_threads');
      const binding = require(workerData.root + '/binding.js');
      // lib/pending.js's table, registered with the binding (a preload may
      // have done it already): the binding then answers with slots.
      require(workerData.root + '/lib/pending.js').pendingPromises(binding);
      const ta = new Int32Array(workerData.sab);
      const slot = -1 - binding.waitAsync(ta, 0, 0, Infinity);
      Atomics.store(ta, 1, 1);
      Atomics.notify(ta, 1);
      Atomics.wait(ta, 2, 0); // until the main thread has notified
      binding.cancel(slot);
      parentPort.postMessage('cancelled');
    `;
    for (let round = 0; round < 5; round++) {
      const ta = fresh();
      const worker = start(source, { sab: ta.buffer });
      blockUntilSet(ta, 1);
      const mine = waitAsync(ta, 0, 0).value; // queued behind the worker's
      assert.strictEqual(notify(ta, 0, 1), 1, 'the notify takes the worker\'s waiter');
      Atomics.store(ta, 2, 1);
      Atomics.notify(ta, 2);
      assert.strictEqual(await worker.next(), 'cancelled');
      assert.strictEqual(await within(mine, 5000), 'ok', `round ${round}: the wake-up was lost`);
      assert.deepStrictEqual([waitersForTesting(ta, 0).registry, waitersForTesting().pending], [0, 0]);
    }
  });

  it('(b) wait() whose loop throws in waitContinue leaves no waiter to swallow the next notify', async () => {
    const { wait } = faulty({ waitContinue: overflow });
    for (let round = 0; round < 3; round++) {
      const ta = fresh();
      // Queued, parked for a slice, then the loop throws.
      assert.throws(() => wait(ta, 0, 0), RangeError);
      const before = waitersForTesting(ta, 0).registry;
      const sleeper = start(sleeperSource, { sab: ta.buffer, after: 0 });
      await until(() => waitersForTesting(ta, 0).registry === before + 1, 'the worker to block');
      assert.strictEqual(notify(ta, 0, 1), 1);
      assert.strictEqual(await within(sleeper.next(), 5000), 'ok', `round ${round}: the wake-up was lost`);
      assert.strictEqual(before, 0, 'the abandoned wait left its waiter queued');
      assert.strictEqual(waitersForTesting(ta, 0).registry, 0);
    }
  });

  it('(b) wait() woken, whose loop then throws in waitDone, passes the wake-up on', async () => {
    // Without the waitSeen word, the loop confirms its wake-up by a call.
    const { wait } = faulty({ waitDone: overflow, waitSeen: undefined });
    for (let round = 0; round < 3; round++) {
      const ta = fresh();
      // Behind the main thread: a second sleeper; once both are queued, a
      // notify for one, which takes the main thread's waiter.
      const sleeper = start(sleeperSource, { sab: ta.buffer, after: 1 });
      start(notifierSource, { sab: ta.buffer, after: 2 });
      assert.throws(() => wait(ta, 0, 0), RangeError);
      assert.strictEqual(await within(sleeper.next(), 5000), 'ok', `round ${round}: the wake-up was lost`);
      assert.strictEqual(waitersForTesting(ta, 0).registry, 0);
    }
  });

  it('wait() woken while its env says it is stopping, in a thread that goes on, returns "ok" and passes nothing on', async () => {
    // The binding says OK_STOPPING when N-API refuses to run JS as the wait
    // wakes; should the thread not be terminated after all (the interrupt
    // point returns), the caller still gets "ok", and the wake-up is
    // confirmed: the thread's next wait must not pass it on as unseen.
    const stopping = (code) => (code === 0 ? 4 : code);
    const { wait } = faulty({
      wait: (...args) => stopping(binding.wait(...args)),
      waitContinue: () => stopping(binding.waitContinue()),
    });
    for (let round = 0; round < 3; round++) {
      const ta = fresh();
      start(notifierSource, { sab: ta.buffer, after: 1 });
      assert.strictEqual(wait(ta, 0, 0), 'ok');
      const sleeper = start(sleeperSource, { sab: ta.buffer, after: 0 });
      await until(() => waitersForTesting(ta, 0).registry === 1, 'the sleeper to block');
      // This thread's next wait starts by passing on any wake-up left
      // unseen, in that call: a passed-on wake-up would have taken the
      // sleeper off its queue by the time it returns.
      assert.strictEqual(wait(ta, 1, 0, 0), 'timed-out');
      assert.strictEqual(waitersForTesting(ta, 0).registry, 1, `round ${round}: a seen wake-up was passed on`);
      assert.strictEqual(notify(ta, 0, 1), 1);
      assert.strictEqual(await sleeper.next(), 'ok');
    }
  });

  it('(c) a settle that fails half-way through a chunk passes its wake-ups on', async () => {
    const source = `
      const { workerData, parentPort } = require('worker_threads');
      const { waitAsync } = require(workerData.root);
      const binding = require(workerData.root + '/binding.js');
      const ta = new Int32Array(workerData.sab);
      const results = [waitAsync(ta, 0, 0), waitAsync(ta, 0, 0, 1e7)];
      results.forEach((r, i) => r.value.then((value) => parentPort.postMessage({ i, value })));
      binding.failSettleForTesting();
      parentPort.postMessage('queued');
    `;
    for (let round = 0; round < 3; round++) {
      const ta = fresh();
      const worker = start(source, { sab: ta.buffer });
      assert.strictEqual(await worker.next(), 'queued');
      const mine = [waitAsync(ta, 0, 0).value, waitAsync(ta, 0, 0).value]; // behind the worker's two
      // Both of the worker's waiters, in one chunk, whose settling fails.
      assert.strictEqual(notify(ta, 0, 2), 2);
      assert.deepStrictEqual(
        await within(Promise.all(mine), 5000),
        ['ok', 'ok'],
        `round ${round}: the wake-ups were lost`
      );
      assert.strictEqual(waitersForTesting(ta, 0).registry, 0);
    }
  });
});
