'use strict';
// The other primitives of the family publish their waits as AsyncLock
// does (async-lock-waits.spec.js): wait:start before the wait, wait:end
// with how it ended, in the thread that waits; the blocking forms in a
// worker that records them there.

const assert = require('assert');
const { threadId } = require('worker_threads');
const { Semaphore, RwLock, Condition, Latch, Barrier, AsyncLock, waitersForTesting } = require('../..');
const { until } = require('../helpers');
const { makeAbortController } = require('../fixtures/async-lock-helpers');
const { record, inWorker } = require('../fixtures/diagnostics');

const queued = (primitive, n = 1) =>
  until(() => waitersForTesting(primitive.i32a, primitive.index).registry >= n, `${n} waiter(s) to queue`);

/** The worker's recorded events as 'event outcome' lines. */
const lines = (seen) => seen.map((e) => `${e.event} ${e.kind}${e.outcome ? ` ${e.outcome}` : ''}`);

describe('diagnostics: the family\'s waits', function () {
  this.timeout(30000);
  let recorder;
  beforeEach(() => (recorder = record(['Semaphore', 'RwLock', 'Condition', 'Latch', 'Barrier'])));
  afterEach(() => recorder.stop());

  describe('Semaphore', () => {
    it('acquire() that waits: wait:start { permits }, wait:end "taken"; one that does not: nothing', async () => {
      const semaphore = new Semaphore(2);
      (await semaphore.acquire(2))();
      assert.deepStrictEqual(recorder.lines(), []);
      const holder = Semaphore.from(semaphore);
      assert.strictEqual(holder.tryAcquire(2), true);
      const taking = semaphore.acquire(2);
      assert.deepStrictEqual(recorder.lines(), ['wait:start Semaphore']);
      await queued(semaphore);
      holder.release(2);
      (await taking)();
      assert.deepStrictEqual(recorder.lines(), ['wait:start Semaphore', 'wait:end Semaphore taken']);
      const { message } = recorder.seen[1];
      assert.strictEqual(message.instance, semaphore);
      assert.deepStrictEqual(message.what, { permits: 2 });
      assert.strictEqual(message.blocking, false);
      assert.strictEqual(message.threadId, threadId);
    });

    it('acquire() that times out or aborts: "timeout", "abort"', async () => {
      const semaphore = new Semaphore(1);
      assert.strictEqual(semaphore.tryAcquire(), true);
      await assert.rejects(Semaphore.from(semaphore).acquire(1, { timeout: 20 }), { code: 'ERR_SEMAPHORE_TIMEOUT' });
      const controller = makeAbortController();
      const other = Semaphore.from(semaphore);
      const taking = other.acquire(1, { signal: controller.signal });
      await queued(semaphore);
      controller.abort();
      await assert.rejects(taking);
      semaphore.release();
      assert.deepStrictEqual(recorder.lines(), [
        'wait:start Semaphore', 'wait:end Semaphore timeout', 'wait:start Semaphore', 'wait:end Semaphore abort',
      ]);
    });

    it('acquireSync() in a worker: blocking, "taken"', async () => {
      const semaphore = new Semaphore(2);
      assert.strictEqual(semaphore.tryAcquire(2), true);
      const w = inWorker('acquireSync', { semaphore }, ['Semaphore']);
      await w.ready;
      await queued(semaphore);
      semaphore.release(2);
      const seen = await w.done;
      assert.deepStrictEqual(lines(seen), ['wait:start Semaphore', 'wait:end Semaphore taken']);
      assert.strictEqual(seen[1].blocking, true);
      assert.strictEqual(seen[1].isInstance, true);
      assert.deepStrictEqual(seen[1].what, { permits: 2 });
      assert.strictEqual(seen[1].threadId, w.threadId);
    });
  });

  describe('RwLock', () => {
    it('read() and write() that wait: { mode }, "taken"', async () => {
      const rwlock = new RwLock();
      const writer = RwLock.from(rwlock);
      assert.strictEqual(writer.tryWrite(), true);
      const reading = rwlock.read();
      await queued(rwlock);
      writer.releaseWrite();
      const release = await reading;
      const writing = writer.write();
      await queued(rwlock);
      release();
      (await writing)();
      assert.deepStrictEqual(recorder.lines(), [
        'wait:start RwLock', 'wait:end RwLock taken', 'wait:start RwLock', 'wait:end RwLock taken',
      ]);
      assert.deepStrictEqual(recorder.seen.map((e) => e.message.what.mode), ['read', 'read', 'write', 'write']);
      assert.deepStrictEqual(recorder.seen.map((e) => e.message.instance === rwlock), [true, true, false, false]);
    });

    it('write() that times out: "timeout"', async () => {
      const rwlock = new RwLock();
      assert.strictEqual(rwlock.tryRead(), true);
      await assert.rejects(RwLock.from(rwlock).write({ timeout: 20 }), { code: 'ERR_RWLOCK_TIMEOUT' });
      rwlock.releaseRead();
      assert.deepStrictEqual(recorder.lines(), ['wait:start RwLock', 'wait:end RwLock timeout']);
    });

    for (const op of ['readSync', 'writeSync']) {
      it(`${op}() in a worker: blocking, "taken"`, async () => {
        const rwlock = new RwLock();
        assert.strictEqual(rwlock.tryWrite(), true);
        const w = inWorker(op, { rwlock }, ['RwLock']);
        await w.ready;
        await queued(rwlock);
        rwlock.releaseWrite();
        const seen = await w.done;
        assert.deepStrictEqual(lines(seen), ['wait:start RwLock', 'wait:end RwLock taken']);
        assert.strictEqual(seen[1].blocking, true);
        assert.strictEqual(seen[1].what.mode, op === 'readSync' ? 'read' : 'write');
      });
    }
  });

  describe('Condition', () => {
    it('waitAsync(): wait:start before the lock is released, "woken" before it is taken again; a timeout: "timeout"', async () => {
      const lock = new AsyncLock();
      const condition = new Condition(new SharedArrayBuffer(4));
      const released = await lock.acquire();
      const waiting = condition.waitAsync(lock);
      assert.deepStrictEqual(recorder.lines(), ['wait:start Condition']);
      await queued(condition);
      condition.notify();
      assert.strictEqual(await waiting, true);
      released();
      assert.deepStrictEqual(recorder.lines(), ['wait:start Condition', 'wait:end Condition woken']);
      const { message } = recorder.seen[1];
      assert.strictEqual(message.instance, condition);
      assert.deepStrictEqual(message.what, { notified: true });
      assert.strictEqual(message.blocking, false);
      await lock.executeLocked(() => condition.waitAsync(lock, { timeout: 10 }));
      assert.deepStrictEqual(recorder.lines().slice(2), ['wait:start Condition', 'wait:end Condition timeout']);
    });

    it('waitAsync() aborted: "abort"', async () => {
      const lock = new AsyncLock();
      const condition = new Condition(new SharedArrayBuffer(4));
      const controller = makeAbortController();
      await lock.executeLocked(async () => {
        const waiting = condition.waitAsync(lock, { signal: controller.signal });
        await queued(condition);
        controller.abort();
        await assert.rejects(waiting);
      });
      assert.deepStrictEqual(recorder.lines(), ['wait:start Condition', 'wait:end Condition abort']);
    });

    it('wait() in a worker: blocking, "woken"', async () => {
      const lock = new AsyncLock();
      const condition = new Condition(new SharedArrayBuffer(4));
      const w = inWorker('conditionWait', { lock, condition }, ['Condition']);
      await w.ready;
      await queued(condition);
      condition.notify();
      const seen = await w.done;
      assert.deepStrictEqual(lines(seen), ['wait:start Condition', 'wait:end Condition woken']);
      assert.strictEqual(seen[1].blocking, true);
    });
  });

  describe('Latch', () => {
    it('waitAsync(): "reached"; on an open latch nothing; a timeout: "timeout"', async () => {
      const latch = new Latch(1);
      assert.strictEqual(await latch.waitAsync({ timeout: 10 }), false);
      const waiting = latch.waitAsync();
      await queued(latch);
      latch.countDown();
      assert.strictEqual(await waiting, true);
      assert.strictEqual(await latch.waitAsync(), true);
      assert.deepStrictEqual(recorder.lines(), [
        'wait:start Latch', 'wait:end Latch timeout', 'wait:start Latch', 'wait:end Latch reached',
      ]);
      assert.deepStrictEqual(recorder.seen[3].message.what, { count: 0 });
    });

    it('wait() in a worker: blocking, "reached"', async () => {
      const latch = new Latch(1);
      const w = inWorker('latchWait', { latch }, ['Latch']);
      await w.ready;
      await queued(latch);
      latch.countDown();
      const seen = await w.done;
      assert.deepStrictEqual(lines(seen), ['wait:start Latch', 'wait:end Latch reached']);
      assert.strictEqual(seen[1].blocking, true);
    });
  });

  describe('Barrier', () => {
    it('arriveAndWaitAsync(): "arrived" for a party that waited, nothing for the last; "timeout" breaks it, "broken" for the others', async () => {
      const barrier = new Barrier(2);
      const waiting = barrier.arriveAndWaitAsync();
      assert.deepStrictEqual(recorder.lines(), ['wait:start Barrier']);
      assert.strictEqual(await Barrier.from(barrier).arriveAndWaitAsync(), 1); // the last: no wait
      assert.strictEqual(await waiting, 0);
      assert.deepStrictEqual(recorder.lines(), ['wait:start Barrier', 'wait:end Barrier arrived']);
      assert.deepStrictEqual(recorder.seen[1].message.what, { parties: 2 });

      const three = new Barrier(3);
      const other = Barrier.from(three).arriveAndWaitAsync();
      await assert.rejects(three.arriveAndWaitAsync({ timeout: 10 }), { code: 'ERR_BARRIER_TIMEOUT' });
      await assert.rejects(other, { code: 'ERR_BARRIER_BROKEN' });
      const ends = recorder.lines().slice(2).filter((line) => line.startsWith('wait:end'));
      assert.deepStrictEqual(ends.sort(), ['wait:end Barrier broken', 'wait:end Barrier timeout']);
    });

    it('arriveAndWait() in a worker: blocking, "arrived"', async () => {
      const barrier = new Barrier(2);
      const w = inWorker('barrierWait', { barrier }, ['Barrier']);
      await w.ready;
      await queued(barrier);
      barrier.arriveAndWait();
      const seen = await w.done;
      assert.deepStrictEqual(lines(seen), ['wait:start Barrier', 'wait:end Barrier arrived']);
      assert.strictEqual(seen[1].blocking, true);
      assert.deepStrictEqual(recorder.lines(), [], 'the last party did not wait');
    });
  });
});
