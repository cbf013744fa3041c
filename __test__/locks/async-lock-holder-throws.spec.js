'use strict';
// A holder whose f throws (sync) or rejects (async) while a worker is
// blocked waiting for the lock: executeLocked releases the lock, the worker
// gets it, and the promise rejects with f's own error.

const assert = require('assert');
const { AsyncLock, waitersForTesting } = require('../..');
const { startLockWorker } = require('../fixtures/async-lock-helpers');
const { until } = require('../helpers');

describe('AsyncLock holder that throws', function () {
  let lock;
  let worker;

  beforeEach(async () => {
    lock = new AsyncLock();
    worker = startLockWorker(lock);
    await worker.call('isLocked');
  });

  afterEach(() => worker.terminate());

  /** Runs f under executeLocked once the worker is queued behind it. */
  function holdUntilWorkerQueues(f) {
    let workerGot;
    const result = lock.executeLocked(async () => {
      workerGot = worker.call('lock', {});
      await until(() => waitersForTesting(lock.i32a, 0).registry === 1, 'the worker to block in lock()');
      return f();
    });
    return { result, workerGot: () => workerGot };
  }

  it('f throws synchronously: rejects with that error, and the blocked worker gets the lock', async () => {
    const error = new Error('sync failure');
    const { result, workerGot } = holdUntilWorkerQueues(() => {
      throw error;
    });
    await assert.rejects(result, (e) => e === error);
    assert.strictEqual(await workerGot(), true);
    assert.strictEqual(lock.isLocked(), true, 'now held by the worker');
    await worker.call('unlock');
    assert.strictEqual(lock.isLocked(), false);
  });

  it('f rejects: rejects with that error, and the blocked worker gets the lock', async () => {
    const error = new Error('async failure');
    const { result, workerGot } = holdUntilWorkerQueues(async () => {
      await null;
      throw error;
    });
    await assert.rejects(result, (e) => e === error);
    assert.strictEqual(await workerGot(), true);
    await worker.call('unlock');
    assert.strictEqual(lock.isLocked(), false);
  });

  it('the plain sync throw of the post\'s usage: the lock is free right after', async () => {
    const error = new TypeError('boom');
    await assert.rejects(lock.executeLocked(() => {
      throw error;
    }), (e) => e === error);
    assert.strictEqual(await worker.call('tryLock'), true);
    await worker.call('unlock');
  });
});
