'use strict';
// A take that finds that the holder's thread ended holding the lock
// publishes `abandoned` (the dying thread's teardown runs in the addon and
// cannot; the next taker does), and a wait that ends so is "abandoned".
// An RwLock's mark is reported by the writer that takes it over (and
// clears it), not by the readers meanwhile.

const assert = require('assert');
const { threadId } = require('worker_threads');
const { AsyncLock, RwLock, waitersForTesting } = require('../..');
const { Mutex } = require('../../async-mutex');
const { until } = require('../helpers');
const { record, inWorker } = require('../fixtures/diagnostics');

const queued = (primitive, n = 1) =>
  until(() => waitersForTesting(primitive.i32a, primitive.index).registry >= n, `${n} waiter(s) to queue`);

/** A worker that takes the lock (op 'holdLock' or 'holdWrite') and holds it until terminated. */
async function holder(op, posted) {
  const w = inWorker(op, posted, []);
  w.done.catch(() => {}); // (it never posts what it saw: it is terminated)
  await w.ready;
  return w.worker;
}

describe('diagnostics: abandoned', function () {
  this.timeout(30000);
  let recorder;
  beforeEach(() => (recorder = record(['AsyncLock', 'RwLock', 'async-mutex/Mutex'])));
  afterEach(() => recorder.stop());

  it('AsyncLock: the waiting take that gets the lock of a terminated holder publishes abandoned and ends "abandoned"', async () => {
    const lock = new AsyncLock();
    const worker = await holder('holdLock', { lock });
    const taking = lock.acquire();
    await queued(lock);
    await worker.terminate();
    const release = await taking;
    assert.strictEqual(release.abandoned, true);
    release();
    assert.deepStrictEqual(recorder.lines(), ['wait:start AsyncLock', 'abandoned AsyncLock', 'wait:end AsyncLock abandoned']);
    const { message } = recorder.seen[1];
    assert.strictEqual(message.instance, lock);
    assert.strictEqual(message.kind, 'AsyncLock');
    assert.strictEqual(message.threadId, threadId);
    assert.deepStrictEqual(Object.keys(message).sort(), ['instance', 'kind', 'threadId']);
  });

  it('AsyncLock: a take that finds it free and abandoned publishes abandoned, and no wait; only the first taker', async () => {
    const lock = new AsyncLock();
    const worker = await holder('holdLock', { lock });
    await worker.terminate();
    await until(() => Atomics.load(lock.i32a, lock.index) === AsyncLock.ABANDONED, 'the lock to be given back');
    assert.strictEqual(lock.tryLock(), true);
    lock.unlock();
    assert.strictEqual(lock.tryLock(), true);
    lock.unlock();
    assert.deepStrictEqual(recorder.lines(), ['abandoned AsyncLock']);
  });

  it('AsyncLock: a blocking lock() on a free, abandoned lock publishes it too', async () => {
    const lock = new AsyncLock();
    const worker = await holder('holdLock', { lock });
    await worker.terminate();
    await until(() => Atomics.load(lock.i32a, lock.index) === AsyncLock.ABANDONED, 'the lock to be given back');
    assert.strictEqual(lock.lock(), true);
    assert.strictEqual(lock.abandoned, true);
    lock.unlock();
    assert.deepStrictEqual(recorder.lines(), ['abandoned AsyncLock']);
  });

  it('async-mutex Mutex: reported as the Mutex', async () => {
    const mutex = new Mutex();
    const worker = await holder('holdLock', { lock: mutex });
    const taking = mutex.acquire();
    await queued(mutex);
    await worker.terminate();
    (await taking)();
    assert.deepStrictEqual(recorder.lines(), [
      'wait:start async-mutex/Mutex', 'abandoned async-mutex/Mutex', 'wait:end async-mutex/Mutex abandoned',
    ]);
    assert.strictEqual(recorder.seen[1].message.instance, mutex);
  });

  it('RwLock: the writer that takes over a dead writer\'s mark publishes it, once; readers before it do not', async () => {
    const rwlock = new RwLock();
    const worker = await holder('holdWrite', { rwlock });
    const writing = rwlock.write();
    await queued(rwlock);
    await worker.terminate();
    const release = await writing;
    assert.strictEqual(release.abandoned, true);
    release();
    assert.deepStrictEqual(recorder.lines(), ['wait:start RwLock', 'abandoned RwLock', 'wait:end RwLock abandoned']);
    assert.strictEqual(recorder.seen[1].message.instance, rwlock);
    assert.strictEqual(rwlock.abandoned, false, 'the writer cleared the mark');

    // Readers while the mark stands: none reports it; the writer after them does.
    const again = new RwLock();
    const dead = await holder('holdWrite', { rwlock: again });
    await dead.terminate();
    await until(() => again.abandoned, 'the mark');
    assert.strictEqual(again.tryRead(), true);
    again.releaseRead();
    assert.strictEqual(recorder.lines().length, 3);
    assert.strictEqual(again.writeSync(), true);
    again.releaseWrite();
    assert.deepStrictEqual(recorder.lines().slice(3), ['abandoned RwLock']);
  });
});
