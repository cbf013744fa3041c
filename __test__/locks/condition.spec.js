'use strict';
// Condition: a condition variable over an AsyncLock, blocking in workers and
// async in the main thread: waits release the lock and hold it again when
// they return, however they end; notify wakes the oldest waiters and says how
// many; a bounded buffer between workers and the main thread stays exact.

const assert = require('assert');
const { threadId } = require('worker_threads');
const { AsyncLock, Condition, waitersForTesting } = require('../..');
const { root, until, primitiveWorker } = require('../helpers');
const { makeAbortController } = require('../fixtures/async-lock-helpers');

/** A worker running `body(...)` over its own AsyncLock and condition (helpers.js primitiveWorker). */
const worker = (body, workerData) => primitiveWorker([['AsyncLock', 'lock'], ['Condition', 'cond']], body, workerData);

describe('Condition', function () {
  this.timeout(60000);

  it('is made like AsyncLock: a fresh buffer, (sab), (sab | int32Array, index), from() a posted copy; BYTES', () => {
    assert.strictEqual(Condition.BYTES, 4);
    const fresh = new Condition();
    assert.strictEqual(fresh.sab.byteLength, 4);
    assert.strictEqual(fresh.index, 0);
    const words = new Int32Array(new SharedArrayBuffer(16));
    const c = new Condition(words, 2);
    assert.deepStrictEqual([c.i32a, c.index], [words, 2]);
    const copy = Condition.from({ sab: c.sab, i32a: c.i32a, index: c.index });
    assert.ok(copy instanceof Condition);
    copy.notify();
    assert.strictEqual(words[2], 1, 'the same slot');
    assert.strictEqual(new Condition(words.buffer, 3).index, 3);
  });

  it('rejects bad arguments with TypeError/RangeError naming them', async () => {
    const lock = new AsyncLock();
    const c = new Condition();
    assert.throws(() => new Condition(new ArrayBuffer(4)), { name: 'TypeError', message: /"sab"/ });
    assert.throws(() => new Condition(new SharedArrayBuffer(8), 2), { name: 'RangeError', message: /"index"/ });
    assert.throws(() => Condition.from(7), { name: 'TypeError', message: /"value"/ });
    assert.throws(() => c.wait({}), { name: 'TypeError', message: /"lock"/ });
    assert.throws(() => c.wait(Object.create(AsyncLock.prototype)), { name: 'TypeError', message: /"lock"/ });
    const posted = new AsyncLock();
    const copy = { sab: posted.sab, i32a: posted.i32a, index: posted.index }; // what postMessage delivers
    assert.throws(() => c.wait(copy), { name: 'TypeError', message: /"lock"/ });
    await assert.rejects(c.waitAsync(copy), { name: 'TypeError', message: /"lock"/ });
    assert.throws(() => c.notify(-1), { name: 'RangeError', message: /"count"/ });
    assert.throws(() => c.notify(1.5), { name: 'RangeError', message: /"count"/ });
    assert.throws(() => c.notify('1'), { name: 'TypeError', message: /"count"/ });
    assert.throws(() => Condition.prototype.notify.call({ sab: c.sab, i32a: c.i32a, index: 0 }), {
      name: 'TypeError',
      message: /"this"/,
    });
    lock.lock();
    assert.throws(() => c.wait(lock, -1), { name: 'RangeError', message: /"timeout"/ });
    await assert.rejects(c.waitAsync(lock, { timeout: 'soon' }), { name: 'TypeError', message: /"options.timeout"/ });
    await assert.rejects(c.waitAsync(lock, { signal: {} }), { name: 'TypeError', message: /"options.signal"/ });
    assert.strictEqual(lock.holder(), threadId, 'none of them let go of the lock');
    lock.unlock();
  });

  it("a subclass's unlock() and lock() overrides are not what a wait releases and re-takes the lock with", async () => {
    class Throwing extends AsyncLock {
      unlock() {
        throw new Error('not this one');
      }

      lock() {
        throw new Error('not this one');
      }
    }
    const lock = new Throwing();
    const cond = new Condition();
    AsyncLock.prototype.lock.call(lock);
    assert.strictEqual(cond.wait(lock, 5), false);
    assert.strictEqual(await cond.waitAsync(lock, { timeout: 5 }), false);
    assert.strictEqual(lock.holder(), threadId, 'held again');
    AsyncLock.prototype.unlock.call(lock);
    assert.strictEqual(lock.isLocked(), false);
  });

  it('a lock in the very Int32 of the condition is refused (a notify would move the lock word on)', async () => {
    const words = new SharedArrayBuffer(AsyncLock.BYTES + Condition.BYTES);
    const lock = new AsyncLock(words);
    const same = new Condition(words); // both default to slot 0
    lock.lock();
    assert.throws(() => same.wait(lock, 10), { name: 'RangeError', code: 'ERR_CONDITION_SAME_SLOT' });
    await assert.rejects(same.waitAsync(lock), { code: 'ERR_CONDITION_SAME_SLOT' });
    assert.strictEqual(lock.holder(), threadId);
    assert.strictEqual(new Condition(words, 1).wait(lock, 1), false, 'another slot of the buffer is fine');
    lock.unlock();
  });

  it('waiting without holding the lock throws ERR_ASYNC_LOCK_NOT_HELD and queues nothing', async () => {
    const lock = new AsyncLock();
    const c = new Condition();
    assert.throws(() => c.wait(lock, 10), { code: 'ERR_ASYNC_LOCK_NOT_HELD' });
    await assert.rejects(c.waitAsync(lock), { code: 'ERR_ASYNC_LOCK_NOT_HELD' });
    const other = new AsyncLock(lock.sab);
    other.lock(); // held, but through another instance
    assert.throws(() => c.wait(lock, 10), { code: 'ERR_ASYNC_LOCK_NOT_HELD' });
    assert.strictEqual(other.holder(), threadId);
    other.unlock();
    assert.strictEqual(waitersForTesting(c.i32a, 0).registry, 0);
  });

  it("a worker's blocking wait releases the lock, is woken by the main thread's notify, and holds the lock again", async () => {
    const lock = new AsyncLock();
    const cond = new Condition();
    const data = new Int32Array(new SharedArrayBuffer(8));
    const w = worker(
      function (lock, cond, data, _, port) {
        lock.lock();
        port.postMessage('locked');
        let woken = 0;
        while (data[0] === 0) woken += cond.wait(lock) ? 1 : 0;
        port.postMessage({ value: data[0], holds: lock.holder() === require('worker_threads').threadId, woken });
        lock.unlock();
      },
      { lock, cond, data: data.buffer }
    );
    assert.strictEqual(await w.next(), 'locked');
    await until(() => waitersForTesting(cond.i32a, 0).registry === 1, 'the worker to wait');
    // It let go of the lock while it waits:
    await lock.executeLocked(() => {
      data[0] = 7;
      assert.strictEqual(cond.notify(), 1);
    });
    const report = await w.next();
    assert.strictEqual(report.value, 7);
    assert.strictEqual(report.holds, true);
    assert.ok(report.woken >= 1);
    await w.done();
    assert.strictEqual(lock.isLocked(), false);
  });

  it('a wait that times out returns false, holding the lock again', async () => {
    const lock = new AsyncLock();
    const cond = new Condition();
    lock.lock();
    assert.strictEqual(cond.wait(lock, 10), false);
    assert.strictEqual(lock.holder(), threadId);
    lock.unlock();
    const result = await lock.executeLocked(async () => {
      const woken = await cond.waitAsync(lock, { timeout: 10 });
      return [woken, lock.holder()];
    });
    assert.deepStrictEqual(result, [false, threadId]);
    assert.strictEqual(lock.isLocked(), false);
    assert.strictEqual(waitersForTesting(cond.i32a, 0).registry, 0);
  });

  it("the main thread's waitAsync is woken by a worker's notify, holding the lock again", async () => {
    const lock = new AsyncLock();
    const cond = new Condition();
    const data = new Int32Array(new SharedArrayBuffer(8));
    const w = worker(
      function (lock, cond, data, _, port) {
        port.on('message', () => {
          lock.lock();
          data[0] = 5;
          port.postMessage(cond.notify());
          lock.unlock();
          port.close();
        });
      },
      { lock, cond, data: data.buffer }
    );
    const got = lock.executeLocked(async () => {
      while (data[0] === 0) await cond.waitAsync(lock);
      return [data[0], lock.holder()];
    });
    await until(() => waitersForTesting(cond.i32a, 0).registry === 1, 'the main thread to wait');
    w.postMessage('go');
    assert.strictEqual(await w.next(), 1);
    assert.deepStrictEqual(await got, [5, threadId]);
    await w.done();
    assert.strictEqual(lock.isLocked(), false);
  });

  it('an abort rejects with its reason, holding the lock again and leaving nothing queued; an aborted signal never lets go', async () => {
    const lock = new AsyncLock();
    const cond = new Condition();
    const controller = makeAbortController();
    const reason = new Error('enough');
    const outcome = lock.executeLocked(async () => {
      try {
        await cond.waitAsync(lock, { signal: controller.signal });
        return 'woken';
      } catch (error) {
        return [error === reason, lock.holder()];
      }
    });
    await until(() => waitersForTesting(cond.i32a, 0).registry === 1, 'the wait');
    assert.strictEqual(lock.isLocked(), false, 'released while waiting');
    controller.abort(reason);
    assert.deepStrictEqual(await outcome, [true, threadId]);
    assert.strictEqual(waitersForTesting(cond.i32a, 0).registry, 0);
    assert.strictEqual(cond.notify(), 0, 'nobody left to wake');
    const word = [];
    await lock.executeLocked(async () => {
      word.push(lock.i32a[0]);
      await assert.rejects(cond.waitAsync(lock, { signal: controller.signal }), (e) => e === reason);
      word.push(lock.i32a[0]);
    });
    assert.strictEqual(word[0], word[1], 'the lock was never let go');
    assert.strictEqual(lock.isLocked(), false);
  });

  it('notify(n) wakes the n oldest waiters and says so; notifyAll() the rest', async () => {
    const lock = new AsyncLock();
    const cond = new Condition();
    const woken = [];
    const waits = [0, 1, 2, 3].map((n) =>
      lock.executeLocked(async () => {
        await cond.waitAsync(lock);
        woken.push(n);
      })
    );
    await until(() => waitersForTesting(cond.i32a, 0).registry === 4, 'four waiters');
    assert.strictEqual(cond.notify(2), 2);
    await until(() => woken.length === 2, 'two woken');
    assert.deepStrictEqual(woken, [0, 1]);
    assert.strictEqual(cond.notifyAll(), 2);
    await Promise.all(waits);
    assert.deepStrictEqual(woken, [0, 1, 2, 3]);
    assert.strictEqual(cond.notify(), 0);
  });

  it('a worker stopped in notify(), after moving the slot on and before waking anyone, still wakes the waiters', async () => {
    // The worker's Atomics.add on the condition's slot blocks once done
    // (patched here to stand for the moment the thread is stopped at);
    // then it is terminated.
    const lock = new AsyncLock();
    const cond = new Condition();
    const w = worker(
      `(lock, cond, data, wd, port) => {
        const add = Atomics.add;
        Atomics.add = (array, index, value) => {
          const was = add(array, index, value);
          if (array === cond.i32a && index === cond.index) {
            port.postMessage('stopped');
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
          }
          return was;
        };
        port.once('message', () => cond.notify());
      }`,
      { lock, cond }
    );
    let ready = false;
    let woken = false;
    const waiting = lock.executeLocked(async () => {
      ready = true;
      while (!ready || !woken) {
        await cond.waitAsync(lock);
        woken = true;
      }
    });
    await until(() => waitersForTesting(cond.i32a, 0).registry === 1, 'the main thread to wait');
    w.postMessage('notify');
    assert.strictEqual(await w.next(), 'stopped');
    assert.strictEqual(waitersForTesting(cond.i32a, 0).registry, 1, 'not woken yet');
    await w.terminate();
    await until(() => woken, 'the teardown to wake the waiter');
    await waiting;
    assert.strictEqual(lock.isLocked(), false);
  });

  it('a waiter whose lock was abandoned meanwhile re-takes it and is told', async () => {
    const lock = new AsyncLock();
    const cond = new Condition();
    const result = lock.executeLocked(async () => {
      const woken = await cond.waitAsync(lock, { timeout: 200 });
      return [woken, lock.abandoned];
    });
    await until(() => waitersForTesting(cond.i32a, 0).registry === 1, 'the wait');
    // A worker takes the lock the waiter let go of, and dies holding it.
    const w = worker(
      function (lock, cond, data, _, port) {
        lock.lock();
        port.postMessage('held');
        setInterval(() => {}, 1000);
      },
      { lock, cond }
    );
    assert.strictEqual(await w.next(), 'held');
    await w.terminate();
    assert.deepStrictEqual(await result, [false, true]);
  });

  it('a bounded buffer between 2 producer workers, a consumer worker and the main thread passes every item exactly once', async () => {
    const CAPACITY = 4;
    const PER_PRODUCER = 5000;
    // data: [count, head, tail, produced, consumed, ...ring(CAPACITY), ...seen(2 * PER_PRODUCER)]
    const RING = 5;
    const SEEN = RING + CAPACITY;
    const data = new Int32Array(new SharedArrayBuffer(4 * (SEEN + 2 * PER_PRODUCER)));
    const lock = new AsyncLock();
    const notEmpty = new Condition(new SharedArrayBuffer(8), 0);
    const notFull = new Condition(notEmpty.sab, 1);
    const TOTAL = 2 * PER_PRODUCER;

    const producer = (first) =>
      worker(
        function (lock, cond, data, wd) {
          const { Condition } = require(wd.root);
          const notFull = Condition.from(wd.notFull);
          for (let i = 0; i < wd.count; i++) {
            lock.lock();
            while (data[0] === wd.capacity) notFull.wait(lock);
            data[wd.ring + data[2]] = wd.first + i;
            data[2] = (data[2] + 1) % wd.capacity;
            data[0]++;
            data[3]++;
            cond.notify();
            lock.unlock();
          }
        },
        { lock, cond: notEmpty, notFull, data: data.buffer, first, count: PER_PRODUCER, capacity: CAPACITY, ring: RING }
      );
    // Takes one item holding the lock; -1 once every item was taken.
    const take = () => {
      if (data[4] === TOTAL) return -1;
      const item = data[RING + data[1]];
      data[1] = (data[1] + 1) % CAPACITY;
      data[0]--;
      data[4]++;
      data[SEEN + item]++;
      notFull.notify();
      if (data[4] === TOTAL) notEmpty.notifyAll(); // the other consumer stops too
      return item;
    };
    const consumer = worker(
      function (lock, cond, data, wd) {
        const { Condition } = require(wd.root);
        const notFull = Condition.from(wd.notFull);
        let mine = 0;
        for (;;) {
          lock.lock();
          while (data[0] === 0 && data[4] !== wd.total) cond.wait(lock);
          if (data[4] === wd.total) {
            lock.unlock();
            break;
          }
          const item = data[wd.ring + data[1]];
          data[1] = (data[1] + 1) % wd.capacity;
          data[0]--;
          data[4]++;
          data[wd.seen + item]++;
          notFull.notify();
          if (data[4] === wd.total) cond.notifyAll(); // the other consumer stops too
          lock.unlock();
          mine++;
        }
        require('worker_threads').parentPort.postMessage(mine);
      },
      { lock, cond: notEmpty, notFull, data: data.buffer, total: TOTAL, capacity: CAPACITY, ring: RING, seen: SEEN }
    );
    const producers = [producer(0), producer(PER_PRODUCER)];
    let mainTook = 0;
    for (;;) {
      const item = await lock.executeLocked(async () => {
        while (data[0] === 0 && data[4] !== TOTAL) await notEmpty.waitAsync(lock);
        return take();
      });
      if (item === -1) break;
      mainTook++;
    }
    const workerTook = await consumer.next();
    await Promise.all([...producers, consumer].map((w) => w.done()));
    assert.strictEqual(data[3], TOTAL, 'produced');
    assert.strictEqual(data[4], TOTAL, 'consumed');
    assert.strictEqual(mainTook + workerTook, TOTAL);
    assert.ok(mainTook > 0 && workerTook > 0, `both consumers took items (main ${mainTook}, worker ${workerTook})`);
    const seen = data.subarray(SEEN);
    assert.ok(seen.every((n) => n === 1), 'every item exactly once');
    assert.strictEqual(data[0], 0);
    assert.strictEqual(lock.isLocked(), false);
  });
});
