'use strict';
// In worker threads, waitAsync's promises live on the worker's JS heap
// (lib/pending.js) rather than behind N-API deferreds, so that terminate()
// leaves nothing behind (see memory.spec.js). These run the same-thread
// semantics again inside workers, where that path is taken, plus its own
// edges: settling in chunks, slot reuse, a promise that cannot be made.

const assert = require('assert');
const { Worker } = require('worker_threads');
const { root } = require('../helpers');

/**
 * Runs `body` (the source of an async function body) in a fresh worker with
 * `root` as the package path, and resolves with what it returns.
 */
function inWorker(body, options = {}) {
  const source = `
    const { parentPort, workerData } = require('worker_threads');
    (async () => { ${body} })().then(
      (value) => parentPort.postMessage({ value }),
      (error) => parentPort.postMessage({ error: String(error && error.stack || error) })
    );
  `;
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData: { root }, ...options });
    worker.once('message', (message) => {
      worker.terminate();
      if (message.error) reject(new Error(`in the worker: ${message.error}`));
      else resolve(message.value);
    });
    worker.once('error', reject);
  });
}

describe('waitAsync promises in worker threads', function () {
  this.timeout(30000);

  it('are made in JS there (the binding answers with a slot, not a promise)', async () => {
    const kinds = await inWorker(`
      const { waitAsync, notify } = require(workerData.root);
      const binding = require(workerData.root + '/binding');
      const ta = new Int32Array(new SharedArrayBuffer(8));
      const raw = binding.waitAsync(ta, 0, 0, Infinity);
      notify(ta, 0);
      const result = waitAsync(ta, 0, 0);
      notify(ta, 0);
      return [typeof raw, raw < 0, result.async, result.value instanceof Promise, await result.value];
    `);
    assert.deepStrictEqual(kinds, ['number', true, true, true, 'ok']);
  });

  it('settle in FIFO order, across many chunks of outcomes, and the counters return to zero', async () => {
    const r = await inWorker(`
      const { waitAsync, notify, waitersForTesting } = require(workerData.root);
      const ta = new Int32Array(new SharedArrayBuffer(8));
      const order = [];
      const promises = [];
      for (let i = 0; i < 1000; i++) {
        promises.push(waitAsync(ta, 0, 0, i % 2 ? 1e7 : undefined).value.then((v) => { order.push(i); return v; }));
      }
      const before = waitersForTesting();
      const woken = notify(ta, 0);
      const values = await Promise.all(promises);
      return { before, woken, ordered: order.every((v, i) => v === i), count: order.length,
               allOk: values.every((v) => v === 'ok'), after: waitersForTesting() };
    `);
    assert.strictEqual(r.before.registry, 1000);
    assert.strictEqual(r.before.pending, 1000);
    assert.strictEqual(r.woken, 1000);
    assert.strictEqual(r.count, 1000);
    assert.ok(r.ordered, 'settled in FIFO order');
    assert.ok(r.allOk);
    assert.strictEqual(r.after.registry, 0);
    assert.strictEqual(r.after.pending, 0);
  });

  it('timeouts and notifies racing: each promise settles once, counts add up', async () => {
    const r = await inWorker(`
      const { waitAsync, notify, waitersForTesting } = require(workerData.root);
      const ta = new Int32Array(new SharedArrayBuffer(8));
      const settled = new Array(600).fill(0);
      const promises = [];
      for (let i = 0; i < 600; i++) {
        promises.push(waitAsync(ta, 0, 0, 1 + (i % 20)).value.then((v) => { settled[i]++; return v; }));
      }
      let woken = 0;
      for (let k = 0; k < 30; k++) {
        woken += notify(ta, 0, 7);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      const values = await Promise.all(promises);
      return { woken, ok: values.filter((v) => v === 'ok').length,
               timedOut: values.filter((v) => v === 'timed-out').length,
               once: settled.every((n) => n === 1), after: waitersForTesting() };
    `);
    assert.strictEqual(r.ok, r.woken, 'every waiter a notify counted settled "ok"');
    assert.strictEqual(r.ok + r.timedOut, 600);
    assert.ok(r.once, 'each promise settled exactly once');
    assert.strictEqual(r.after.pending, 0);
  });

  it('a freed slot taken by a new waiter gets that waiter\'s outcome, not the old one\'s', async () => {
    const log = await inWorker(`
      const { waitAsync, notify } = require(workerData.root);
      const ta = new Int32Array(new SharedArrayBuffer(8));
      const log = [];
      const track = (name, p) => p.then((v) => log.push(name + ':' + v));
      const a = track('a', waitAsync(ta, 0, 0).value);
      const b = track('b', waitAsync(ta, 0, 0, 1e7).value);
      notify(ta, 0, 1);
      await a;
      const c = track('c', waitAsync(ta, 0, 0, 5).value); // reuses a's slot
      await c;
      const d = track('d', waitAsync(ta, 0, 0).value); // reuses it again
      notify(ta, 0, 1);
      await b;
      notify(ta, 0, 1);
      await d;
      // A burst well past the tables' shrink threshold, then small again.
      const burst = [];
      for (let i = 0; i < 5000; i++) burst.push(waitAsync(ta, 0, 0).value);
      log.push('burst:' + notify(ta, 0));
      await Promise.all(burst);
      const e = track('e', waitAsync(ta, 0, 0).value);
      notify(ta, 0);
      await e;
      return log;
    `);
    assert.deepStrictEqual(log, ['a:ok', 'c:timed-out', 'b:ok', 'd:ok', 'burst:5000', 'e:ok']);
  });

  it('when the promise cannot be made, the waiter is taken back: notify does not count it', async () => {
    // The promise is the intrinsic %Promise% (a replaced global cannot make
    // it fail); what can is running out of stack. So: call waitAsync at
    // every depth on the way back up from a stack overflow, until one call
    // succeeds. The calls before it failed at every point of the way, the
    // promise included (lib/pending.js then cancels the queued waiter);
    // none may leave a waiter behind.
    const r = await inWorker(`
      const { waitAsync, notify, waitersForTesting } = require(workerData.root);
      const ta = new Int32Array(new SharedArrayBuffer(8));
      let result = null;
      let failures = 0;
      function dive() {
        try { dive(); } catch (_) {}
        if (result) return;
        try { result = waitAsync(ta, 0, 0, 1e7); } catch (_) { failures++; }
      }
      dive();
      const after = waitersForTesting();
      const woken = notify(ta, 0);
      const value = await result.value;
      for (let i = 0; i < 2000 && waitersForTesting().timers > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return { failed: failures > 0, after, woken, value, timers: waitersForTesting().timers };
    `);
    assert.deepStrictEqual(r, {
      failed: true,
      after: { registry: 1, pending: 1, timers: r.after.timers, retriers: 0 },
      woken: 1,
      value: 'ok',
      timers: 0,
    });
  });

  it('one table per thread, however many copies of the API (polyfill and package) use it', async () => {
    const r = await inWorker(`
      const pkg = require(workerData.root);
      pkg.install({ force: true });
      const ta = new Int32Array(new SharedArrayBuffer(8));
      const viaPolyfill = Atomics.waitAsync(ta, 0, 0).value;
      const viaPackage = pkg.waitAsync(ta, 0, 0).value;
      const woken = Atomics.notify(ta, 0);
      return [woken, await viaPolyfill, await viaPackage];
    `);
    assert.deepStrictEqual(r, [2, 'ok', 'ok']);
  });

  it('a pending waiter keeps its SharedArrayBuffer alive from the worker\'s heap', async () => {
    const r = await inWorker(`
      const v8 = require('v8');
      const vm = require('vm');
      v8.setFlagsFromString('--expose-gc');
      const gc = vm.runInNewContext('gc');
      const { waitAsync } = require(workerData.root);
      let finalized = false;
      const registry = new FinalizationRegistry(() => (finalized = true));
      let promise;
      (() => {
        const sab = new SharedArrayBuffer(16);
        registry.register(sab, 'sab');
        promise = waitAsync(new Int32Array(sab), 0, 0, 300).value;
      })();
      let collectedWhilePending = false;
      let settled = false;
      promise.then(() => (settled = true));
      while (!settled) {
        gc();
        await new Promise((resolve) => setTimeout(resolve, 10));
        if (finalized && !settled) collectedWhilePending = true;
      }
      for (let i = 0; i < 200 && !finalized; i++) {
        gc();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return { collectedWhilePending, value: await promise, finalizedAfter: finalized };
    `);
    assert.deepStrictEqual(r, { collectedWhilePending: false, value: 'timed-out', finalizedAfter: true });
  });

  it('the binding takes one settle function per thread, and checks it', async function () {
    // Once the polyfill is active in this thread (the forced-polyfill run),
    // every worker it starts loads the package first (lib/workers.js).
    if (process.env.ATOMICS_WAITASYNC_TEST_POLYFILL === 'force') this.skip();
    const r = await inWorker(`
      const binding = require(workerData.root + '/binding');
      const attempt = (...args) => {
        try { binding.setSettler(...args); return 'set'; } catch (e) { return e.constructor.name + ': ' + e.message; }
      };
      return [
        attempt(1, new Uint32Array(256)),
        attempt(() => {}, new Uint32Array(4)),
        attempt(() => {}, new Int32Array(256)),
        attempt(() => {}, new Uint32Array(new SharedArrayBuffer(1024))),
        attempt(() => {}, new Uint32Array(256)),
        attempt(() => {}, new Uint32Array(256)),
      ];
    `, { execArgv: [] }); // not even a -r of the polyfill (the package would register first)
    assert.match(r[0], /^TypeError: settle must be a function/);
    assert.match(r[1], /^RangeError: outcomes must hold at least 256 elements/);
    assert.match(r[2], /^TypeError: expected a Uint32Array/);
    assert.match(r[3], /^TypeError: expected a Uint32Array over an ArrayBuffer/);
    assert.strictEqual(r[4], 'set');
    assert.match(r[5], /^Error: .*already called/);
  });
});
