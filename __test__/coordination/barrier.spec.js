'use strict';
// Barrier: N parties meet, then all go on, generation after generation;
// workers block, the main thread awaits. Every generation releases exactly
// its N parties; a party that times out, aborts or ends while it waits
// breaks the generation for all (ERR_BARRIER_BROKEN) until reset().

const assert = require('assert');
const { spawnSync } = require('child_process');
const { Barrier, waitersForTesting } = require('../..');
const { root, until, primitiveWorker } = require('../helpers');
const { makeAbortController } = require('../fixtures/async-lock-helpers');

/** A worker running `body(...)` over its own Barrier (helpers.js primitiveWorker). */
const worker = (body, workerData) => primitiveWorker([['Barrier', 'barrier']], body, workerData);

const queued = (barrier) => waitersForTesting(barrier.i32a, barrier.index).registry;

/** A worker that arrives once (blocking) and posts the outcome: the arrival index or the error code. */
const arriveOnce = (timeout) => `(barrier, data, wd, port) => {
  try {
    port.postMessage(barrier.arriveAndWait(${timeout === undefined ? '' : timeout}));
  } catch (error) {
    port.postMessage(error.code || String(error));
  }
}`;

describe('Barrier', function () {
  this.timeout(60000);

  it('is made from parties and a fresh buffer, (sab), (sab | int32Array, index); from() attaches without writing; BYTES', () => {
    assert.strictEqual(Barrier.BYTES, 12);
    const fresh = new Barrier(3);
    assert.strictEqual(fresh.sab.byteLength, 12);
    assert.deepStrictEqual([fresh.parties, fresh.waiting, fresh.broken], [3, 0, false]);
    const words = new Int32Array(new SharedArrayBuffer(32));
    const barrier = new Barrier(2, words, 4);
    assert.deepStrictEqual([barrier.i32a, barrier.index, words[6]], [words, 4, 2]);
    const copy = Barrier.from({ sab: barrier.sab, i32a: barrier.i32a, index: barrier.index });
    assert.ok(copy instanceof Barrier);
    assert.strictEqual(copy.parties, 2);
    assert.strictEqual(new Barrier(1).arriveAndWait(), 0, 'a barrier of one never waits');
  });

  it('rejects bad arguments with TypeError/RangeError naming them', async () => {
    assert.throws(() => new Barrier(), { name: 'TypeError', message: /"parties"/ });
    assert.throws(() => new Barrier(0), { name: 'RangeError', message: /"parties"/ });
    assert.throws(() => new Barrier(32768), { name: 'RangeError', message: /"parties"/ });
    assert.throws(() => new Barrier(2, new SharedArrayBuffer(8)), { name: 'RangeError', message: /"sab"/ });
    assert.throws(() => new Barrier(2, new SharedArrayBuffer(16), 2), { name: 'RangeError', message: /"index"/ });
    const barrier = new Barrier(2);
    assert.throws(() => barrier.arriveAndWait(-1), { name: 'RangeError', message: /"timeout"/ });
    await assert.rejects(barrier.arriveAndWaitAsync({ timeout: 'x' }), { name: 'TypeError', message: /"options.timeout"/ });
    await assert.rejects(barrier.arriveAndWaitAsync({ signal: 1 }), { name: 'TypeError', message: /"options.signal"/ });
    assert.throws(() => Barrier.prototype.arriveAndWait.call({}), { name: 'TypeError', message: /"this" value must be a Barrier/ });
    await assert.rejects(Barrier.prototype.arriveAndWaitAsync.call(null), { name: 'TypeError', message: /"this"/ });
    assert.deepStrictEqual([barrier.waiting, barrier.broken], [0, false], 'no bad call arrived');
  });

  it('a blocked worker and the main thread meet; the last to arrive opens it; arrival indexes are 0 .. parties - 1', async () => {
    const barrier = new Barrier(3);
    const a = worker(arriveOnce(), { barrier });
    const b = worker(arriveOnce(), { barrier });
    await until(() => queued(barrier) === 2, 'both workers to wait');
    assert.strictEqual(barrier.waiting, 2);
    assert.strictEqual(await barrier.arriveAndWaitAsync(), 2, 'the last arrival');
    const indexes = [await a.next(), await b.next()].sort();
    assert.deepStrictEqual(indexes, [0, 1]);
    await Promise.all([a.done(), b.done()]);
    assert.deepStrictEqual([barrier.waiting, barrier.broken, queued(barrier)], [0, false, 0]);
  });

  it('1,000 generations of 4 blocking workers and the async main thread: each releases exactly its 5 parties', async () => {
    // At generation g every party adds 1 to data[g % 3] before it arrives
    // and checks, once through, that all 5 did. The last arrival of g
    // clears data[(g + 2) % 3] for generation g + 2: every check of it (at
    // g - 1) came before its party arrived at g, and no add to it comes
    // before everyone passed g + 1.
    const generations = 1000;
    const data = new Int32Array(new SharedArrayBuffer(16)); // [0..2]: arrivals; [3]: bad counts
    const barrier = new Barrier(5);
    const body = `(barrier, data, { generations }) => {
      for (let g = 0; g < generations; g++) {
        Atomics.add(data, g % 3, 1);
        const arrival = barrier.arriveAndWait();
        if (Atomics.load(data, g % 3) !== 5) Atomics.add(data, 3, 1);
        if (arrival === 4) Atomics.store(data, (g + 2) % 3, 0);
      }
    }`;
    const workers = [0, 1, 2, 3].map(() => worker(body, { barrier, data: data.buffer, generations }));
    for (let g = 0; g < generations; g++) {
      Atomics.add(data, g % 3, 1);
      const arrival = await barrier.arriveAndWaitAsync();
      if (Atomics.load(data, g % 3) !== 5) Atomics.add(data, 3, 1);
      if (arrival === 4) Atomics.store(data, (g + 2) % 3, 0);
    }
    await Promise.all(workers.map((w) => w.done()));
    assert.strictEqual(Atomics.load(data, 3), 0, 'a generation released a party before all 5 arrived');
    assert.deepStrictEqual([barrier.waiting, barrier.broken, queued(barrier)], [0, false, 0]);
  });

  it('a party that times out gets ERR_BARRIER_TIMEOUT and breaks the generation: the others get ERR_BARRIER_BROKEN, later arrivals too, until reset()', async () => {
    const barrier = new Barrier(3);
    const other = worker(arriveOnce(), { barrier });
    await until(() => barrier.waiting === 1, 'the worker to arrive');
    assert.throws(() => barrier.arriveAndWait(20), { code: 'ERR_BARRIER_TIMEOUT' });
    assert.strictEqual(await other.next(), 'ERR_BARRIER_BROKEN');
    assert.strictEqual(barrier.broken, true);
    assert.throws(() => barrier.arriveAndWait(), { code: 'ERR_BARRIER_BROKEN' });
    await assert.rejects(barrier.arriveAndWaitAsync({ timeout: 5 }), { code: 'ERR_BARRIER_BROKEN' });
    await assert.rejects(new Barrier(2).arriveAndWaitAsync({ timeout: 5 }), { code: 'ERR_BARRIER_TIMEOUT' });
    barrier.reset();
    assert.deepStrictEqual([barrier.broken, barrier.waiting], [false, 0]);
    const again = [worker(arriveOnce(), { barrier }), worker(arriveOnce(), { barrier })];
    const mine = await barrier.arriveAndWaitAsync();
    const theirs = await Promise.all(again.map((w) => w.next()));
    assert.deepStrictEqual([mine].concat(theirs).sort(), [0, 1, 2], 'a fresh generation after reset()');
  });

  it('an abort rejects with its reason and breaks the generation for the others; an aborted signal arrives not at all', async () => {
    const barrier = new Barrier(3);
    const aborted = makeAbortController();
    aborted.abort();
    await assert.rejects(barrier.arriveAndWaitAsync({ signal: aborted.signal }), { name: 'AbortError' });
    assert.deepStrictEqual([barrier.waiting, barrier.broken], [0, false], 'it did not arrive');
    const other = worker(arriveOnce(), { barrier });
    await until(() => barrier.waiting === 1, 'the worker to arrive');
    const controller = makeAbortController();
    const mine = barrier.arriveAndWaitAsync({ signal: controller.signal });
    await until(() => queued(barrier) === 2, 'both to wait');
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(mine, (error) => error === reason);
    assert.strictEqual(await other.next(), 'ERR_BARRIER_BROKEN');
    await other.done();
    assert.strictEqual(queued(barrier), 0);
  });

  it('a party whose worker is terminated while it waits breaks the generation: the others get ERR_BARRIER_BROKEN', async () => {
    const barrier = new Barrier(3);
    const dying = worker(arriveOnce(), { barrier });
    await until(() => barrier.waiting === 1, 'the worker to arrive');
    // (Its outcome taken at once: it may reject before terminate() resolves.)
    const mine = barrier.arriveAndWaitAsync().then(() => 'passed', (error) => error.code);
    await until(() => queued(barrier) === 2, 'both to wait');
    await dying.terminate();
    assert.strictEqual(await mine, 'ERR_BARRIER_BROKEN');
    assert.strictEqual(barrier.broken, true);
    assert.strictEqual(queued(barrier), 0);
  });

  /**
   * A worker whose Atomics.compareExchange on the barrier's state blocks
   * (standing for the moment a thread is stopped at) once it made a change
   * `stopAt` (a function's source: (expected, replacement) => boolean)
   * picks, posting 'stopped' first; then runs `action` (a function's source).
   */
  function stoppingWorker(barrier, stopAt, action) {
    return worker(
      `(barrier, data, wd, port) => {
        const cas = Atomics.compareExchange;
        const stopAt = ${stopAt};
        Atomics.compareExchange = (array, index, expected, replacement) => {
          const was = cas(array, index, expected, replacement);
          if (array === barrier.i32a && index === barrier.index && was === expected && stopAt(expected, replacement)) {
            port.postMessage('stopped');
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
          }
          return was;
        };
        try {
          (${action})(barrier);
        } catch (error) {
          port.postMessage(error.code || String(error));
        }
      }`,
      { barrier }
    );
  }

  it('a worker stopped right after the arrival that completed a generation, before its notify, still wakes the parties', async () => {
    const barrier = new Barrier(2);
    let outcome = null;
    const mine = barrier.arriveAndWaitAsync().then((arrival) => (outcome = arrival), (error) => (outcome = error.code));
    await until(() => queued(barrier) === 1, 'the main thread to wait');
    const last = stoppingWorker(barrier, '(expected, replacement) => replacement >>> 17 !== expected >>> 17', '(b) => b.arriveAndWait()');
    assert.strictEqual(await last.next(), 'stopped');
    assert.deepStrictEqual([outcome, queued(barrier)], [null, 1], 'not woken yet');
    await last.terminate();
    await until(() => outcome !== null, 'the teardown to wake the party');
    await mine;
    assert.deepStrictEqual([outcome, barrier.broken, queued(barrier)], [0, false, 0]);
  });

  it('a break stopped between its CAS and its notify still wakes the other parties, told broken', async () => {
    const barrier = new Barrier(3);
    let outcome = null;
    const mine = barrier.arriveAndWaitAsync().then((arrival) => (outcome = arrival), (error) => (outcome = error.code));
    await until(() => queued(barrier) === 1, 'the main thread to wait');
    const quitter = stoppingWorker(barrier, '(expected, replacement) => (replacement & 65536) !== 0 && (expected & 65536) === 0', '(b) => b.arriveAndWait(20)');
    assert.strictEqual(await quitter.next(), 'stopped');
    assert.deepStrictEqual([barrier.broken, outcome], [true, null], 'broken, its parties not woken yet');
    await quitter.terminate();
    await until(() => outcome !== null, 'the teardown to wake the party');
    await mine;
    assert.deepStrictEqual([outcome, queued(barrier)], ['ERR_BARRIER_BROKEN', 0]);
  });

  it('a break stopped between its CAS and its notify, and a reset() meanwhile: the other party is told broken, never passed, and woken', async () => {
    // Worker A waits; worker B times out and is stopped right after it set
    // BROKEN; the main thread resets (and so moves the barrier on) before
    // B's teardown wakes A.
    const barrier = new Barrier(3);
    const a = worker(arriveOnce(), { barrier });
    await until(() => barrier.waiting === 1, 'worker A to arrive');
    const b = stoppingWorker(barrier, '(expected, replacement) => (replacement & 65536) !== 0 && (expected & 65536) === 0', '(b) => b.arriveAndWait(20)');
    assert.strictEqual(await b.next(), 'stopped');
    assert.strictEqual(barrier.broken, true);
    barrier.reset();
    assert.deepStrictEqual([barrier.broken, barrier.waiting], [false, 0]);
    await b.terminate();
    assert.strictEqual(await a.next(), 'ERR_BARRIER_BROKEN');
    await a.done();
    assert.strictEqual(queued(barrier), 0);
  });

  it('a party whose wait throws (here Atomics.load, standing in for the stack limit) breaks the generation for the others', async () => {
    const barrier = new Barrier(3);
    let outcome = null;
    const mine = barrier.arriveAndWaitAsync().then((arrival) => (outcome = arrival), (error) => (outcome = error.code));
    await until(() => queued(barrier) === 1, 'the main thread to wait');
    const w = worker(
      `(barrier, data, wd, port) => {
        // The first Atomics.load after this party's arrival (a
        // compareExchange that took) throws, once: the wait's first look.
        const { compareExchange, load } = Atomics;
        let arrived = false;
        Atomics.compareExchange = function (typedArray, index, expected, replacement) {
          const was = compareExchange(typedArray, index, expected, replacement);
          if (was === expected) arrived = true;
          return was;
        };
        Atomics.load = function (typedArray, index) {
          if (!arrived) return load(typedArray, index);
          Object.assign(Atomics, { compareExchange, load });
          throw new RangeError('stand-in');
        };
        try {
          barrier.arriveAndWait(1000);
        } catch (error) {
          port.postMessage(error.message);
        }
      }`,
      { barrier }
    );
    assert.strictEqual(await w.next(), 'stand-in');
    await until(() => outcome !== null, 'the other party to be told');
    await mine;
    assert.deepStrictEqual([outcome, barrier.broken, barrier.waiting], ['ERR_BARRIER_BROKEN', true, 2]);
  });

  it('reset() breaks the waiting generation for its parties and starts a fresh one', async () => {
    const barrier = new Barrier(2);
    const waiter = worker(arriveOnce(), { barrier });
    await until(() => barrier.waiting === 1, 'the worker to arrive');
    barrier.reset();
    assert.strictEqual(await waiter.next(), 'ERR_BARRIER_BROKEN');
    assert.deepStrictEqual([barrier.broken, barrier.waiting], [false, 0]);
    const next = worker(arriveOnce(), { barrier });
    const mine = await barrier.arriveAndWaitAsync();
    assert.deepStrictEqual([mine, await next.next()].sort(), [0, 1], 'a fresh generation');
  });

  it('a pending arriveAndWaitAsync keeps the process alive until the generation completes; unref() lets it exit', () => {
    const script = (unref) => `
      const { Worker } = require('worker_threads');
      const { Barrier, unref } = require(${JSON.stringify(root)});
      const barrier = new Barrier(2);
      ${unref ? 'unref();' : ''}
      // The worker (unref'd: it does not keep the process alive) arrives
      // after a while.
      const w = new Worker('const { workerData } = require("worker_threads");' +
        'const { Barrier } = require(workerData.root);' +
        'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);' +
        'Barrier.from(workerData.barrier).arriveAndWait();', { eval: true, workerData: { root: ${JSON.stringify(root)}, barrier } });
      w.unref();
      barrier.arriveAndWaitAsync().then(() => console.log('passed'));
    `;
    const alive = spawnSync(process.execPath, ['-e', script(false)], { encoding: 'utf8', timeout: 20000 });
    assert.strictEqual(alive.status, 0, alive.stderr);
    assert.strictEqual(alive.stdout.trim(), 'passed');
    const unrefd = spawnSync(process.execPath, ['-e', script(true)], { encoding: 'utf8', timeout: 20000 });
    assert.strictEqual(unrefd.status, 0, unrefd.stderr);
    assert.strictEqual(unrefd.stdout.trim(), '', 'exited without waiting for the generation');
  });
});
