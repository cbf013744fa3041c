'use strict';
// The async-mutex entry's Mutex and Semaphore publish their waits under
// their own kinds, `async-mutex/Mutex` and `async-mutex/Semaphore`: a
// Mutex's waits are its AsyncLock's, reported as the Mutex's (an AsyncLock
// of the package over the same word reports as an AsyncLock). cancel() is
// an abort.

const assert = require('assert');
const { AsyncLock, waitersForTesting } = require('../..');
const { Mutex, Semaphore, E_CANCELED } = require('../../async-mutex');
const { until } = require('../helpers');
const { record } = require('../fixtures/diagnostics');

const queued = (primitive, n = 1) =>
  until(() => waitersForTesting(primitive.i32a, primitive.index).registry >= n, `${n} waiter(s) to queue`);

describe('diagnostics: the async-mutex entry\'s waits', function () {
  this.timeout(30000);
  let recorder;
  beforeEach(() => (recorder = record(['async-mutex/Mutex', 'async-mutex/Semaphore', 'AsyncLock'])));
  afterEach(() => recorder.stop());

  it('Mutex: a take that waits publishes as the Mutex; one that does not, nothing', async () => {
    const mutex = new Mutex();
    await mutex.runExclusive(() => {});
    assert.deepStrictEqual(recorder.lines(), []);
    const other = AsyncLock.from(mutex);
    other.lock();
    const taking = mutex.runExclusive(() => 'ran');
    await queued(mutex);
    other.unlock();
    assert.strictEqual(await taking, 'ran');
    assert.deepStrictEqual(recorder.lines(), ['wait:start async-mutex/Mutex', 'wait:end async-mutex/Mutex taken']);
    const { message } = recorder.seen[1];
    assert.strictEqual(message.instance, mutex);
    assert.strictEqual(message.kind, 'async-mutex/Mutex');
    assert.deepStrictEqual(message.what, { lock: true });
  });

  it('Mutex: cancel() of a waiting take is an abort; waitForUnlock() is "unlocked"', async () => {
    const mutex = new Mutex();
    const release = await mutex.acquire();
    const canceled = mutex.acquire();
    const free = mutex.waitForUnlock();
    mutex.cancel();
    await assert.rejects(canceled, (error) => error === E_CANCELED);
    release();
    await free;
    assert.deepStrictEqual(recorder.lines().sort(), [
      'wait:end async-mutex/Mutex abort',
      'wait:end async-mutex/Mutex unlocked',
      'wait:start async-mutex/Mutex',
      'wait:start async-mutex/Mutex',
    ]);
  });

  it('an AsyncLock over a Mutex\'s word reports as an AsyncLock', async () => {
    const mutex = new Mutex();
    const release = await mutex.acquire();
    const lock = AsyncLock.from(mutex);
    const taking = lock.acquire();
    await queued(lock);
    release();
    (await taking)();
    assert.deepStrictEqual(recorder.lines(), ['wait:start AsyncLock', 'wait:end AsyncLock taken']);
    assert.strictEqual(recorder.seen[0].message.instance, lock);
  });

  it('Semaphore: acquire() that waits, { permits: weight }, "taken"; cancel(): "abort"; waitForUnlock(): "unlocked"', async () => {
    const semaphore = new Semaphore(1);
    const [, release] = await semaphore.acquire();
    assert.deepStrictEqual(recorder.lines(), []);
    const taking = semaphore.acquire(1);
    assert.deepStrictEqual(recorder.lines(), ['wait:start async-mutex/Semaphore']);
    release();
    const [, again] = await taking;
    const free = Semaphore.from(semaphore).waitForUnlock(1);
    const canceled = semaphore.acquire(1);
    semaphore.cancel();
    await assert.rejects(canceled, (error) => error === E_CANCELED);
    again();
    await free;
    const lines = recorder.lines();
    assert.deepStrictEqual(lines.slice(0, 2), ['wait:start async-mutex/Semaphore', 'wait:end async-mutex/Semaphore taken']);
    assert.deepStrictEqual(lines.slice(2).sort(), [
      'wait:end async-mutex/Semaphore abort',
      'wait:end async-mutex/Semaphore unlocked',
      'wait:start async-mutex/Semaphore',
      'wait:start async-mutex/Semaphore',
    ]);
    assert.deepStrictEqual(recorder.seen[0].message.what, { permits: 1 });
    assert.strictEqual(recorder.seen[0].message.instance, semaphore);
  });
});
