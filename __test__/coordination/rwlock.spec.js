'use strict';
// RwLock: many readers or one writer, taken by workers (blocking) and the
// main thread (async); never a reader with a writer; a waiting writer holds
// new readers off, and one that gives up lets them go; timeouts and aborts
// leave nothing queued and nothing taken; what a thread holds when it ends,
// however it ends, is given back to the waiters.

const assert = require('assert');
const { spawnSync } = require('child_process');
const { RwLock, waitersForTesting } = require('../..');
const { root, until, primitiveWorker } = require('../helpers');
const { makeAbortController } = require('../fixtures/async-lock-helpers');

/** A worker running `body(...)` over its own RwLock (helpers.js primitiveWorker). */
const worker = (body, workerData, options) => primitiveWorker([['RwLock', 'rwlock']], body, workerData, options);

const queued = (rwlock) => waitersForTesting(rwlock.i32a, rwlock.index).registry;
/** The two words: the state, and the threads between announcing a wait and leaving it. */
const words = (rwlock) => [Atomics.load(rwlock.i32a, rwlock.index), Atomics.load(rwlock.i32a, rwlock.index + 1)];
/** The state's count of writers waiting (lib/rwlock.js). */
const writersWaiting = (rwlock) => (Atomics.load(rwlock.i32a, rwlock.index) >> 20) & 0x3ff;
/** Nothing held, counted, announced or queued. */
const assertFree = (rwlock, what) => assert.deepStrictEqual([...words(rwlock), queued(rwlock)], [0, 0, 0], what);

