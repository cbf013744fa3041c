'use strict';
// Mutual exclusion under stress: the main thread (executeLocked) and three
// workers (lock/unlock) each add 1 to a plain Int32 slot 100,000 times, with
// a non-atomic read then write; any overlap of two critical sections loses
// an increment, so the total is exact only if the lock excludes.

const assert = require('assert');
const { AsyncLock, waitersForTesting } = require('../..');
const { startLockWorker } = require('../fixtures/async-lock-helpers');

const N = 100000;
const WORKERS = 3;

describe('AsyncLock mutual exclusion', function () {
  // Several locks in one buffer, one per round; the counter elsewhere.
  const words = new Int32Array(new SharedArrayBuffer(4 * 4));
  const counterBuffer = new SharedArrayBuffer(4);
  const counter = new Int32Array(counterBuffer);

  /** Runs one round on lock slot `index`; `f` is main's critical section. */
  async function round(index, f) {
    const lock = new AsyncLock(words, index);
    counter[0] = 0;
    const workers = [];
    for (let w = 0; w < WORKERS; w++) workers.push(startLockWorker(lock, { counter: counterBuffer }));
    try {
      await Promise.all(workers.map((w) => w.call('isLocked'))); // all running
      const done = workers.map((w) => w.call('increment', { n: N }));
      for (let i = 0; i < N; i++) {
        await lock.executeLocked(f);
        // A main thread also serves its event loop. Stepping out now and then
        // lets the workers in mid-round: the lock is not fair, and a loop of
        // microtasks would otherwise win it back before a woken worker runs.
        if (i % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      assert.deepStrictEqual(await Promise.all(done), [N, N, N]);
      assert.strictEqual(counter[0], (WORKERS + 1) * N);
      assert.strictEqual(words[index], AsyncLock.UNLOCKED, 'the word is free at the end');
      assert.strictEqual(waitersForTesting(words, index).registry, 0, 'nobody is left queued');
    } finally {
      await Promise.all(workers.map((w) => w.terminate()));
    }
  }

  const increment = () => {
    counter[0] = counter[0] + 1;
  };
  // Reads, yields to the event loop while holding the lock, then writes: the
  // workers run meanwhile, so this catches a lock released before f settles.
  const slowIncrement = async () => {
    const value = counter[0];
    if (value % 1000 === 0) await new Promise((resolve) => setImmediate(resolve));
    else await null;
    counter[0] = value + 1;
  };

  for (let r = 0; r < 3; r++) {
    it(`main executeLocked(sync f) + ${WORKERS} workers lock/unlock, ${N} each: exact total (round ${r + 1})`, () =>
      round(r, increment));
  }

  it(`main executeLocked(async f that yields while holding) + ${WORKERS} workers: exact total`, () =>
    round(3, slowIncrement));
});
