'use strict';
// SignalSemaphore: a count that any thread releases into, whether or not it
// took anything, and that workers (blocking) and the main thread (async)
// take from; a take is consumed. Producers wake consumers across threads,
// no item is lost or taken twice, timeouts and aborts leave nothing queued
// and nothing taken, a consumer that dies waiting leaves the count of
// waiters right and no wake-up lost, and one that dies after taking gives
// nothing back.

const assert = require('assert');
const { SignalSemaphore, AsyncLock, waitersForTesting } = require('../..');
const { until, primitiveWorker, withMessages, root } = require('../helpers');
const { makeAbortController } = require('../fixtures/async-lock-helpers');

/** A worker running `body(items, data, workerData, port)` over its own SignalSemaphore (helpers.js primitiveWorker). */
const worker = (body, workerData) => primitiveWorker([['SignalSemaphore', 'items']], body, workerData);

/** How many waits of every thread are queued on the value. */
const queued = (s) => waitersForTesting(s.i32a, s.index).registry;
/** The `waiters` word: threads between announcing a wait and leaving it. */
const announced = (s) => Atomics.load(s.i32a, s.index + 1);
/** A bound on a wait that should end: the test fails instead of hanging. */
const kBound = 10000;

/**
 * `taking` (an acquire without a timeout, which would take late rather than
 * fail) once it resolves; rejects if it has not within kBound ms: its
 * wake-up was lost.
 */
