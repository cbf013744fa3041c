'use strict';
// Semaphore: permits taken and given back n at a time by workers (blocking)
// and the main thread (async); never more held than there are; timeouts and
// aborts leave nothing queued and nothing taken; the permits a thread holds
// when it ends, however it ends, come back to the waiters.

const assert = require('assert');
const { spawnSync } = require('child_process');
const { Semaphore, waitersForTesting } = require('../..');
const { root, until, primitiveWorker, nearTheLimit, droppedHoldsGrowth } = require('../helpers');
const { makeAbortController } = require('../fixtures/async-lock-helpers');

/** A worker running `body(...)` over its own Semaphore (helpers.js primitiveWorker). */
const worker = (body, workerData, options) => primitiveWorker([['Semaphore', 'semaphore']], body, workerData, options);

const queued = (semaphore) => waitersForTesting(semaphore.i32a, semaphore.index).registry;
/** The `waiters` word: threads between announcing a wait and leaving it. */
const announced = (semaphore) => Atomics.load(semaphore.i32a, semaphore.index + 1);

describe('Semaphore', function () {
  this.timeout(60000);

  it('is made from permits and a fresh buffer, (sab), (sab | int32Array, index); from() attaches without writing; BYTES', () => {
    assert.strictEqual(Semaphore.BYTES, 12);
    const fresh = new Semaphore(3);
    assert.strictEqual(fresh.sab.byteLength, 12);
    assert.deepStrictEqual([fresh.available, fresh.permits, fresh.held], [3, 3, 0]);
    const words = new Int32Array(new SharedArrayBuffer(32));
    const semaphore = new Semaphore(5, words, 4);
    assert.deepStrictEqual([semaphore.i32a, semaphore.index], [words, 4]);
    assert.deepStrictEqual(Array.from(words.subarray(4, 7)), [5, 0, 5]);
    assert.strictEqual(new Semaphore(1, new SharedArrayBuffer(32), 5).index, 5);
    assert.throws(() => new Semaphore(1, words, 6), { name: 'RangeError', message: /"index".* 0 to 5/ });
    assert.throws(() => new Semaphore(1, new SharedArrayBuffer(8)), { name: 'RangeError', message: /"sab".*3 Int32s/ });
    semaphore.tryAcquire(2);
    const copy = Semaphore.from({ sab: semaphore.sab, i32a: semaphore.i32a, index: semaphore.index });
    assert.ok(copy instanceof Semaphore);
    assert.deepStrictEqual([copy.available, copy.permits, copy.held], [3, 5, 0], 'from() writes nothing and holds nothing');
    semaphore.release(2);
  });

  it('rejects bad arguments with TypeError/RangeError naming them', async () => {
    assert.throws(() => new Semaphore(), { name: 'TypeError', message: /"permits"/ });
    assert.throws(() => new Semaphore(-1), { name: 'RangeError', message: /"permits"/ });
    assert.throws(() => new Semaphore(1.5), { name: 'RangeError', message: /"permits"/ });
    assert.throws(() => new Semaphore(1, new ArrayBuffer(12)), { name: 'TypeError', message: /"sab"/ });
    assert.throws(() => Semaphore.from(7), { name: 'TypeError', message: /"value"/ });
    const semaphore = new Semaphore(2);
    for (const call of [(n) => semaphore.tryAcquire(n), (n) => semaphore.acquireSync(n), (n) => semaphore.release(n), (n) => semaphore.acquireGuard(n)]) {
      assert.throws(() => call('1'), { name: 'TypeError', message: /"n"/ });
      assert.throws(() => call(-1), { name: 'RangeError', message: /"n"/ });
      assert.throws(() => call(3), { name: 'RangeError', message: /"n" argument must be at most the semaphore's permits \(2\)/ });
    }
    assert.throws(() => semaphore.acquireSync(1, -1), { name: 'RangeError', message: /"timeout"/ });
    const none = new Semaphore(0);
    assert.throws(() => none.acquireSync(), { name: 'RangeError', message: /"n" argument \(default 1\) must be at most the semaphore's permits \(0\)/ });
    await assert.rejects(none.acquire(), { name: 'RangeError', message: /"n"/ });
    await assert.rejects(semaphore.acquire(3), { name: 'RangeError', message: /"n"/ });
    await assert.rejects(semaphore.acquire(1, null), { name: 'TypeError', message: /"options"/ });
    await assert.rejects(semaphore.acquire(1, { timeout: 'x' }), { name: 'TypeError', message: /"options.timeout"/ });
    await assert.rejects(semaphore.acquire(1, { signal: {} }), { name: 'TypeError', message: /"options.signal"/ });
    await assert.rejects(semaphore.runExclusive(42), { name: 'TypeError', message: /"f"/ });
    const badThis = { name: 'TypeError', message: /"this" value must be a Semaphore/ };
    for (const impostor of [null, {}, { sab: semaphore.sab, i32a: semaphore.i32a, index: 0 }, new Proxy(semaphore, {})]) {
      assert.throws(() => Semaphore.prototype.tryAcquire.call(impostor), badThis);
      assert.throws(() => Semaphore.prototype.release.call(impostor), badThis);
      await assert.rejects(Semaphore.prototype.acquire.call(impostor), badThis);
    }
    assert.deepStrictEqual([semaphore.available, announced(semaphore), queued(semaphore)], [2, 0, 0], 'nothing taken or queued');
  });

  it('tryAcquire takes n only if n are free; release gives back only what the instance holds (ERR_SEMAPHORE_NOT_HELD)', () => {
    const s = new Semaphore(3, new SharedArrayBuffer(12));
    assert.strictEqual(s.tryAcquire(0), true);
    const t = Semaphore.from(s);
    assert.strictEqual(s.tryAcquire(2), true);
    assert.strictEqual(t.tryAcquire(2), false);
    assert.strictEqual(t.tryAcquire(1), true);
    assert.deepStrictEqual([s.available, s.held, t.held], [0, 2, 1]);
    assert.throws(() => t.release(2), { code: 'ERR_SEMAPHORE_NOT_HELD', message: /release 2 .* holds 1/ });
    assert.throws(() => s.release(3), { code: 'ERR_SEMAPHORE_NOT_HELD' });
    assert.throws(() => s.release(4), { name: 'RangeError', message: /"n"/ });
    assert.deepStrictEqual([s.available, s.held, t.held], [0, 2, 1], 'a refused release changed nothing');
    s.release();
    t.release();
    s.release();
    assert.deepStrictEqual([s.available, s.held, t.held], [3, 0, 0]);
  });

  it('release functions give back their permits once, also through Symbol.dispose; acquireGuard throws ERR_SEMAPHORE_TIMEOUT', async () => {
    const semaphore = new Semaphore(3);
    const release = await semaphore.acquire(2);
    assert.strictEqual(release.permits, 2);
    assert.strictEqual(release.then, undefined);
    assert.strictEqual(semaphore.available, 1);
    release();
    release();
    assert.strictEqual(semaphore.available, 3);
    const guard = semaphore.acquireGuard(3, 0);
    assert.throws(() => semaphore.acquireGuard(1, 0), { code: 'ERR_SEMAPHORE_TIMEOUT' });
    if (Symbol.dispose) guard[Symbol.dispose]();
    else guard();
    assert.strictEqual(semaphore.available, 3);
    assert.strictEqual(await semaphore.runExclusive(() => semaphore.available, 2), 1);
    await assert.rejects(
      semaphore.runExclusive(async () => {
        throw new Error('f');
      }, 3),
      { message: 'f' }
    );
    assert.deepStrictEqual([semaphore.available, semaphore.held], [3, 0], 'given back however f ended');
  });

  it('a blocked worker and the main thread\'s acquire get their permits when a holder releases them', async () => {
    const semaphore = new Semaphore(2);
    assert.strictEqual(semaphore.tryAcquire(2), true);
    const w = worker('(semaphore, data, wd, port) => { port.postMessage(semaphore.acquireSync(1)); semaphore.release(1); }', { semaphore });
    const mine = semaphore.acquire(1);
    await until(() => queued(semaphore) === 2, 'the worker and the main thread to wait');
    semaphore.release(1);
    semaphore.release(1);
    assert.strictEqual(await w.next(), true);
    await w.done();
    const release = await mine;
    release();
    assert.deepStrictEqual([semaphore.available, announced(semaphore), queued(semaphore)], [2, 0, 0]);
  });

  it('a wait that times out returns false (rejects ERR_SEMAPHORE_TIMEOUT) and leaves nothing queued or taken', async () => {
    const semaphore = new Semaphore(2);
    semaphore.tryAcquire(2);
    assert.strictEqual(semaphore.acquireSync(1, 0), false);
    assert.strictEqual(semaphore.acquireSync(1, 5), false);
    await assert.rejects(semaphore.acquire(1, { timeout: 0 }), { code: 'ERR_SEMAPHORE_TIMEOUT' });
    await assert.rejects(semaphore.acquire(2, { timeout: 5 }), { code: 'ERR_SEMAPHORE_TIMEOUT', message: /5 ms/ });
    assert.deepStrictEqual([semaphore.available, semaphore.held, announced(semaphore), queued(semaphore)], [0, 2, 0, 0]);
    semaphore.release(2);
  });

  it('an abort rejects with its reason, leaving nothing queued or taken; the other waiters still get theirs', async () => {
    const semaphore = new Semaphore(1);
    semaphore.tryAcquire(1);
    const aborted = makeAbortController();
    aborted.abort();
    await assert.rejects(semaphore.acquire(1, { signal: aborted.signal }), { name: 'AbortError' });
    const controller = makeAbortController();
    const other = semaphore.acquire(1);
    // (Through another instance, so that both wait on the word: one of the
    // same instance would wait in its line, first-come-first-served.spec.js.)
    const mine = Semaphore.from(semaphore).acquire(1, { signal: controller.signal });
    await until(() => queued(semaphore) === 2, 'both to queue');
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(mine, (error) => error === reason);
    await until(() => queued(semaphore) === 1, 'the other to stay queued');
    semaphore.release(1);
    (await other)();
    assert.deepStrictEqual([semaphore.available, semaphore.held, announced(semaphore), queued(semaphore)], [1, 0, 0, 0]);
  });

  for (const how of ['terminate', 'exit', 'throw', 'end']) {
    it(`permits held by a worker that ends by ${how} come back to the main thread's waiting acquire`, async () => {
      const semaphore = new Semaphore(3);
      const w = worker(
        `(semaphore, data, { how }, port) => {
          semaphore.acquireSync(2);
          // Through an instance of its own as well, taken async.
          require(workerData.root).Semaphore.from(workerData.semaphore).acquire(1).then(() => {
            port.postMessage('held');
            port.once('message', () => {
              if (how === 'exit') process.exit(0);
              if (how === 'throw') throw new Error('dies holding permits');
              if (how === 'end') port.close();
            });
          });
        }`,
        { semaphore, how }
      );
      w.on('error', () => {}); // (the throw)
      assert.strictEqual(await w.next(), 'held');
      assert.strictEqual(semaphore.available, 0);
      const mine = semaphore.acquire(3);
      await until(() => queued(semaphore) === 1, 'the main thread to wait');
      if (how === 'terminate') await w.terminate();
      else w.postMessage('go');
      await w.done().catch(() => {});
      const release = await mine;
      assert.strictEqual(semaphore.held, 3);
      release();
      assert.deepStrictEqual([semaphore.available, announced(semaphore), queued(semaphore)], [3, 0, 0]);
    });
  }

  it('a worker terminated in the middle of a release (its permits back, its notify not yet made) still wakes the waiter', async () => {
    // The worker's release stops right after its add: Atomics.load of the
    // waiters word, its next step, blocks (patched here to stand for the
    // moment the thread is stopped at); then it is terminated.
    const semaphore = new Semaphore(1);
    const w = worker(
      `(semaphore, data, wd, port) => {
        semaphore.acquireSync(1);
        port.postMessage('held');
        port.once('message', () => {
          const load = Atomics.load;
          Atomics.load = (array, index) => {
            if (array === semaphore.i32a && index === semaphore.index + 1) {
              port.postMessage('stopped');
              Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
            }
            return load(array, index);
          };
          semaphore.release(1);
        });
      }`,
      { semaphore }
    );
    assert.strictEqual(await w.next(), 'held');
    const controller = makeAbortController();
    const mine = semaphore.acquire(1, { signal: controller.signal });
    await until(() => queued(semaphore) === 1, 'the main thread to wait');
    w.postMessage('release');
    assert.strictEqual(await w.next(), 'stopped');
    assert.strictEqual(semaphore.available, 1, 'the permit is back');
    assert.strictEqual(queued(semaphore), 1, 'its waiter not woken yet');
    await w.terminate();
    // Woken by the worker's teardown (a bound on the wait: the test fails, not hangs).
    const bound = setTimeout(() => controller.abort(new Error('the waiter was never woken')), 10000);
    const release = await mine;
    clearTimeout(bound);
    release();
    assert.deepStrictEqual([semaphore.available, announced(semaphore), queued(semaphore)], [1, 0, 0]);
  });

  it('a release that runs out of stack after giving its permits back owes the wake-up, and the instance pays it at its next call', async function () {
    const semaphore = new Semaphore(2);
    semaphore.tryAcquire(2);
    let woken = false;
    const other = Semaphore.from(semaphore)
      .acquire(2)
      .then((release) => {
        woken = true;
        release();
      });
    await until(() => queued(semaphore) === 1, 'the other instance to wait');
    // Tries release(2) at every depth as the stack unwinds from its limit:
    // the first that changes anything is the one to look at.
    let outcome = null;
    (function probe() {
      try {
        probe();
      } catch (_) {}
      if (outcome !== null) return;
      try {
        semaphore.release(2);
        outcome = 'released';
      } catch (error) {
        if (semaphore.held === 0) outcome = error;
      }
    })();
    if (outcome === 'released') this.skip(); // (no depth threw between the add and the notify here)
    assert.ok(outcome instanceof RangeError, String(outcome));
    assert.deepStrictEqual([semaphore.available, semaphore.held], [2, 0], 'the permits are back');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.strictEqual(woken, false, 'its wake-up is owed');
    assert.throws(() => semaphore.release(2), { code: 'ERR_SEMAPHORE_NOT_HELD' }, 'a retry gives nothing back twice');
    assert.strictEqual(semaphore.tryAcquire(0), true); // any call pays what is owed
    await until(() => woken, 'the other instance to be woken');
    await other;
    assert.deepStrictEqual([semaphore.available, announced(semaphore), queued(semaphore)], [2, 0, 0]);
  });

  /**
   * In a child process with --expose-gc: an instance takes 2 permits, and
   * its release(n) runs out of stack between giving them back and its
   * notify (as above); the instance is then dropped, and its collection
   * must wake the acquire(n) of another instance (the main thread lives on:
   * no teardown would). What the child saw, or null where no depth threw
   * between the add and the notify.
   */
  function owedThenCollected(n) {
    const script = `
      const { Semaphore, waitersForTesting } = require(${JSON.stringify(root)});
      const semaphore = new Semaphore(2);
      let dropped = Semaphore.from(semaphore);
      dropped.tryAcquire(2);
      let woken = false;
      semaphore.acquire(${n}).then((release) => { woken = true; release(); });
      const tick = () => new Promise((resolve) => setTimeout(resolve, 10));
      let collected = false;
      const registry = new FinalizationRegistry(() => { collected = true; });
      (async () => {
        while (waitersForTesting(semaphore.i32a, semaphore.index).registry !== 1) await tick();
        let outcome = null;
        (function probe() {
          try {
            probe();
          } catch (_) {}
          if (outcome !== null) return;
          try {
            dropped.release(${n});
            outcome = 'released';
          } catch (error) {
            if (dropped.held === ${2 - n}) outcome = error.name;
          }
        })();
        if (outcome === 'released') return console.log('null');
        registry.register(dropped, 0);
        dropped = null;
        await tick();
        await tick();
        const owed = !woken;
        for (let tries = 0; tries < 100 && !(collected && woken); tries++) {
          global.gc();
          await tick();
        }
        console.log(JSON.stringify({ outcome, owed, collected, woken, available: semaphore.available }));
      })();
    `;
    const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', timeout: 30000 });
    assert.strictEqual(child.status, 0, child.stderr);
    return JSON.parse(child.stdout);
  }

  it('a wake-up owed by an instance that is collected before its next call is delivered when it is collected', function () {
    const seen = owedThenCollected(2);
    if (seen === null) this.skip();
    assert.deepStrictEqual(seen, { outcome: 'RangeError', owed: true, collected: true, woken: true, available: 2 });
  });

  it('… also when the instance is collected still holding permits (they stay taken until its thread ends)', function () {
    const seen = owedThenCollected(1);
    if (seen === null) this.skip();
    assert.deepStrictEqual(seen, { outcome: 'RangeError', owed: true, collected: true, woken: true, available: 1 });
  });

  it('permits held through an instance that was collected come back when its thread ends', () => {
    // In a child process with --expose-gc: a worker takes a permit through
    // an instance it then drops, and collects it (a FinalizationRegistry
    // says when); the permit stays taken while the worker lives, and comes
    // back when it ends.
    const script = `
      const { Worker } = require('worker_threads');
      const { Semaphore } = require(${JSON.stringify(root)});
      const semaphore = new Semaphore(1);
      const w = new Worker(\`
        const { workerData, parentPort } = require('worker_threads');
        const { Semaphore } = require(workerData.root);
        let collected = false;
        const registry = new FinalizationRegistry(() => { collected = true; });
        (() => {
          const dropped = Semaphore.from(workerData.semaphore);
          dropped.tryAcquire(1);
          registry.register(dropped, 0);
        })();
        (function collect(tries) {
          global.gc();
          if (collected || tries === 0) parentPort.postMessage(collected);
          else setTimeout(collect, 10, tries - 1);
        })(100);
        parentPort.once('message', () => parentPort.close());
      \`, { eval: true, workerData: { root: ${JSON.stringify(root)}, semaphore } });
      w.once('message', (collected) => {
        console.log('collected ' + collected + ', taken ' + (semaphore.available === 0));
        w.postMessage('end');
      });
      w.once('exit', () => {
        semaphore.acquire(1, { timeout: 5000 }).then(() => console.log('back'), (e) => console.log(e.code));
      });
    `;
    const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', timeout: 20000 });
    assert.strictEqual(child.status, 0, child.stderr);
    assert.strictEqual(child.stdout.trim(), 'collected true, taken true\nback');
  });

  it('under load: 4 blocking workers and the async main thread never hold more than the permits (10^6 operations)', async () => {
    // A semaphore of 3; each operation takes 1 or 2 permits, adds them to
    // data[0] (held now), checks it is at most 3, and gives them back.
    const total = 1000000;
    const semaphore = new Semaphore(3);
    // data[0]: held now; data[1]: operations done; data[2]: overcommits seen; data[3]: stop.
    const data = new Int32Array(new SharedArrayBuffer(16));
    const body = `(semaphore, data) => {
      let k = 0;
      while (Atomics.load(data, 3) === 0) {
        const n = 1 + (k++ & 1);
        semaphore.acquireSync(n);
        if (Atomics.add(data, 0, n) + n > 3) Atomics.add(data, 2, 1);
        Atomics.sub(data, 0, n);
        semaphore.release(n);
        Atomics.add(data, 1, 1);
      }
    }`;
    const workers = [0, 1, 2, 3].map(() => worker(body, { semaphore, data: data.buffer }));
    let k = 0;
    let mine = 0;
    while (Atomics.load(data, 1) < total) {
      const n = 1 + (k++ & 1);
      const release = await semaphore.acquire(n);
      if (Atomics.add(data, 0, n) + n > 3) Atomics.add(data, 2, 1);
      Atomics.sub(data, 0, n);
      release();
      Atomics.add(data, 1, 1);
      mine++;
    }
    Atomics.store(data, 3, 1);
    await Promise.all(workers.map((w) => w.done()));
    assert.strictEqual(Atomics.load(data, 2), 0, 'more permits held than the semaphore has');
    assert.ok(mine > 0, 'the main thread got permits');
    assert.deepStrictEqual([semaphore.available, announced(semaphore), queued(semaphore)], [3, 0, 0]);
  });

  it('workers terminated at random points while taking and giving back permits: every permit comes back, never one too many', async () => {
    // 4 workers loop acquire / release (blocking, 1 or 2 permits) while the
    // main thread terminates one at a random moment, 40 times, and starts
    // another; the main thread keeps taking permits itself, and samples
    // that no more than 3 are ever free.
    const semaphore = new Semaphore(3);
    const data = new Int32Array(new SharedArrayBuffer(8)); // data[0]: stop; data[1]: operations
    const body = `(semaphore, data) => {
      let k = 0;
      while (Atomics.load(data, 0) === 0) {
        const n = 1 + (k++ & 1);
        semaphore.acquireSync(n);
        semaphore.release(n);
        Atomics.add(data, 1, 1);
      }
    }`;
    const workers = [0, 1, 2, 3].map(() => worker(body, { semaphore, data: data.buffer }));
    let tooMany = 0;
    for (let i = 0; i < 40; i++) {
      const until = Atomics.load(data, 1) + 1 + Math.floor(Math.random() * 2000);
      while (Atomics.load(data, 1) < until) {
        (await semaphore.acquire(1 + (i & 1), { timeout: 10000 }))();
        if (semaphore.available > 3) tooMany++;
      }
      const victim = workers.splice(Math.floor(Math.random() * workers.length), 1)[0];
      await victim.terminate();
      if (semaphore.available > 3) tooMany++;
      workers.push(worker(body, { semaphore, data: data.buffer }));
    }
    Atomics.store(data, 0, 1);
    await Promise.all(workers.map((w) => w.done()));
    assert.strictEqual(tooMany, 0, 'more permits free than the semaphore has');
    assert.deepStrictEqual([semaphore.available, announced(semaphore), queued(semaphore)], [3, 0, 0], 'every permit came back');
    (await semaphore.acquire(3, { timeout: 1000 }))();
  });

  it('a pending acquire keeps the process alive until it gets its permits; unref() lets it exit', () => {
    const script = (unref) => `
      const { Worker } = require('worker_threads');
      const { Semaphore, unref } = require(${JSON.stringify(root)});
      const semaphore = new Semaphore(1);
      ${unref ? 'unref();' : ''}
      const w = new Worker('const { workerData } = require("worker_threads");' +
        'const s = require(workerData.root).Semaphore.from(workerData.semaphore);' +
        's.acquireSync(1); require("worker_threads").parentPort.postMessage("held");' +
        'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);' +
        's.release(1);', { eval: true, workerData: { root: ${JSON.stringify(root)}, semaphore } });
      w.once('message', () => {
        w.unref();
        semaphore.acquire(1).then(() => console.log('acquired'));
      });
    `;
    const alive = spawnSync(process.execPath, ['-e', script(false)], { encoding: 'utf8', timeout: 20000 });
    assert.strictEqual(alive.status, 0, alive.stderr);
    assert.strictEqual(alive.stdout.trim(), 'acquired');
    const unrefd = spawnSync(process.execPath, ['-e', script(true)], { encoding: 'utf8', timeout: 20000 });
    assert.strictEqual(unrefd.status, 0, unrefd.stderr);
    assert.strictEqual(unrefd.stdout.trim(), '', 'exited without waiting for the permit');
  });
});

describe('Semaphore release functions', function () {
  it('one that found its permits already given back is spent: it never gives back a later hold\'s', async () => {
    const semaphore = new Semaphore(1);
    const first = await semaphore.acquire();
    semaphore.release(1); // the instance gives the permit back itself
    assert.throws(first, { code: 'ERR_SEMAPHORE_NOT_HELD' });
    const second = await semaphore.acquire();
    first();
    assert.deepStrictEqual([semaphore.available, semaphore.held], [0, 1], 'the second hold is intact');
    second();
    assert.deepStrictEqual([semaphore.available, semaphore.held], [1, 0]);
  });
});

describe('Semaphore near the stack limit', function () {
  this.timeout(60000);

  it('a release function that threw gives the permits back once when called again: the other holder keeps its own', async () => {
    const outs = await nearTheLimit('release-near-stack-limit.js', 'family-releaser');
    const tail = '; the other take served; free while B holds: 1; after B: 2';
    assert.deepStrictEqual(Object.keys(outs).sort(), [`RangeError${tail}`, `ok${tail}`], JSON.stringify(outs));
  });

  it('acquire() at every depth takes, or throws or rejects holding nothing', async () => {
    const outs = await nearTheLimit('release-near-stack-limit.js', 'family-acquire');
    for (const out of Object.keys(outs)) assert.match(out, /^(took|threw RangeError|rejected RangeError); free 1, held 0$/, JSON.stringify(outs));
    assert.ok(outs['took; free 1, held 0'] > 0 && outs['threw RangeError; free 1, held 0'] > 0, JSON.stringify(outs));
  });
});

describe('Semaphore and memory', function () {
  this.timeout(60000);

  it('instances dropped while their release functions live, then released, leave nothing behind', async () => {
    const grown = await droppedHoldsGrowth('family');
    assert.ok(grown < 28000, `ArrayBuffer memory grew by ${grown} bytes over 10,000 instances`);
  });
});
