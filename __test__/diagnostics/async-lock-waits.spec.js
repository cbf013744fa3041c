'use strict';
// An AsyncLock's takes that have to wait publish wait:start, then wait:end
// (the same message, with how the wait ended and how long it took) on
// diagnostics_channel; a take that does not wait publishes nothing. A
// blocking take in a worker publishes there (channels are per thread).

const assert = require('assert');
const { threadId } = require('worker_threads');
const { AsyncLock, waitersForTesting } = require('../..');
const { until } = require('../helpers');
const { makeAbortController } = require('../fixtures/async-lock-helpers');
const { record, inWorker } = require('../fixtures/diagnostics');

const queued = (lock, n = 1) =>
  until(() => waitersForTesting(lock.i32a, lock.index).registry === n, `${n} waiter(s) to queue`);

describe('diagnostics: AsyncLock waits', function () {
  this.timeout(30000);
  let recorder;
  beforeEach(() => (recorder = record(['AsyncLock'])));
  afterEach(() => recorder.stop());

  it('a take that does not wait publishes nothing', async () => {
    const lock = new AsyncLock();
    await lock.executeLocked(() => {});
    (await lock.acquire())();
    assert.strictEqual(lock.lock(), true);
    lock.unlock();
    assert.strictEqual(lock.tryLock(), true);
    lock.unlock();
    await lock.waitForUnlock();
    assert.strictEqual(lock.lock(0), true); // (a try: 0 ms)
    lock.unlock();
    assert.deepStrictEqual(recorder.lines(), []);
  });

  it('a contended executeLocked: wait:start before it waits, wait:end "taken" once it took the lock, before f runs', async () => {
    const holder = new AsyncLock();
    const lock = AsyncLock.from(holder);
    holder.lock();
    let linesInF;
    const done = lock.executeLocked(() => (linesInF = recorder.lines()));
    assert.deepStrictEqual(recorder.lines(), ['wait:start AsyncLock']);
    await queued(lock);
    holder.unlock();
    await done;
    assert.deepStrictEqual(linesInF, ['wait:start AsyncLock', 'wait:end AsyncLock taken']);
    const [start, end] = recorder.seen;
    assert.strictEqual(start.message, end.message, 'wait:end publishes the start message again');
    const { message } = end;
    assert.strictEqual(message.instance, lock);
    assert.strictEqual(message.kind, 'AsyncLock');
    assert.strictEqual(message.threadId, threadId);
    assert.deepStrictEqual(message.what, { lock: true });
    assert.strictEqual(message.blocking, false);
    assert.strictEqual(message.outcome, 'taken');
    assert.ok(typeof message.waited === 'number' && message.waited >= 0, `waited ${message.waited}`);
  });

  it('a timed-out take: wait:end "timeout"', async () => {
    const holder = new AsyncLock();
    const lock = AsyncLock.from(holder);
    holder.lock();
    await assert.rejects(lock.acquire({ timeout: 20 }), { code: 'ERR_ASYNC_LOCK_TIMEOUT' });
    holder.unlock();
    assert.deepStrictEqual(recorder.lines(), ['wait:start AsyncLock', 'wait:end AsyncLock timeout']);
    assert.ok(recorder.seen[1].message.waited >= 15, `waited ${recorder.seen[1].message.waited}`);
  });

  it('an aborted take: wait:end "abort"', async () => {
    const holder = new AsyncLock();
    const lock = AsyncLock.from(holder);
    holder.lock();
    const controller = makeAbortController();
    const taking = lock.acquire({ signal: controller.signal });
    await queued(lock);
    controller.abort();
    await assert.rejects(taking);
    holder.unlock();
    assert.deepStrictEqual(recorder.lines(), ['wait:start AsyncLock', 'wait:end AsyncLock abort']);
  });

  it('takes waiting in the instance\'s line, and waitForUnlock(): one start and one end each', async () => {
    const holder = new AsyncLock();
    const lock = AsyncLock.from(holder);
    holder.lock();
    const first = lock.acquire();
    const second = lock.executeLocked(() => {});
    const free = lock.waitForUnlock(); // (sees it free once the others are done, takes nothing)
    assert.deepStrictEqual(recorder.lines(), ['wait:start AsyncLock', 'wait:start AsyncLock', 'wait:start AsyncLock']);
    await queued(lock);
    holder.unlock();
    (await first)();
    await second;
    await free;
    const ends = recorder.lines().slice(3);
    assert.deepStrictEqual(ends, ['wait:end AsyncLock taken', 'wait:end AsyncLock taken', 'wait:end AsyncLock unlocked']);
    const starts = recorder.seen.filter((e) => e.event === 'wait:start');
    assert.deepStrictEqual(starts.map((e) => e.message.what), [{ lock: true }, { lock: true }, { unlocked: true }]);
  });

  it('a blocking lock() in a worker publishes there: wait:start, then wait:end "taken", blocking', async () => {
    const lock = new AsyncLock();
    lock.lock();
    const w = inWorker('lock', { lock }, ['AsyncLock']);
    await w.ready;
    await queued(lock);
    lock.unlock();
    const seen = await w.done;
    assert.deepStrictEqual(seen.map((e) => `${e.event} ${e.outcome || ''}`.trim()), ['wait:start', 'wait:end taken']);
    const end = seen[1];
    assert.strictEqual(end.isInstance, true);
    assert.strictEqual(end.messageKind, 'AsyncLock');
    assert.strictEqual(end.threadId, w.threadId);
    assert.strictEqual(end.blocking, true);
    assert.deepStrictEqual(end.what, { lock: true });
    assert.ok(end.waited >= 0);
    assert.deepStrictEqual(end.fields, ['blocking', 'instance', 'kind', 'outcome', 'threadId', 'waited', 'what']);
    assert.deepStrictEqual(recorder.lines(), [], 'nothing in the main thread');
  });

  it('a blocking lock(timeout) that times out: wait:end "timeout"', async () => {
    const holder = new AsyncLock();
    const lock = AsyncLock.from(holder);
    holder.lock();
    // Another instance of this very thread holds it: lock(30) waits, and gives up.
    assert.strictEqual(lock.lock(30), false);
    holder.unlock();
    assert.deepStrictEqual(recorder.lines(), ['wait:start AsyncLock', 'wait:end AsyncLock timeout']);
    assert.strictEqual(recorder.seen[0].message.blocking, true);
  });

  it('a blocking lock() that throws (this thread holds the lock: it would wait forever): wait:end "error"', async () => {
    const holder = new AsyncLock();
    const lock = AsyncLock.from(holder);
    holder.lock();
    assert.throws(() => lock.lock(), { code: 'ERR_ASYNC_LOCK_DEADLOCK' });
    holder.unlock();
    assert.deepStrictEqual(recorder.lines(), ['wait:start AsyncLock', 'wait:end AsyncLock error']);
  });
});
