'use strict';
// No lost wake-up under load: 4 threads — the main thread and one worker
// with executeLocked (waitAsync underneath), two workers with the blocking
// lock() (wait underneath) — share one AsyncLock and add 1 to a plain,
// non-atomic counter. Any lost wake-up hangs a thread (the test then times
// out); any broken exclusion loses an increment. 10,000,000 operations when
// CI is set, 400,000 otherwise.

const assert = require('assert');
const { once } = require('events');
const { Worker } = require('worker_threads');
const { AsyncLock, waitersForTesting } = require('../..');
const { fixture } = require('../helpers');

const TOTAL = process.env.CI ? 10000000 : 400000;
const PER_THREAD = TOTAL / 4;

describe('lost wake-ups under load', function () {
  this.timeout(process.env.CI ? 1800000 : 120000);

  it(`${TOTAL.toLocaleString('en')} lock operations across 4 threads, blocking and async mixed: exact count, no hang`, async () => {
    const lock = new AsyncLock();
    const counterBuffer = new SharedArrayBuffer(4);
    const counter = new Int32Array(counterBuffer);
    const workers = ['blocking', 'blocking', 'async'].map(
      (mode) => new Worker(fixture('stress-lock-worker.js'), { workerData: { lock, counter: counterBuffer, n: PER_THREAD, mode } })
    );
    const done = workers.map((w) => Promise.race([once(w, 'message'), once(w, 'error').then(([e]) => Promise.reject(e))]));
    for (let i = 0; i < PER_THREAD; i++) {
      await lock.executeLocked(() => {
        counter[0] = counter[0] + 1;
      });
      if (i % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    const counts = (await Promise.all(done)).map(([n]) => n);
    assert.deepStrictEqual(counts, [PER_THREAD, PER_THREAD, PER_THREAD]);
    assert.strictEqual(counter[0], TOTAL);
    assert.strictEqual(lock.isLocked(), false);
    assert.strictEqual(waitersForTesting(lock.i32a, lock.index).registry, 0);
    await Promise.all(workers.map((w) => w.terminate()));
  });
});