describe('RwLock', function () {
  this.timeout(60000);

  it('is made over a fresh buffer, (sab), (sab | int32Array, index), writing nothing; from() attaches; BYTES', () => {
    assert.strictEqual(RwLock.BYTES, 8);
    const fresh = new RwLock();
    assert.strictEqual(fresh.sab.byteLength, 8);
    assert.deepStrictEqual([fresh.readers, fresh.writeLocked, fresh.readsHeld, fresh.writeHeld], [0, false, 0, false]);
    const i32 = new Int32Array(new SharedArrayBuffer(32));
    const rwlock = new RwLock(i32, 5);
    assert.deepStrictEqual([rwlock.i32a, rwlock.index], [i32, 5]);
    assert.strictEqual(new RwLock(new SharedArrayBuffer(32), 6).index, 6);
    assert.strictEqual(new RwLock(new SharedArrayBuffer(32)).index, 0);
    assert.throws(() => new RwLock(i32, 7), { name: 'RangeError', message: /"index".* 0 to 6/ });
    assert.throws(() => new RwLock(new SharedArrayBuffer(4)), { name: 'RangeError', message: /"sab".*2 Int32s/ });
    assert.strictEqual(rwlock.tryRead(), true);
    const again = new RwLock(i32, 5);
    const copy = RwLock.from({ sab: rwlock.sab, i32a: rwlock.i32a, index: rwlock.index });
    assert.ok(copy instanceof RwLock);
    assert.deepStrictEqual([again.readers, copy.readers, copy.readsHeld], [1, 1, 0], 'new and from() write nothing; hold nothing');
    assert.strictEqual(RwLock.from({ sab: rwlock.sab, index: 5 }).tryWrite(), false);
    rwlock.releaseRead();
    assertFree(rwlock);
  });

  it('rejects bad arguments with TypeError/RangeError naming them', async () => {
    assert.throws(() => new RwLock(new ArrayBuffer(8)), { name: 'TypeError', message: /"sab"/ });
    assert.throws(() => new RwLock(new SharedArrayBuffer(8), '0'), { name: 'TypeError', message: /"index"/ });
    assert.throws(() => RwLock.from(7), { name: 'TypeError', message: /"value" argument must be an RwLock/ });
    const rwlock = new RwLock();
    for (const call of [(t) => rwlock.readSync(t), (t) => rwlock.writeSync(t), (t) => rwlock.readGuard(t), (t) => rwlock.writeGuard(t)]) {
      assert.throws(() => call('1'), { name: 'TypeError', message: /"timeout"/ });
      assert.throws(() => call(-1), { name: 'RangeError', message: /"timeout"/ });
    }
    for (const call of [(o) => rwlock.read(o), (o) => rwlock.write(o), (o) => rwlock.runShared(() => {}, o), (o) => rwlock.runExclusive(() => {}, o)]) {
      await assert.rejects(call(null), { name: 'TypeError', message: /"options"/ });
      await assert.rejects(call({ timeout: 'x' }), { name: 'TypeError', message: /"options.timeout"/ });
      await assert.rejects(call({ signal: {} }), { name: 'TypeError', message: /"options.signal"/ });
    }
    await assert.rejects(rwlock.runShared(42), { name: 'TypeError', message: /"f"/ });
    await assert.rejects(rwlock.runExclusive(), { name: 'TypeError', message: /"f"/ });
    const badThis = { name: 'TypeError', message: /"this" value must be an RwLock/ };
    for (const impostor of [null, {}, { sab: rwlock.sab, i32a: rwlock.i32a, index: 0 }, new Proxy(rwlock, {})]) {
      assert.throws(() => RwLock.prototype.tryRead.call(impostor), badThis);
      assert.throws(() => RwLock.prototype.releaseWrite.call(impostor), badThis);
      await assert.rejects(RwLock.prototype.write.call(impostor), badThis);
    }
    assertFree(rwlock, 'nothing taken or queued');
  });

  it('readers share it, a writer has it alone; releases give back only what the instance holds (ERR_RWLOCK_NOT_HELD)', () => {
    const a = new RwLock();
    const b = RwLock.from(a);
    assert.strictEqual(a.tryRead(), true);
    assert.strictEqual(b.tryRead(), true);
    assert.strictEqual(a.tryRead(), true);
    assert.deepStrictEqual([a.readers, a.readsHeld, b.readsHeld], [3, 2, 1]);
    assert.strictEqual(b.tryWrite(), false, 'no writer while readers hold it');
    assert.throws(() => b.releaseWrite(), { code: 'ERR_RWLOCK_NOT_HELD', message: /write lock/ });
    b.releaseRead();
    assert.throws(() => b.releaseRead(), { code: 'ERR_RWLOCK_NOT_HELD', message: /read/ });
    a.releaseRead();
    a.releaseRead();
    assert.strictEqual(b.tryWrite(), true);
    assert.deepStrictEqual([a.writeLocked, a.writeHeld, b.writeHeld], [true, false, true]);
    assert.strictEqual(a.tryRead(), false, 'no reader while a writer holds it');
    assert.strictEqual(a.tryWrite(), false);
    assert.throws(() => a.releaseWrite(), { code: 'ERR_RWLOCK_NOT_HELD' });
    assert.strictEqual(b.writeLocked, true, 'a refused release changed nothing');
    b.releaseWrite();
    assertFree(a);
  });

  it('release functions release once, also through Symbol.dispose; guards throw ERR_RWLOCK_TIMEOUT; run* release however f ends', async () => {
    const rwlock = new RwLock();
    const read = await rwlock.read();
    const read2 = await rwlock.read();
    assert.deepStrictEqual([read.mode, read.then, rwlock.readers], ['read', undefined, 2]);
    read();
    read();
    assert.strictEqual(rwlock.readers, 1, 'a release function releases once');
    read2();
    const write = rwlock.writeGuard(0);
    assert.strictEqual(write.mode, 'write');
    assert.throws(() => RwLock.from(rwlock).readGuard(0), { code: 'ERR_RWLOCK_TIMEOUT', message: /read-lock/ });
    assert.throws(() => RwLock.from(rwlock).writeGuard(1), { code: 'ERR_RWLOCK_TIMEOUT', message: /1 ms .*write-lock/ });
    if (Symbol.dispose) write[Symbol.dispose]();
    else write();
    assert.strictEqual(rwlock.writeLocked, false);
    assert.strictEqual(await rwlock.runShared(() => [rwlock.readers, rwlock.writeLocked].join()), '1,false');
    assert.strictEqual(await rwlock.runExclusive(async () => rwlock.writeHeld), true);
    await assert.rejects(
      rwlock.runExclusive(async () => {
        throw new Error('f');
      }),
      { message: 'f' }
    );
    await assert.rejects(
      rwlock.runShared(() => {
        throw new Error('g');
      }),
      { message: 'g' }
    );
    assertFree(rwlock, 'released however f ended');
  });

  it('a blocking lock this very instance could never get throws ERR_RWLOCK_DEADLOCK, with a timeout too', () => {
    const rwlock = new RwLock();
    rwlock.writeSync();
    assert.throws(() => rwlock.readSync(), { code: 'ERR_RWLOCK_DEADLOCK', message: /holds the write lock/ });
    assert.throws(() => rwlock.writeSync(), { code: 'ERR_RWLOCK_DEADLOCK' });
    assert.throws(() => rwlock.writeGuard(1), { code: 'ERR_RWLOCK_DEADLOCK' });
    rwlock.releaseWrite();
    rwlock.readSync();
    assert.throws(() => rwlock.writeSync(1), { code: 'ERR_RWLOCK_DEADLOCK', message: /holds a read/ });
    assert.strictEqual(rwlock.readSync(), true, 'a second read of the same instance is no deadlock');
    rwlock.releaseRead();
    rwlock.releaseRead();
    assertFree(rwlock);
  });

  it('a blocking read goes past a write of its own instance that waits (which could never go first); an async one waits its turn', async () => {
    const rwlock = new RwLock();
    const reader = RwLock.from(rwlock);
    reader.readSync();
    const order = [];
    const write = rwlock.runExclusive(() => order.push('write'));
    await until(() => writersWaiting(rwlock) === 1, 'the write to wait, counted');
    assert.strictEqual(RwLock.from(rwlock).tryRead(), false, 'another instance is held off');
    assert.strictEqual(rwlock.tryRead(), false, 'a try of its own instance too');
    assert.strictEqual(rwlock.readSync(1000), true, 'a blocking read of its own instance is not');
    const asyncRead = rwlock.runShared(() => order.push('async read'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.strictEqual(queued(rwlock), 1, "the async read waits in the instance's line, behind the write");
    rwlock.releaseRead();
    reader.releaseRead();
    await Promise.all([write, asyncRead]);
    assert.deepStrictEqual(order, ['write', 'async read']);
    assertFree(rwlock);
  });

  it('overlapping async reads through one instance keep neither its own write nor another thread\'s out', async () => {
    const rwlock = new RwLock();
    let stop = false;
    // Two overlapping runShared loops: a read of this instance is held at every moment.
    const loop = async () => {
      while (!stop) await rwlock.runShared(() => new Promise((resolve) => setTimeout(resolve, 3)));
    };
    const loops = [loop(), loop()];
    await until(() => rwlock.readers > 0, 'the reads to start');
    const w = worker('(rwlock, data, wd, port) => { const took = rwlock.writeSync(5000); if (took) rwlock.releaseWrite(); port.postMessage(took); }', { rwlock });
    const own = rwlock.runExclusive(() => 'own write', { timeout: 5000 });
    assert.strictEqual(await w.next(), true, 'the worker\'s write got in');
    assert.strictEqual(await own, 'own write');
    stop = true;
    await Promise.all(loops);
    await w.done();
    assertFree(rwlock);
  });

  it('two workers hold reads at the same time; the main thread\'s write waits for both, then has it alone', async () => {
    const rwlock = new RwLock();
    const body = `(rwlock, data, wd, port) => {
      rwlock.readSync();
      port.postMessage(rwlock.readers);
      port.once('message', () => rwlock.releaseRead());
    }`;
    const readers = [worker(body, { rwlock }), worker(body, { rwlock })];
    await Promise.all(readers.map((w) => w.next()));
    assert.strictEqual(rwlock.readers, 2, 'both hold a read at once');
    const write = rwlock.write();
    await until(() => writersWaiting(rwlock) === 1 && queued(rwlock) === 1, 'the writer to wait, counted');
    readers[0].postMessage('release');
    await readers[0].done();
    assert.strictEqual(rwlock.writeLocked, false, 'still one reader');
    readers[1].postMessage('release');
    await readers[1].done();
    const release = await write;
    assert.deepStrictEqual([rwlock.writeHeld, rwlock.readers], [true, 0]);
    release();
    assertFree(rwlock);
  });

  it('a waiting writer holds new readers off (but not a second blocking read of an instance that reads); they go after it', async () => {
    const rwlock = new RwLock();
    rwlock.readSync();
    const data = new Int32Array(new SharedArrayBuffer(4)); // data[0]: 1 once the worker wrote
    const w = worker(
      `(rwlock, data) => {
        rwlock.writeSync();
        Atomics.store(data, 0, 1);
        rwlock.releaseWrite();
      }`,
      { rwlock, data: data.buffer }
    );
    await until(() => writersWaiting(rwlock) === 1, 'the writer to count itself waiting');
    const other = RwLock.from(rwlock);
    assert.strictEqual(other.tryRead(), false, 'a new reader is held off');
    assert.strictEqual(rwlock.tryRead(), false, 'a try of the instance that reads is held off too');
    assert.strictEqual(rwlock.readSync(0), true, 'a blocking read of the instance that reads is not');
    const late = other.runShared(() => Atomics.load(data, 0));
    await until(() => queued(rwlock) === 2, 'the late reader to wait too');
    assert.strictEqual(Atomics.load(data, 0), 0, 'the writer waits for both reads');
    rwlock.releaseRead();
    rwlock.releaseRead();
    assert.strictEqual(await late, 1, 'the late reader went after the writer');
    await w.done();
    assertFree(rwlock);
  });

  it('a wait that times out returns false (rejects ERR_RWLOCK_TIMEOUT) and leaves nothing queued, counted or taken', async () => {
    const rwlock = new RwLock();
    const holder = RwLock.from(rwlock);
    holder.writeSync();
    assert.strictEqual(rwlock.readSync(0), false);
    assert.strictEqual(rwlock.readSync(5), false);
    assert.strictEqual(rwlock.writeSync(5), false);
    await assert.rejects(rwlock.read({ timeout: 0 }), { code: 'ERR_RWLOCK_TIMEOUT' });
    await assert.rejects(rwlock.write({ timeout: 5 }), { code: 'ERR_RWLOCK_TIMEOUT', message: /5 ms/ });
    await assert.rejects(rwlock.runShared(() => {}, { timeout: 5 }), { code: 'ERR_RWLOCK_TIMEOUT' });
    holder.releaseWrite();
    assertFree(rwlock);
  });

  it('a writer that gives up waiting (timeout, abort) lets the readers it held off go', async () => {
    for (const how of ['blocking timeout', 'async timeout', 'abort']) {
      const rwlock = new RwLock();
      const reader = RwLock.from(rwlock);
      reader.readSync();
      // data[0]: 1 once the worker's writer waits; its wait ends by itself.
      const data = new Int32Array(new SharedArrayBuffer(4));
      const w = worker(
        `(rwlock, data, { how }, port) => {
          // It stays alive until told (its end would wake the waiters too).
          const report = (outcome) => {
            port.postMessage(outcome);
            port.once('message', () => port.close());
          };
          if (how === 'blocking timeout') {
            Atomics.store(data, 0, 1);
            report(rwlock.writeSync(300));
            return;
          }
          // (Node 14 has no AbortController: the fixtures' stand-in.)
          const controller = require(workerData.root + '/__test__/fixtures/async-lock-helpers').makeAbortController();
          const mine = rwlock.write(how === 'abort' ? { signal: controller.signal } : { timeout: 300 });
          Atomics.store(data, 0, 1);
          if (how === 'abort') setTimeout(() => controller.abort(), 300);
          mine.then(() => report(true), (error) => report(error.name === 'AbortError' ? error.name : error.code));
        }`,
        { rwlock, data: data.buffer, how }
      );
      await until(() => Atomics.load(data, 0) === 1 && writersWaiting(rwlock) === 1, `the ${how} writer to wait`);
      const heldOff = RwLock.from(rwlock);
      const controller = makeAbortController();
      // A bound on the wait: the test fails, not hangs.
      const bound = setTimeout(() => controller.abort(new Error(`the held-off reader was never woken (${how})`)), 10000);
      const read = heldOff.read({ signal: controller.signal });
      assert.strictEqual(heldOff.readsHeld, 0, 'held off');
      const release = await read;
      clearTimeout(bound);
      assert.deepStrictEqual([await w.next(), writersWaiting(rwlock)], [how === 'abort' ? 'AbortError' : how === 'blocking timeout' ? false : 'ERR_RWLOCK_TIMEOUT', 0]);
      w.postMessage('end');
      await w.done();
      release();
      reader.releaseRead();
      assertFree(rwlock, how);
    }
  });

  it('an abort rejects with its reason, leaving nothing queued or taken; the other waiters still get theirs', async () => {
    const rwlock = new RwLock();
    const holder = RwLock.from(rwlock);
    holder.writeSync();
    const aborted = makeAbortController();
    aborted.abort();
    await assert.rejects(rwlock.read({ signal: aborted.signal }), { name: 'AbortError' });
    const controller = makeAbortController();
    const other = rwlock.read();
    // (Through another instance, so that both wait on the word: one of the
    // same instance would wait in its line, first-come-first-served.spec.js.)
    const mine = RwLock.from(rwlock).write({ signal: controller.signal });
    await until(() => queued(rwlock) === 2, 'both to queue');
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(mine, (error) => error === reason);
    await until(() => queued(rwlock) === 1 && writersWaiting(rwlock) === 0, 'the other to stay queued');
    holder.releaseWrite();
    (await other)();
    assertFree(rwlock);
  });

  for (const hold of ['read', 'write', 'waiting write']) {
    for (const how of ['terminate', 'exit', 'throw', 'end']) {
      it(`a worker that ends by ${how} holding a ${hold} gives it back to the main thread's waiting ${hold === 'read' ? 'write' : 'read'}`, async () => {
        const rwlock = new RwLock();
        // A 'waiting write': the worker waits to write (async) behind a read
        // of the main thread's, which stays; the main thread's own read,
        // through another instance, is held off by it until it ends.
        const blocker = RwLock.from(rwlock);
        if (hold === 'waiting write') blocker.readSync();
        const w = worker(
          `(rwlock, data, { how, hold }, port) => {
            const then = () => {
              port.postMessage('held');
              port.once('message', () => {
                if (how === 'exit') process.exit(0);
                if (how === 'throw') throw new Error('dies holding the lock');
                // (A pending write keeps a thread alive: unref() lets it end.)
                if (how === 'end' && hold === 'waiting write') require(workerData.root).unref();
                if (how === 'end') port.close();
              });
            };
            if (hold === 'read') {
              rwlock.readSync();
              // Through an instance of its own as well, taken async.
              require(workerData.root).RwLock.from(workerData.rwlock).read().then(then);
            } else if (hold === 'write') {
              rwlock.write().then(then);
            } else {
              rwlock.write();
              then();
            }
          }`,
          { rwlock, how, hold }
        );
        w.on('error', () => {}); // (the throw)
        assert.strictEqual(await w.next(), 'held');
        if (hold === 'read') assert.strictEqual(rwlock.readers, 2);
        if (hold === 'write') assert.strictEqual(rwlock.writeLocked, true);
        if (hold === 'waiting write') await until(() => writersWaiting(rwlock) === 1, 'the worker to wait, counted');
        const mine = hold === 'read' ? rwlock.write() : rwlock.read();
        await until(() => queued(rwlock) === (hold === 'waiting write' ? 2 : 1), 'the main thread to wait');
        if (how === 'terminate') await w.terminate();
        else w.postMessage('go');
        await w.done().catch(() => {});
        const release = await mine;
        assert.strictEqual(hold === 'read' ? rwlock.writeHeld : rwlock.readsHeld, hold === 'read' ? true : 1);
        // A dead writer (and only that) leaves the lock marked abandoned.
        assert.strictEqual(release.abandoned, hold === 'write', 'release.abandoned');
        assert.strictEqual(rwlock.abandoned, hold === 'write', 'rwlock.abandoned');
        release();
        if (hold === 'waiting write') blocker.releaseRead();
        if (hold === 'write') {
          // The next writer is told too, and its release clears the mark.
          assert.strictEqual(rwlock.writeSync(), true);
          assert.strictEqual(rwlock.abandoned, true, 'still marked for the next writer');
          rwlock.releaseWrite();
          assert.strictEqual(rwlock.abandoned, false, 'cleared by its release');
        }
        assertFree(rwlock, 'nothing left of the dead thread');
      });
    }
  }

  it('a worker terminated in the middle of a write release (its bit cleared, its notify not yet made) still wakes the waiter', async () => {
    // The worker's release stops right after its subtraction: Atomics.load
    // of the waiters word, its next step, blocks (patched here to stand for
    // the moment the thread is stopped at); then it is terminated.
    const rwlock = new RwLock();
    const w = worker(
      `(rwlock, data, wd, port) => {
        rwlock.writeSync();
        port.postMessage('held');
        port.once('message', () => {
          const load = Atomics.load;
          Atomics.load = (array, index) => {
            if (array === rwlock.i32a && index === rwlock.index + 1) {
              port.postMessage('stopped');
              Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
            }
            return load(array, index);
          };
          rwlock.releaseWrite();
        });
      }`,
      { rwlock }
    );
    assert.strictEqual(await w.next(), 'held');
    const controller = makeAbortController();
    const mine = rwlock.read({ signal: controller.signal });
    await until(() => queued(rwlock) === 1, 'the main thread to wait');
    w.postMessage('release');
    assert.strictEqual(await w.next(), 'stopped');
    assert.strictEqual(rwlock.writeLocked, false, 'released');
    assert.strictEqual(queued(rwlock), 1, 'its waiter not woken yet');
    await w.terminate();
    const bound = setTimeout(() => controller.abort(new Error('the waiter was never woken')), 10000);
    const release = await mine;
    clearTimeout(bound);
    release();
    assertFree(rwlock);
  });

  it('a release that runs out of stack after its change never loses the wake-up: owed, the instance pays it at its next call', async () => {
    const rwlock = new RwLock();
    rwlock.writeSync();
    let woken = false;
    const other = RwLock.from(rwlock)
      .read()
      .then((release) => {
        woken = true;
        release();
      });
    await until(() => queued(rwlock) === 1, 'the other instance to wait');
    // Tries releaseWrite() at every depth as the stack unwinds from its
    // limit: the first that changes anything is the one to look at (read
    // from the word itself: any call of the instance pays what it owes).
    const writing = () => (Atomics.load(rwlock.i32a, rwlock.index) & (1 << 30)) !== 0;
    // A release that threw is judged one frame up, where the look at the
    // word has the stack to run.
    let outcome = null;
    let thrown = null;
    (function probe() {
      try {
        probe();
      } catch (_) {}
      if (outcome !== null) return;
      if (thrown !== null) {
        if (!writing()) {
          outcome = thrown;
          return;
        }
        thrown = null;
      }
      try {
        rwlock.releaseWrite();
        outcome = 'released';
      } catch (error) {
        thrown = error;
      }
    })();
    if (outcome === 'released') {
      // No depth threw between the change and the notify: one whose notify
      // ran out of stack delivered it from a timer (core's deliver).
      await until(() => woken, 'the other instance to be woken');
      await other;
      assertFree(rwlock);
      return;
    }
    assert.ok(outcome instanceof RangeError, String(outcome));
    assert.strictEqual(writing(), false, 'released');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.strictEqual(woken, false, 'its wake-up is owed');
    assert.throws(() => rwlock.releaseWrite(), { code: 'ERR_RWLOCK_NOT_HELD' }, 'a retry releases nothing twice');
    await until(() => woken, 'the other instance to be woken (paid by the call above)');
    await other;
    assertFree(rwlock);
  });

  it('a wake-up owed by an instance that is collected before its next call is delivered when it is collected', function () {
    // In a child process with --expose-gc: a releaseWrite() runs out of
    // stack between its change and its notify (as above); the instance is
    // then dropped, and its collection must wake the reader waiting through
    // another instance (the main thread lives on: no teardown would).
    const script = `
      const { RwLock, waitersForTesting } = require(${JSON.stringify(root)});
      const rwlock = new RwLock();
      let dropped = RwLock.from(rwlock);
      dropped.writeSync();
      let woken = false;
      rwlock.read().then((release) => { woken = true; release(); });
      const tick = () => new Promise((resolve) => setTimeout(resolve, 10));
      const writing = () => (Atomics.load(rwlock.i32a, rwlock.index) & (1 << 30)) !== 0;
      let collected = false;
      const registry = new FinalizationRegistry(() => { collected = true; });
      (async () => {
        while (waitersForTesting(rwlock.i32a, rwlock.index).registry !== 1) await tick();
        let outcome = null;
        let thrown = null;
        (function probe() {
          try {
            probe();
          } catch (_) {}
          if (outcome !== null) return;
          if (thrown !== null) {
            if (!writing()) {
              outcome = thrown.name;
              return;
            }
            thrown = null;
          }
          try {
            dropped.releaseWrite();
            outcome = 'released';
          } catch (error) {
            thrown = error;
          }
        })();
        if (outcome === 'released') return console.log('no depth threw between the change and the notify');
        thrown = null; // (an error's frames hold their receivers: the instance)
        registry.register(dropped, 0);
        dropped = null;
        await tick();
        await tick();
        const owed = !woken;
        for (let tries = 0; tries < 100 && !(collected && woken); tries++) {
          global.gc();
          await tick();
        }
        console.log(JSON.stringify({ outcome, owed, collected, woken, words: [Atomics.load(rwlock.i32a, rwlock.index), Atomics.load(rwlock.i32a, rwlock.index + 1)] }));
      })();
    `;
    const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', timeout: 30000 });
    assert.strictEqual(child.status, 0, child.stderr);
    if (child.stdout.startsWith('no depth')) this.skip();
    assert.deepStrictEqual(JSON.parse(child.stdout), { outcome: 'RangeError', owed: true, collected: true, woken: true, words: [0, 0] });
  });

  it('under load: 4 blocking workers and the async main thread never read while a write is under way (10^6 operations)', async () => {
    // Every 8th operation writes: it sets data[4] and data[5] to a new value,
    // one after the other, with a check between; a read checks that it sees
    // no writer inside (data[0]) and both slots equal.
    const total = 1000000;
    const rwlock = new RwLock();
    // data[0]: writers inside; data[1]: readers inside; data[2]: violations;
    // data[3]: operations; data[4], data[5]: the pair; data[6]: stop.
    const data = new Int32Array(new SharedArrayBuffer(28));
    const body = `(rwlock, data) => {
      let k = 0;
      while (Atomics.load(data, 6) === 0) {
        if ((k++ & 7) === 0) {
          rwlock.writeSync();
          if (Atomics.add(data, 0, 1) !== 0 || Atomics.load(data, 1) !== 0) Atomics.add(data, 2, 1);
          const v = data[4] + 1;
          data[4] = v;
          data[5] = v;
          Atomics.sub(data, 0, 1);
          rwlock.releaseWrite();
        } else {
          rwlock.readSync();
          Atomics.add(data, 1, 1);
          if (Atomics.load(data, 0) !== 0 || data[4] !== data[5]) Atomics.add(data, 2, 1);
          Atomics.sub(data, 1, 1);
          rwlock.releaseRead();
        }
        Atomics.add(data, 3, 1);
      }
    }`;
    const workers = [0, 1, 2, 3].map(() => worker(body, { rwlock, data: data.buffer }));
    let k = 0;
    let mine = 0;
    let maxReaders = 0;
    while (Atomics.load(data, 3) < total) {
      if ((k++ & 7) === 0) {
        await rwlock.runExclusive(() => {
          if (Atomics.add(data, 0, 1) !== 0 || Atomics.load(data, 1) !== 0) Atomics.add(data, 2, 1);
          const v = data[4] + 1;
          data[4] = v;
          data[5] = v;
          Atomics.sub(data, 0, 1);
        });
      } else {
        const release = await rwlock.read();
        const inside = Atomics.add(data, 1, 1) + 1;
        if (inside > maxReaders) maxReaders = inside;
        if (Atomics.load(data, 0) !== 0 || data[4] !== data[5]) Atomics.add(data, 2, 1);
        Atomics.sub(data, 1, 1);
        release();
      }
      Atomics.add(data, 3, 1);
      mine++;
    }
    Atomics.store(data, 6, 1);
    await Promise.all(workers.map((w) => w.done()));
    assert.strictEqual(Atomics.load(data, 2), 0, 'a reader saw a writer inside, or a write half done');
    assert.ok(mine > 0, 'the main thread got the lock');
    assert.strictEqual(data[4], data[5]);
    assertFree(rwlock);
  });

  it('workers terminated at random points while reading and writing: everything they held comes back', async () => {
    // 4 workers loop over reads and writes (blocking, every 4th a write,
    // some with a timeout, so that writers give up waiting too) while the
    // main thread terminates one at a random moment, 40 times, and starts
    // another; the main thread keeps writing itself.
    const rwlock = new RwLock();
    const data = new Int32Array(new SharedArrayBuffer(8)); // data[0]: stop; data[1]: operations
    const body = `(rwlock, data) => {
      let k = 0;
      while (Atomics.load(data, 0) === 0) {
        const write = (k & 3) === 0;
        const timeout = (k++ & 5) === 5 ? 0.05 : undefined;
        if (write ? rwlock.writeSync(timeout) : rwlock.readSync(timeout)) {
          if (write) rwlock.releaseWrite();
          else rwlock.releaseRead();
        }
        Atomics.add(data, 1, 1);
      }
    }`;
    const workers = [0, 1, 2, 3].map(() => worker(body, { rwlock, data: data.buffer }));
    for (let i = 0; i < 40; i++) {
      const until = Atomics.load(data, 1) + 1 + Math.floor(Math.random() * 2000);
      while (Atomics.load(data, 1) < until) {
        (await (i & 1 ? rwlock.write({ timeout: 10000 }) : rwlock.read({ timeout: 10000 })))();
      }
      const victim = workers.splice(Math.floor(Math.random() * workers.length), 1)[0];
      await victim.terminate();
      workers.push(worker(body, { rwlock, data: data.buffer }));
    }
    Atomics.store(data, 0, 1);
    await Promise.all(workers.map((w) => w.done()));
    // (A write first: a victim that died writing left the lock marked
    // abandoned, which the next writer's release clears.)
    (await rwlock.write({ timeout: 1000 }))();
    assertFree(rwlock, 'every hold, count and announcement came back');
  });

  it('a pending read keeps the process alive until it gets the lock; unref() lets it exit', () => {
    const script = (unref) => `
      const { Worker } = require('worker_threads');
      const { RwLock, unref } = require(${JSON.stringify(root)});
      const rwlock = new RwLock();
      ${unref ? 'unref();' : ''}
      const w = new Worker('const { workerData } = require("worker_threads");' +
        'const rw = require(workerData.root).RwLock.from(workerData.rwlock);' +
        'rw.writeSync(); require("worker_threads").parentPort.postMessage("held");' +
        'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);' +
        'rw.releaseWrite();', { eval: true, workerData: { root: ${JSON.stringify(root)}, rwlock } });
      w.once('message', () => {
        w.unref();
        rwlock.read().then(() => console.log('read'));
      });
    `;
    const alive = spawnSync(process.execPath, ['-e', script(false)], { encoding: 'utf8', timeout: 20000 });
    assert.strictEqual(alive.status, 0, alive.stderr);
    assert.strictEqual(alive.stdout.trim(), 'read');
    const unrefd = spawnSync(process.execPath, ['-e', script(true)], { encoding: 'utf8', timeout: 20000 });
    assert.strictEqual(unrefd.status, 0, unrefd.stderr);
    assert.strictEqual(unrefd.stdout.trim(), '', 'exited without waiting for the lock');
  });
});