function woken(taking, who) {
  let timer;
  const bound = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${who} not woken within ${kBound} ms`)), kBound);
  });
  return Promise.race([taking, bound]).finally(() => clearTimeout(timer));
}

/** A worker's async take of one permit: posts true once it has it, or 'not woken' after kBound ms. */
const kWorkerTake = `{
  const timer = setTimeout(() => port.postMessage('not woken'), ${kBound});
  items.acquire(1).then(() => {
    clearTimeout(timer);
    port.postMessage(true);
  });
}`;

/** The worker's next message; rejects if it fails or exits first. */
const nextOf = (w) =>
  Promise.race([
    w.next(),
    w.done().then((code) => {
      throw new Error(`the worker exited (${code}) before it replied`);
    }),
  ]);

describe('SignalSemaphore', function () {
  this.timeout(60000);

  it('is made from an initial count (default 0) and a fresh buffer, (sab), (sab | int32Array, index); from() attaches without writing; BYTES', () => {
    assert.strictEqual(SignalSemaphore.BYTES, 8);
    const fresh = new SignalSemaphore();
    assert.strictEqual(fresh.sab.byteLength, 8);
    assert.strictEqual(fresh.available, 0);
    assert.strictEqual(new SignalSemaphore(2 ** 31 - 1).available, 2 ** 31 - 1);
    const words = new Int32Array(new SharedArrayBuffer(32));
    words[5] = 7; // (a stale waiters count: a new semaphore starts with none)
    const s = new SignalSemaphore(3, words, 4);
    assert.deepStrictEqual([s.i32a, s.index], [words, 4]);
    assert.deepStrictEqual(Array.from(words.subarray(4, 6)), [3, 0]);
    assert.strictEqual(new SignalSemaphore(1, new SharedArrayBuffer(32), 6).index, 6);
    assert.strictEqual(new SignalSemaphore(1, new SharedArrayBuffer(8)).index, 0);
    s.tryAcquire(2);
    for (const posted of [{ sab: s.sab, i32a: s.i32a, index: s.index }, { sab: s.sab, index: 4 }, { i32a: words, index: 4 }]) {
      const copy = SignalSemaphore.from(posted);
      assert.ok(copy instanceof SignalSemaphore);
      assert.strictEqual(copy.available, 1, 'from() writes nothing');
    }
  });

  it('bad arguments throw (or reject with) a TypeError or RangeError naming the argument, changing nothing', async () => {
    assert.throws(() => new SignalSemaphore('1'), { name: 'TypeError', message: /"initial"/ });
    assert.throws(() => new SignalSemaphore(null), { name: 'TypeError', message: /"initial"/ });
    assert.throws(() => new SignalSemaphore(-1), { name: 'RangeError', message: /"initial"/ });
    assert.throws(() => new SignalSemaphore(1.5), { name: 'RangeError', message: /"initial"/ });
    assert.throws(() => new SignalSemaphore(2 ** 31), { name: 'RangeError', message: /"initial"/ });
    assert.throws(() => new SignalSemaphore(0, new ArrayBuffer(8)), { name: 'TypeError', message: /"sab"/ });
    assert.throws(() => new SignalSemaphore(0, new SharedArrayBuffer(4)), { name: 'RangeError', message: /"sab".*2 Int32s/ });
    assert.throws(() => new SignalSemaphore(0, new SharedArrayBuffer(16), 3), { name: 'RangeError', message: /"index".* 0 to 2/ });
    assert.throws(() => new SignalSemaphore(0, new SharedArrayBuffer(16), '1'), { name: 'TypeError', message: /"index"/ });
    assert.throws(() => SignalSemaphore.from(7), { name: 'TypeError', message: /"value" argument must be a SignalSemaphore/ });
    const s = new SignalSemaphore(2);
    for (const call of [(n) => s.tryAcquire(n), (n) => s.acquireSync(n, 0), (n) => s.release(n)]) {
      assert.throws(() => call('1'), { name: 'TypeError', message: /"n"/ });
      assert.throws(() => call(null), { name: 'TypeError', message: /"n"/ });
      assert.throws(() => call(-1), { name: 'RangeError', message: /"n"/ });
      assert.throws(() => call(0.5), { name: 'RangeError', message: /"n"/ });
      assert.throws(() => call(2 ** 31), { name: 'RangeError', message: /"n"/ });
    }
    assert.throws(() => s.acquireSync(1, -1), { name: 'RangeError', message: /"timeout"/ });
    assert.throws(() => s.acquireSync(1, '5'), { name: 'TypeError', message: /"timeout"/ });
    await assert.rejects(s.acquire('1'), { name: 'TypeError', message: /"n"/ });
    await assert.rejects(s.acquire(-1), { name: 'RangeError', message: /"n"/ });
    await assert.rejects(s.acquire(1, null), { name: 'TypeError', message: /"options"/ });
    await assert.rejects(s.acquire(1, { timeout: 'x' }), { name: 'TypeError', message: /"options.timeout"/ });
    await assert.rejects(s.acquire(1, { timeout: -1 }), { name: 'RangeError', message: /"options.timeout"/ });
    await assert.rejects(s.acquire(1, { signal: {} }), { name: 'TypeError', message: /"options.signal"/ });
    await assert.rejects(s.acquire(1, { priority: Infinity }), { name: 'RangeError', message: /"options.priority"/ });
    const badThis = { name: 'TypeError', message: /"this" value must be a SignalSemaphore/ };
    for (const impostor of [null, {}, { sab: s.sab, i32a: s.i32a, index: 0 }, new Proxy(s, {})]) {
      assert.throws(() => SignalSemaphore.prototype.tryAcquire.call(impostor), badThis);
      assert.throws(() => SignalSemaphore.prototype.release.call(impostor), badThis);
      assert.throws(() => SignalSemaphore.prototype.acquireSync.call(impostor, 1, 0), badThis);
      await assert.rejects(SignalSemaphore.prototype.acquire.call(impostor), badThis);
    }
    assert.deepStrictEqual([s.available, announced(s), queued(s)], [2, 0, 0], 'nothing taken, added or queued');
  });

  it('a release past 2^31 - 1 throws a RangeError naming n (ERR_SIGNAL_SEMAPHORE_OVERFLOW) and adds nothing', () => {
    const s = new SignalSemaphore(2 ** 31 - 4);
    s.release(2);
    assert.throws(() => s.release(2), { name: 'RangeError', code: 'ERR_SIGNAL_SEMAPHORE_OVERFLOW', message: /^The "n" argument \(2\) would take .* past 2147483647/ });
    assert.throws(() => SignalSemaphore.from(s).release(2 ** 31 - 1), { code: 'ERR_SIGNAL_SEMAPHORE_OVERFLOW' });
    assert.strictEqual(s.available, 2 ** 31 - 2, 'nothing added');
    s.release(1);
    assert.strictEqual(s.available, 2 ** 31 - 1);
    s.release(0);
  });

  it('an instance that never acquired releases permits that another takes; a take is consumed: nothing goes back', () => {
    const items = new SignalSemaphore();
    const producer = SignalSemaphore.from(items);
    assert.strictEqual(items.tryAcquire(), false);
    assert.strictEqual(items.tryAcquire(0), true);
    producer.release();
    producer.release(2);
    assert.strictEqual(items.available, 3);
    assert.strictEqual(items.tryAcquire(2), true);
    assert.strictEqual(items.tryAcquire(2), false, 'one left, not two');
    assert.strictEqual(items.acquireSync(1, 0), true);
    assert.strictEqual(items.acquireSync(1, 0), false);
    items.release(); // the consumer's own instance may release too
    assert.strictEqual(producer.tryAcquire(), true);
    assert.deepStrictEqual([items.available, announced(items), queued(items)], [0, 0, 0]);
  });

  it('starting at 0, a producer worker that never acquired wakes the main thread\'s acquire and a worker blocked in acquireSync', async () => {
    const items = new SignalSemaphore(0);
    const consumer = worker(
      `(items, data, wd, port) => {
        port.postMessage('blocking');
        port.postMessage(items.acquireSync(1, ${kBound}));
      }`,
      { items }
    );
    assert.strictEqual(await consumer.next(), 'blocking');
    const mine = woken(items.acquire(1), 'the main thread');
    await until(() => queued(items) === 2 && announced(items) === 2, 'the worker and the main thread to wait');
    const producer = worker(
      `(items, data, wd, port) => {
        items.release();
        port.postMessage('released one');
        port.once('message', () => items.release());
      }`,
      { items }
    );
    assert.strictEqual(await producer.next(), 'released one');
    await until(() => announced(items) === 1, 'one of the two to take the permit and stop waiting');
    producer.postMessage('again');
    await producer.done();
    const [took] = await Promise.all([consumer.next(), mine]);
    assert.strictEqual(took, true, 'the worker took one');
    await consumer.done();
    assert.deepStrictEqual([items.available, announced(items), queued(items)], [0, 0, 0], 'both taken, nothing left waiting');
  });

  it('a bounded buffer of 4 slots with two SignalSemaphores moves 10^4 items from 3 producers to 3 consumers, none lost or taken twice', async () => {
    // The textbook bounded buffer: `empty` counts free slots, `full` the
    // items in them, an AsyncLock guards the ring's two indices. Three
    // producer workers put items 0 .. 9999 (item i by producer i % 3); two
    // consumer workers block, the main thread awaits; each consumer counts
    // every item it takes in seen[item]. Then one -1 per consumer ends them.
    const slots = 4;
    const total = 10000;
    const empty = new SignalSemaphore(slots);
    const full = new SignalSemaphore(0);
    const lock = new AsyncLock();
    // ring[0 .. slots-1] the slots, ring[slots] put index, ring[slots + 1] take index.
    const ring = new Int32Array(new SharedArrayBuffer(4 * (slots + 2)));
    const seen = new Int32Array(new SharedArrayBuffer(4 * total));
    const data = { empty, full, lock, ring: ring.buffer, seen: seen.buffer, slots, total };
    const start = (body, extra) =>
      withMessages(
        new (require('worker_threads').Worker)(
          `
          const { parentPort, workerData: wd } = require('worker_threads');
          const { SignalSemaphore, AsyncLock } = require(wd.root);
          const empty = SignalSemaphore.from(wd.empty);
          const full = SignalSemaphore.from(wd.full);
          const lock = AsyncLock.from(wd.lock);
          const ring = new Int32Array(wd.ring);
          const seen = new Int32Array(wd.seen);
          const put = (item) => {
            if (!empty.acquireSync(1, ${kBound})) throw new Error('no free slot for ' + ${kBound} + ' ms');
            lock.lock();
            try {
              ring[ring[wd.slots] % wd.slots] = item;
              ring[wd.slots]++;
            } finally {
              lock.unlock();
            }
            full.release();
          };
          const take = () => {
            if (!full.acquireSync(1, ${kBound})) throw new Error('no item for ' + ${kBound} + ' ms');
            let item;
            lock.lock();
            try {
              item = ring[ring[wd.slots + 1] % wd.slots];
              ring[wd.slots + 1]++;
            } finally {
              lock.unlock();
            }
            empty.release();
            return item;
          };
          (${body})();
        `,
          { eval: true, workerData: Object.assign({ root }, data, extra) }
        )
      );
    const producers = [0, 1, 2].map((k) =>
      start(
        `() => {
          for (let item = wd.k; item < wd.total; item += 3) put(item);
          parentPort.postMessage('produced');
        }`,
        { k }
      )
    );
    const consumers = [0, 1].map(() =>
      start(`() => {
        let n = 0;
        for (let item = take(); item !== -1; item = take()) {
          Atomics.add(seen, item, 1);
          n++;
        }
        parentPort.postMessage(n);
      }`)
    );
    const mainTake = async () => {
      await woken(full.acquire(1), 'the main consumer');
      const item = await lock.executeLocked(() => {
        const value = ring[ring[slots + 1] % slots];
        ring[slots + 1]++;
        return value;
      });
      empty.release();
      return item;
    };
    const mainPut = async (item) => {
      await woken(empty.acquire(1), 'the main producer');
      await lock.executeLocked(() => {
        ring[ring[slots] % slots] = item;
        ring[slots]++;
      });
      full.release();
    };
    const mainConsumer = (async () => {
      let n = 0;
      for (let item = await mainTake(); item !== -1; item = await mainTake()) {
        Atomics.add(seen, item, 1);
        n++;
      }
      return n;
    })();
    for (const p of producers) assert.strictEqual(await nextOf(p), 'produced');
    for (let i = 0; i < 3; i++) await mainPut(-1); // one end mark per consumer
    const counts = [...(await Promise.all(consumers.map(nextOf))), await mainConsumer];
    await Promise.all([...producers, ...consumers].map((w) => w.done()));
    assert.strictEqual(counts.reduce((a, b) => a + b, 0), total, `items taken by each consumer: ${counts}`);
    const wrong = [];
    for (let item = 0; item < total; item++) if (seen[item] !== 1) wrong.push(`${item}: ${seen[item]}`);
    assert.deepStrictEqual(wrong, [], 'each item taken exactly once');
    assert.deepStrictEqual([empty.available, full.available], [slots, 0]);
    assert.deepStrictEqual([announced(empty), announced(full), queued(empty), queued(full)], [0, 0, 0, 0]);
  });

  it('an async acquire that times out rejects ERR_SIGNAL_SEMAPHORE_TIMEOUT; a blocking one returns false; neither takes or leaves anything queued', async () => {
    const s = new SignalSemaphore(1);
    assert.strictEqual(s.acquireSync(2, 0), false);
    assert.strictEqual(s.acquireSync(2, 5), false);
    await assert.rejects(s.acquire(2, { timeout: 0 }), { code: 'ERR_SIGNAL_SEMAPHORE_TIMEOUT', message: /0 ms/ });
    await assert.rejects(s.acquire(2, { timeout: 5 }), { code: 'ERR_SIGNAL_SEMAPHORE_TIMEOUT', message: /5 ms/ });
    const w = worker(`(items, data, wd, port) => port.postMessage(items.acquireSync(2, 20))`, { items: s });
    assert.strictEqual(await w.next(), false, 'a worker\'s blocking wait times out');
    await w.done();
    assert.deepStrictEqual([s.available, announced(s), queued(s)], [1, 0, 0]);
    // A wait that timed out took no wake-up from the one that did not.
    const other = woken(SignalSemaphore.from(s).acquire(2), 'the other');
    await until(() => queued(s) === 1, 'the other to wait');
    await assert.rejects(s.acquire(2, { timeout: 5 }), { code: 'ERR_SIGNAL_SEMAPHORE_TIMEOUT' });
    s.release();
    await other;
    assert.deepStrictEqual([s.available, announced(s), queued(s)], [0, 0, 0]);
  });

  it('an abort (options.signal) rejects with its reason, taking nothing and leaving nothing queued; the other waiters still get theirs', async () => {
    const s = new SignalSemaphore(0);
    const aborted = makeAbortController();
    aborted.abort();
    await assert.rejects(s.acquire(1, { signal: aborted.signal }), { name: 'AbortError' });
    s.release();
    await assert.rejects(s.acquire(1, { signal: aborted.signal }), { name: 'AbortError' }, 'an aborted signal takes nothing, even when it could');
    assert.strictEqual(s.available, 1);
    s.tryAcquire();
    const controller = makeAbortController();
    const other = woken(s.acquire(1), 'the other');
    // (Through another instance, so that both wait on the value: one of the
    // same instance would wait in its line.)
    const mine = SignalSemaphore.from(s).acquire(1, { signal: controller.signal });
    await until(() => queued(s) === 2, 'both to queue');
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(mine, (error) => error === reason);
    await until(() => queued(s) === 1, 'the other to wait again');
    assert.strictEqual(announced(s), 1);
    s.release();
    await other;
    assert.deepStrictEqual([s.available, announced(s), queued(s)], [0, 0, 0]);
  });

  it('an abort of a take waiting in its instance\'s line rejects it and leaves the takes behind it their turn', async () => {
    const s = new SignalSemaphore(0);
    const first = woken(s.acquire(1), 'the first');
    const controller = makeAbortController();
    const second = s.acquire(1, { signal: controller.signal });
    const third = woken(s.acquire(1), 'the third');
    controller.abort(new Error('second'));
    await assert.rejects(second, { message: 'second' });
    s.release(2);
    await Promise.all([first, third]);
    assert.deepStrictEqual([s.available, announced(s), queued(s)], [0, 0, 0]);
  });

  it('one instance\'s async takes are served first come, first served: a heavy take holds a lighter later one off until it has its permits', async () => {
    const s = new SignalSemaphore(1);
    const order = [];
    const heavy = woken(s.acquire(2), 'the heavy one').then(() => order.push('heavy'));
    const light = woken(s.acquire(1), 'the light one').then(() => order.push('light')); // one is free, but it waits its turn
    await until(() => queued(s) === 1, 'the heavy one to wait on the value');
    assert.deepStrictEqual(order, []);
    assert.strictEqual(s.available, 1, 'the light one did not pass the heavy one');
    s.release(1);
    await heavy;
    assert.deepStrictEqual(order, ['heavy']);
    s.release(1);
    await light;
    assert.deepStrictEqual(order, ['heavy', 'light']);
    assert.deepStrictEqual([s.available, announced(s), queued(s)], [0, 0, 0]);
  });

  for (const how of ['blocked in acquireSync()', 'awaiting acquire()']) {
    it(`a consumer worker terminated while ${how} leaves the waiters count right, and the next release wakes a live waiter`, async () => {
      const items = new SignalSemaphore(0);
      const wait = how === 'blocked in acquireSync()' ? `port.postMessage(items.acquireSync(1, ${kBound}))` : kWorkerTake;
      const dying = worker(`(items, data, wd, port) => { port.postMessage('waiting'); ${wait}; }`, { items });
      const live = worker(`(items, data, wd, port) => { port.postMessage('waiting'); ${wait}; }`, { items });
      assert.strictEqual(await dying.next(), 'waiting');
      assert.strictEqual(await live.next(), 'waiting');
      await until(() => queued(items) === 2 && announced(items) === 2, 'both consumers to wait');
      await dying.terminate();
      await until(() => queued(items) === 1, 'the dead one\'s wait to leave the queue');
      assert.strictEqual(announced(items), 1, 'the dead one no longer counts among the waiters');
      items.release();
      assert.strictEqual(await live.next(), true, 'the live consumer took the permit');
      await live.done();
      assert.deepStrictEqual([items.available, announced(items), queued(items)], [0, 0, 0]);
    });
  }

  it('a consumer worker terminated after taking a permit gives nothing back (a take is consumed)', async () => {
    const items = new SignalSemaphore(1);
    const consumer = worker(
      `(items, data, wd, port) => {
        const took = items.acquireSync(1, ${kBound});
        items.acquire(1).then(() => port.postMessage('a second one'));
        port.postMessage(took);
      }`,
      { items }
    );
    assert.strictEqual(await consumer.next(), true);
    await until(() => queued(items) === 1, 'its second take to wait');
    await consumer.terminate();
    assert.deepStrictEqual([items.available, announced(items), queued(items)], [0, 0, 0], 'nothing came back, nothing left waiting');
    items.release();
    assert.strictEqual(items.available, 1, 'one release, one permit');
  });

  it('a worker terminated in the middle of a release (its permit added, its notify not yet made) still wakes the waiter', async () => {
    // The worker's release stops right after its add: Atomics.load of the
    // waiters word, its next step, blocks (patched here to stand for the
    // moment the thread is stopped at); then it is terminated.
    const items = new SignalSemaphore(0);
    const w = worker(
      `(items, data, wd, port) => {
        const load = Atomics.load;
        Atomics.load = (array, index) => {
          if (array === items.i32a && index === items.index + 1) {
            port.postMessage('stopped');
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
          }
          return load(array, index);
        };
        port.once('message', () => items.release());
        port.postMessage('ready');
      }`,
      { items }
    );
    assert.strictEqual(await w.next(), 'ready');
    const mine = woken(items.acquire(1), 'the main thread');
    await until(() => queued(items) === 1, 'the main thread to wait');
    w.postMessage('release');
    assert.strictEqual(await w.next(), 'stopped');
    assert.strictEqual(items.available, 1, 'the permit is in');
    assert.strictEqual(queued(items), 1, 'its waiter not woken yet');
    await w.terminate();
    await mine; // woken by the worker's teardown
    assert.deepStrictEqual([items.available, announced(items), queued(items)], [0, 0, 0]);
  });

  it('posted to a worker by postMessage and rebuilt with from(), it is the same count in both threads', async () => {
    const items = new SignalSemaphore(0, new SharedArrayBuffer(24), 3);
    const w = withMessages(
      new (require('worker_threads').Worker)(
        `
        const { parentPort, workerData } = require('worker_threads');
        const { SignalSemaphore } = require(workerData.root);
        parentPort.once('message', (posted) => {
          const items = SignalSemaphore.from(posted);
          parentPort.postMessage([items.index, items.available]);
          items.release(3);
          parentPort.postMessage(items.acquireSync(5, ${kBound}));
        });
      `,
        { eval: true, workerData: { root } }
      )
    );
    items.release(2);
    w.postMessage(items);
    assert.deepStrictEqual(await w.next(), [3, 2], 'the same slots, as they were');
    assert.strictEqual(await w.next(), true, 'it took the 5: two released here, three there');
    await w.done();
    assert.deepStrictEqual([items.available, announced(items), queued(items)], [0, 0, 0]);
  });
  it('the take waiting on the count that times out hands its turn to the next take of its line, which a release then wakes', async () => {
    const items = new SignalSemaphore(0);
    const first = items.acquire(1, { timeout: 20 });
    const second = items.acquire(1);
    await assert.rejects(first, { code: 'ERR_SIGNAL_SEMAPHORE_TIMEOUT' });
    items.release(1);
    await woken(second, 'the second take');
    assert.deepStrictEqual([items.available, announced(items), queued(items)], [0, 0, 0]);
  });

  it('a take that got its permits resolves even if its signal throws when it stops listening: a taken permit is not lost', async () => {
    const items = new SignalSemaphore(0);
    const signal = {
      aborted: false,
      reason: undefined,
      addEventListener() {},
      removeEventListener() {
        throw new Error('listener bookkeeping failed');
      },
    };
    const taking = items.acquire(1, { signal });
    items.release(1);
    await woken(taking, 'the take');
    assert.strictEqual(items.available, 0, 'the permit went to the take');
  });
});
