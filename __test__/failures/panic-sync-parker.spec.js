'use strict';
// A thread reuses one parker for all its sync waits (src/parker.rs). When
// the core panics in a sync-wait call (panicForTesting, see
// loading/two-copies.spec.js), that parker may still be queued: here
// `abandon_sync` panics before it takes the abandoned waiter off its queue.
// The wait then stays the thread's (src/napi/env.rs `abandon_sync_wait`),
// and its next wait() first ends it, with the same parker. A notify of that
// stale waiter must not end the thread's next wait, on another element,
// with "ok": not one that takes it before the next wait (its unpark lands
// on the parker, which the retry waits for and the next wait resets), nor
// one that comes during it (the retry took the stale waiter off its queue).

const assert = require('assert');
const { Worker } = require('worker_threads');
const { wait, waitAsync, waitersForTesting } = require('../..');
const binding = require('../../binding');
const { createAtomics } = require('../../lib/atomics');
const { root } = require('../helpers');

/** A wait() whose loop throws after the first slice, so it is abandoned. */
const { wait: throwingWait } = createAtomics(
  Object.assign({}, binding, {
    waitContinue: () => {
      throw new RangeError('Maximum call stack size exceeded');
    },
  })
);

/**
 * Leaves this thread's sync waiter queued on `stale` after a panic in
 * `abandon_sync`.
 */
function abandonWithPanic(stale) {
  binding.panicForTesting('abandon_sync');
  assert.throws(() => throwingWait(stale, 0, 0), RangeError);
  assert.strictEqual(waitersForTesting(stale, 0).registry, 1, 'the stale waiter is still queued');
}

/**
 * A worker that notifies one waiter on `stale`: at once, or, given `next`,
 * once `next` has a waiter (or `done[0]` is set: this thread's wait ended
 * first, so the test would hang waiting). `ready` resolves once it has
 * loaded the package; `notified` with the notify's count and whether
 * `next` had its waiter then.
 */
function notifier(stale, next) {
  const done = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `
    const { workerData, parentPort } = require('worker_threads');
    const { notify, waitersForTesting } = require(workerData.root);
    const stale = new Int32Array(workerData.stale);
    const done = new Int32Array(workerData.done);
    parentPort.postMessage('ready');
    let during = false;
    if (workerData.next) {
      const next = new Int32Array(workerData.next);
      while (!(during = waitersForTesting(next, 0).registry !== 0) && Atomics.load(done, 0) === 0) Atomics.wait(done, 0, 0, 1);
    }
    parentPort.postMessage({ count: notify(stale, 0, 1), during });
    `,
    { eval: true, workerData: { root, stale: stale.buffer, next: next && next.buffer, done: done.buffer } }
  );
  let seen = 0;
  let onReady, onNotified;
  const ready = new Promise((resolve) => (onReady = resolve));
  const notified = new Promise((resolve, reject) => {
    onNotified = resolve;
    worker.once('error', reject);
  });
  worker.on('message', (m) => (++seen === 1 ? onReady : onNotified)(m));
  return { worker, done, ready, notified };
}

describe('a panic in a sync-wait call leaves the next wait unwoken by a stale notify', function () {
  this.timeout(60000);

  it('abandon_sync panics; a notify of the stale waiter before the next wait: passed on, the next wait unwoken', async () => {
    const stale = new Int32Array(new SharedArrayBuffer(4));
    const next = new Int32Array(new SharedArrayBuffer(4));
    abandonWithPanic(stale);
    // Queued behind the stale waiter: its wake-up goes on to this one.
    const behind = waitAsync(stale, 0, 0).value;
    const { worker, notified } = notifier(stale, null);
    try {
      assert.strictEqual((await notified).count, 1, 'the notify took the stale waiter');
      assert.strictEqual(wait(next, 0, 0, 200), 'timed-out', 'woken by a notify meant for the stale waiter');
      assert.strictEqual(await behind, 'ok', 'the stale waiter passed its wake-up on');
    } finally {
      await worker.terminate();
    }
    assert.strictEqual(waitersForTesting().registry, 0);
  });

  it('abandon_sync panics; a notify of the stale waiter during the next wait finds nobody', async () => {
    const stale = new Int32Array(new SharedArrayBuffer(4));
    const next = new Int32Array(new SharedArrayBuffer(4));
    abandonWithPanic(stale);
    // The worker notifies the stale waiter while this thread waits on `next`.
    const { worker, done, ready, notified } = notifier(stale, next);
    try {
      await ready; // loaded: it sees the wait below within its 1,000 ms
      const outcome = wait(next, 0, 0, 1000);
      Atomics.store(done, 0, 1);
      assert.strictEqual(outcome, 'timed-out', 'woken by a notify meant for the stale waiter');
      const { count, during } = await notified;
      assert.ok(during, 'the worker notified only after the wait ended (a loaded machine): nothing was tested');
      assert.strictEqual(count, 0, 'the next wait took the stale waiter off its queue first');
    } finally {
      await worker.terminate();
    }
    assert.strictEqual(waitersForTesting().registry, 0);
  });
});
