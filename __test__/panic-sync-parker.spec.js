'use strict';
// A thread reuses one parker for all its sync waits (src/parker.rs). When
// the core panics in a sync-wait call (panicForTesting, see
// two-copies.spec.js), that parker may still be queued: here `abandon_sync`
// panics before it takes the abandoned waiter off its queue. The wait then
// stays the thread's (src/napi/env.rs `abandon_sync_wait`), and its next
// wait() first ends it, with the same parker. A notify of that stale
// waiter must not end the thread's next wait, on another element, with
// "ok": not one that takes it before the next wait (its unpark lands on the
// parker, which the retry waits for and the next wait resets), nor one
// that comes during it (the retry took the stale waiter off its queue).

const assert = require('assert');
const { Worker } = require('worker_threads');
const { wait, waitAsync, waitersForTesting } = require('..');
const binding = require('../binding');
const { createAtomics } = require('../lib/atomics');
const { root } = require('./helpers');

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

/** A worker that notifies one waiter on `stale`, once `next` has one if given. */
function notifier(stale, next) {
  const worker = new Worker(
    `
    const { workerData, parentPort } = require('worker_threads');
    const { notify, waitersForTesting } = require(workerData.root);
    const stale = new Int32Array(workerData.stale);
    const nap = new Int32Array(new SharedArrayBuffer(4));
    if (workerData.next) {
      const next = new Int32Array(workerData.next);
      while (waitersForTesting(next, 0).registry === 0) Atomics.wait(nap, 0, 0, 1);
    }
    parentPort.postMessage(notify(stale, 0, 1));
    `,
    { eval: true, workerData: { root, stale: stale.buffer, next: next && next.buffer } }
  );
  const notified = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return { worker, notified };
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
      assert.strictEqual(await notified, 1, 'the notify took the stale waiter');
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
    const { worker, notified } = notifier(stale, next);
    try {
      assert.strictEqual(wait(next, 0, 0, 1000), 'timed-out', 'woken by a notify meant for the stale waiter');
      assert.strictEqual(await notified, 0, 'the next wait took the stale waiter off its queue first');
    } finally {
      await worker.terminate();
    }
    assert.strictEqual(waitersForTesting().registry, 0);
  });
});
