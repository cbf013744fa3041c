'use strict';
// Latch: a count down to zero, once. Workers block in wait(), the main
// thread awaits waitAsync(); nobody goes on before the count is zero, and
// everyone queued goes on when it is; a wait that times out or aborts leaves
// nothing queued; a waiter that dies leaves the queue.

const assert = require('assert');
const { spawnSync } = require('child_process');
const { Latch, waitersForTesting } = require('../..');
const binding = require('../../binding');
const { root, until, primitiveWorker } = require('../helpers');
const { makeAbortController } = require('../fixtures/async-lock-helpers');

/** A worker running `body(...)` over its own Latch (helpers.js primitiveWorker). */
const worker = (body, workerData) => primitiveWorker([['Latch', 'latch']], body, workerData);

const queued = (latch) => waitersForTesting(latch.i32a, latch.index).registry;

describe('Latch', function () {
  this.timeout(60000);

  it('is made from a count and a fresh buffer, (sab), (sab | int32Array, index); from() attaches without writing; BYTES', () => {
    assert.strictEqual(Latch.BYTES, 4);
    const fresh = new Latch(3);
    assert.strictEqual(fresh.sab.byteLength, 4);
    assert.strictEqual(fresh.count, 3);
    const words = new Int32Array(new SharedArrayBuffer(16));
    const latch = new Latch(5, words, 2);
    assert.deepStrictEqual([latch.i32a, latch.index, words[2]], [words, 2, 5]);
    assert.strictEqual(new Latch(1, words.buffer, 3).index, 3);
    latch.countDown(2);
    const copy = Latch.from({ sab: latch.sab, i32a: latch.i32a, index: latch.index });
    assert.ok(copy instanceof Latch);
    assert.strictEqual(copy.count, 3, 'from() leaves the count as it is');
    assert.strictEqual(Latch.from({ sab: words.buffer, index: 2 }).count, 3);
    assert.strictEqual(new Latch(0).tryWait(), true);
  });

  it('rejects bad arguments with TypeError/RangeError naming them', async () => {
    assert.throws(() => new Latch(), { name: 'TypeError', message: /"count"/ });
    assert.throws(() => new Latch('3'), { name: 'TypeError', message: /"count"/ });
    assert.throws(() => new Latch(-1), { name: 'RangeError', message: /"count"/ });
    assert.throws(() => new Latch(1.5), { name: 'RangeError', message: /"count"/ });
    assert.throws(() => new Latch(2 ** 31), { name: 'RangeError', message: /"count"/ });
    assert.throws(() => new Latch(1, new ArrayBuffer(4)), { name: 'TypeError', message: /"sab"/ });
    assert.throws(() => new Latch(1, new SharedArrayBuffer(8), 2), { name: 'RangeError', message: /"index"/ });
    assert.throws(() => Latch.from(null), { name: 'TypeError', message: /"value"/ });
    const latch = new Latch(2);
    assert.throws(() => latch.countDown('1'), { name: 'TypeError', message: /"n"/ });
    assert.throws(() => latch.countDown(-1), { name: 'RangeError', message: /"n"/ });
    assert.throws(() => latch.countDown(1.5), { name: 'RangeError', message: /"n"/ });
    assert.throws(() => latch.countDown(2 ** 31), { name: 'RangeError', message: /"n"/ });
    assert.throws(() => latch.arriveAndWait('1'), { name: 'TypeError', message: /"n"/ });
    assert.throws(() => latch.wait('1'), { name: 'TypeError', message: /"timeout"/ });
    assert.throws(() => latch.wait(-1), { name: 'RangeError', message: /"timeout"/ });
    assert.throws(() => latch.arriveAndWait(1, -1), { name: 'RangeError', message: /"timeout"/ });
    assert.strictEqual(latch.count, 2, 'arriveAndWait with a bad timeout counted nothing down');
    await assert.rejects(latch.waitAsync(null), { name: 'TypeError', message: /"options"/ });
    await assert.rejects(latch.waitAsync({ timeout: -1 }), { name: 'RangeError', message: /"options.timeout"/ });
    await assert.rejects(latch.waitAsync({ signal: {} }), { name: 'TypeError', message: /"options.signal"/ });
    assert.throws(() => Latch.prototype.countDown.call({}), { name: 'TypeError', message: /"this"/ });
    assert.throws(() => Latch.prototype.wait.call({ i32a: latch.i32a, index: 0 }), { name: 'TypeError', message: /"this"/ });
    await assert.rejects(Latch.prototype.waitAsync.call(null), { name: 'TypeError', message: /"this"/ });
  });

  it('countDown(n) returns the count left; more than is left throws ERR_LATCH_COUNT_EXCEEDED and changes nothing', () => {
    const latch = new Latch(5);
    assert.strictEqual(latch.countDown(), 4);
    assert.strictEqual(latch.countDown(3), 1);
    assert.strictEqual(latch.countDown(0), 1);
    assert.throws(() => latch.countDown(2), { name: 'RangeError', code: 'ERR_LATCH_COUNT_EXCEEDED', message: /"n".*\(1\)/ });
    assert.strictEqual(latch.count, 1);
    assert.strictEqual(latch.tryWait(), false);
    assert.strictEqual(latch.countDown(), 0);
    assert.strictEqual(latch.tryWait(), true);
    assert.throws(() => latch.countDown(), { code: 'ERR_LATCH_COUNT_EXCEEDED', message: /open/ });
    assert.throws(() => latch.arriveAndWait(), { code: 'ERR_LATCH_COUNT_EXCEEDED' });
    assert.strictEqual(latch.count, 0);
  });

  it('count-downs racing from 4 workers past the count: exactly `count` succeed, the rest throw, the count never goes below 0', async () => {
    // 500 rounds: the main thread sets the count to 2 and starts the round;
    // each of 4 workers counts down once at the same moment.
    const rounds = 500;
    const latch = new Latch(0);
    // data[0]: the round; data[1]: count-downs done in it; data[2]: successes; data[3]: other errors.
    const data = new Int32Array(new SharedArrayBuffer(16));
    const workers = [0, 1, 2, 3].map(() =>
      worker(
        `(latch, data, { rounds }) => {
          for (let r = 1; r <= rounds; r++) {
            while (Atomics.load(data, 0) < r) Atomics.wait(data, 0, r - 1);
            try {
              latch.countDown();
              Atomics.add(data, 2, 1);
            } catch (error) {
              if (error.code !== 'ERR_LATCH_COUNT_EXCEEDED') Atomics.add(data, 3, 1);
            }
            Atomics.add(data, 1, 1);
            Atomics.notify(data, 1);
          }
        }`,
        { latch, data: data.buffer, rounds }
      )
    );
    let lowest = 0;
    for (let r = 1; r <= rounds; r++) {
      Atomics.store(data, 1, 0);
      Atomics.store(latch.i32a, latch.index, 2);
      Atomics.store(data, 0, r);
      Atomics.notify(data, 0);
      for (let done = 0; done < 4; done = Atomics.load(data, 1)) Atomics.wait(data, 1, done, 1000);
      lowest = Math.min(lowest, latch.count);
    }
    await Promise.all(workers.map((w) => w.done()));
    assert.strictEqual(lowest, 0, 'the count went below zero');
    assert.strictEqual(Atomics.load(data, 2), 2 * rounds, 'count-downs that succeeded');
    assert.strictEqual(Atomics.load(data, 3), 0);
  });

  it('the count-down that opens the latch wakes its waiters even when its notify fails (a panic in the addon)', async () => {
    const latch = new Latch(1);
    const blocked = worker('(latch, data, wd, port) => port.postMessage(latch.wait())', { latch });
    const answer = new Promise((resolve) => blocked.once('message', resolve));
    await until(() => queued(latch) === 1, 'the worker to wait');
    // lib/atomics.js's notify tries the binding twice before it throws.
    binding.panicForTesting('notify', 2);
    assert.strictEqual(latch.countDown(), 0, 'returns as usual');
    assert.strictEqual(await answer, true);
    await blocked.done();
    assert.strictEqual(queued(latch), 0);
  });

  it('blocked workers and the main thread\'s waitAsync all go on when the count reaches zero, none before', async () => {
    const latch = new Latch(3);
    // data[0]: waiters that returned; data[1 + i]: the count waiter i saw on return.
    const data = new Int32Array(new SharedArrayBuffer(32));
    const waiters = [0, 1].map((i) =>
      worker(
        `(latch, data, { i }) => {
          const ok = latch.wait();
          data[1 + i] = ok ? latch.count : -1;
          Atomics.add(data, 0, 1);
        }`,
        { latch, data: data.buffer, i }
      )
    );
    let resolved = false;
    const mine = latch.waitAsync().then((ok) => {
      resolved = true;
      return ok;
    });
    await until(() => queued(latch) === 3, 'two workers and the main thread to queue');
    // Two count-downs from workers, the last from the main thread.
    const counters = [0, 1].map(() => worker('(latch) => latch.countDown()', { latch }));
    await Promise.all(counters.map((w) => w.done()));
    assert.strictEqual(latch.count, 1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.strictEqual(Atomics.load(data, 0), 0, 'no worker went on above zero');
    assert.strictEqual(resolved, false, 'the main thread did not go on above zero');
    assert.strictEqual(queued(latch), 3, 'everyone still queued');
    assert.strictEqual(latch.countDown(), 0);
    assert.strictEqual(await mine, true);
    await Promise.all(waiters.map((w) => w.done()));
    assert.deepStrictEqual(Array.from(data.subarray(0, 3)), [2, 0, 0]);
    assert.strictEqual(queued(latch), 0);
    assert.strictEqual(await latch.waitAsync(), true, 'an open latch resolves at once');
    assert.strictEqual(latch.wait(0), true);
  });

  it('a wait that times out returns (resolves) false and leaves nothing queued', async () => {
    const latch = new Latch(1);
    assert.strictEqual(latch.wait(0), false);
    assert.strictEqual(latch.wait(5), false);
    assert.strictEqual(await latch.waitAsync({ timeout: 0 }), false);
    assert.strictEqual(await latch.waitAsync({ timeout: 5 }), false);
    assert.strictEqual(queued(latch), 0);
    const w = worker('(latch, data, wd, port) => port.postMessage(latch.wait(20))', { latch });
    const answer = await new Promise((resolve) => w.once('message', resolve));
    assert.strictEqual(answer, false);
    await w.done();
    assert.strictEqual(queued(latch), 0);
    assert.strictEqual(latch.count, 1);
  });

  it('an abort rejects with its reason and leaves nothing queued; other waiters stay queued; an aborted signal rejects at once', async () => {
    const latch = new Latch(1);
    const aborted = makeAbortController();
    aborted.abort();
    await assert.rejects(latch.waitAsync({ signal: aborted.signal }), { name: 'AbortError' });
    assert.strictEqual(queued(latch), 0);
    const controller = makeAbortController();
    const other = latch.waitAsync();
    const mine = latch.waitAsync({ signal: controller.signal });
    await until(() => queued(latch) === 2, 'both to queue');
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(mine, (error) => error === reason);
    // The abort flushes every waiter of the slot; the other one looks again and re-queues.
    await until(() => queued(latch) === 1, 'the other waiter to stay queued');
    latch.countDown();
    assert.strictEqual(await other, true);
    assert.strictEqual(queued(latch), 0);
  });

  it('an abort that comes once the count is 0 changes nothing: the wait resolves true', async () => {
    const latch = new Latch(1);
    const controller = makeAbortController();
    const mine = latch.waitAsync({ signal: controller.signal });
    await until(() => queued(latch) === 1, 'the waiter to queue');
    latch.countDown();
    controller.abort(new Error('too late'));
    assert.strictEqual(await mine, true);
    assert.strictEqual(queued(latch), 0);
  });

  it('a waiter whose worker is terminated leaves the queue; the latch still opens for the others', async () => {
    const latch = new Latch(1);
    const dying = worker('(latch) => latch.wait()', { latch });
    const mine = latch.waitAsync();
    await until(() => queued(latch) === 2, 'both to queue');
    await dying.terminate();
    await until(() => queued(latch) === 1, 'the terminated waiter to leave');
    latch.countDown();
    assert.strictEqual(await mine, true);
    assert.strictEqual(queued(latch), 0);
  });

  it('a worker stopped right after the count-down that reached zero, before its notify, still wakes the waiters', async () => {
    // The worker's compareExchange to 0 blocks once done (patched here to
    // stand for the moment the thread is stopped at); then it is terminated.
    const latch = new Latch(1);
    const w = worker(
      `(latch, data, wd, port) => {
        const cas = Atomics.compareExchange;
        Atomics.compareExchange = (array, index, expected, replacement) => {
          const was = cas(array, index, expected, replacement);
          if (array === latch.i32a && index === latch.index && was === expected && replacement === 0) {
            port.postMessage('stopped');
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
          }
          return was;
        };
        latch.countDown();
      }`,
      { latch }
    );
    const controller = makeAbortController();
    const mine = latch.waitAsync({ signal: controller.signal });
    await until(() => queued(latch) === 1, 'the main thread to wait');
    const stopped = new Promise((resolve) => w.once('message', resolve));
    assert.strictEqual(await stopped, 'stopped');
    assert.strictEqual(latch.count, 0);
    assert.strictEqual(queued(latch), 1, 'its waiter not woken yet');
    await w.terminate();
    // A bound on the wait, so that the test fails rather than hangs (an
    // abort once the count is 0 resolves true: the flag tells).
    let gaveUp = false;
    const bound = setTimeout(() => {
      gaveUp = true;
      controller.abort(new Error('the waiter was never woken'));
    }, 10000);
    assert.strictEqual(await mine, true);
    clearTimeout(bound);
    assert.strictEqual(gaveUp, false, 'the waiter was never woken by the teardown');
    assert.strictEqual(queued(latch), 0);
  });

  it('arriveAndWait counts down and waits: N workers meet, none going on before the last arrived', async () => {
    const n = 4;
    const latch = new Latch(n);
    const data = new Int32Array(new SharedArrayBuffer(4 * (n + 1)));
    const workers = [];
    for (let i = 0; i < n; i++) {
      workers.push(
        // data[n]: arrivals, counted before each count-down: all n by the time anyone goes on.
        worker('(latch, data, { i, n }) => { Atomics.add(data, n, 1); data[i] = latch.arriveAndWait() ? Atomics.load(data, n) : -1; }', {
          latch,
          data: data.buffer,
          i,
          n,
        })
      );
    }
    await Promise.all(workers.map((w) => w.done()));
    assert.deepStrictEqual(Array.from(data.subarray(0, n)), [n, n, n, n]);
  });

  it('under load, every latch of a run of 2,000 (10^6 count-downs) opens only at zero, for 4 workers and the main thread', async () => {
    // Round r uses latch r % 2 (reset by the main thread before it is used
    // again): each of 4 workers counts it down 125 times and waits; the main
    // thread awaits it. Everyone checks the count they saw was zero and
    // that every count-down of the round came first (data[2 + r % 2]).
    const rounds = 2000;
    const per = 125;
    const workersN = 4;
    const sab = new SharedArrayBuffer(64);
    const words = new Int32Array(sab);
    // words[0..1]: the two latches; words[2..3]: count-downs done in the
    // round; words[4]: the round; words[5]: errors; words[6]: workers done with the round.
    const latches = [new Latch(workersN * per, words, 0), new Latch(workersN * per, words, 1)];
    const body = `(latch, data, { rounds, per, workersN }) => {
      const { Latch } = require(${JSON.stringify(root)});
      const latches = [Latch.from({ i32a: data, index: 0 }), Latch.from({ i32a: data, index: 1 })];
      for (let r = 0; r < rounds; r++) {
        const l = latches[r % 2];
        while (Atomics.load(data, 4) < r) Atomics.wait(data, 4, Atomics.load(data, 4), 50);
        for (let k = 0; k < per; k++) { Atomics.add(data, 2 + (r % 2), 1); l.countDown(); }
        if (!l.wait() || l.count !== 0 || Atomics.load(data, 2 + (r % 2)) !== per * workersN) Atomics.add(data, 5, 1);
        Atomics.add(data, 6, 1);
        Atomics.notify(data, 6);
      }
    }`;
    const workers = [];
    for (let i = 0; i < workersN; i++) workers.push(worker(body, { latch: latches[0], data: sab, rounds, per, workersN }));
    for (let r = 0; r < rounds; r++) {
      const l = latches[r % 2];
      const ok = await l.waitAsync();
      if (!ok || l.count !== 0 || Atomics.load(words, 2 + (r % 2)) !== per * workersN) Atomics.add(words, 5, 1);
      // Every worker is past this round's wait before its latch is reused.
      await until(() => Atomics.load(words, 6) === (r + 1) * workersN, `the workers to finish round ${r}`);
      Atomics.store(words, 2 + (r % 2), 0);
      Atomics.store(words, r % 2, workersN * per);
      Atomics.store(words, 4, r + 1);
      Atomics.notify(words, 4);
    }
    await Promise.all(workers.map((w) => w.done()));
    assert.strictEqual(Atomics.load(words, 5), 0, 'a waiter went on before its latch reached zero');
    assert.strictEqual(Atomics.load(words, 6), rounds * workersN);
  });

  it('a pending waitAsync keeps the process alive until the latch opens; unref() lets it exit', () => {
    const script = (unref) => `
      const { Worker } = require('worker_threads');
      const { Latch, unref } = require(${JSON.stringify(root)});
      const latch = new Latch(1);
      ${unref ? 'unref();' : ''}
      // The worker (unref'd: it does not keep the process alive) counts down
      // after a while.
      const w = new Worker('const { workerData } = require("worker_threads");' +
        'const { Latch } = require(workerData.root);' +
        'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);' +
        'Latch.from(workerData.latch).countDown();', { eval: true, workerData: { root: ${JSON.stringify(root)}, latch } });
      w.unref();
      latch.waitAsync().then((ok) => console.log('opened ' + ok));
    `;
    const alive = spawnSync(process.execPath, ['-e', script(false)], { encoding: 'utf8', timeout: 20000 });
    assert.strictEqual(alive.status, 0, alive.stderr);
    assert.strictEqual(alive.stdout.trim(), 'opened true');
    const unrefd = spawnSync(process.execPath, ['-e', script(true)], { encoding: 'utf8', timeout: 20000 });
    assert.strictEqual(unrefd.status, 0, unrefd.stderr);
    assert.strictEqual(unrefd.stdout.trim(), '', 'exited without waiting for the latch');
  });
});
