'use strict';
// A thread reuses one parker for all its sync waits (src/parker.rs). When
// the core panics in a sync-wait call (panicForTesting, see
// two-copies.spec.js), that parker may still be queued: here `abandon_sync`
// panics before it takes the abandoned waiter off its queue. A notify that
// later takes that stale waiter must not end the thread's next wait, on
// another element, with "ok": after such a panic the next wait gets a new
// parker (src/napi/env.rs `retire_parker`).

const assert = require('assert');
const { Worker } = require('worker_threads');
const { wait, waitersForTesting } = require('..');
const binding = require('../binding');
const { createAtomics } = require('../lib/atomics');
const { root } = require('./helpers');

describe('a panic in a sync-wait call leaves the next wait unwoken by a stale notify', function () {
  this.timeout(60000);

  it('abandon_sync panics; a notify of the stale waiter does not wake the next wait', async () => {
    const stale = new Int32Array(new SharedArrayBuffer(4));
    const next = new Int32Array(new SharedArrayBuffer(4));
    // Its loop throws after the first slice, so lib/atomics.js abandons it;
    // the abandon panics in the core, and the waiter stays queued.
    const { wait: throwingWait } = createAtomics(
      Object.assign({}, binding, {
        waitContinue: () => {
          throw new RangeError('Maximum call stack size exceeded');
        },
      })
    );
    binding.panicForTesting('abandon_sync');
    assert.throws(() => throwingWait(stale, 0, 0), RangeError);
    assert.strictEqual(waitersForTesting(stale, 0).registry, 1, 'the stale waiter is still queued');
    // A worker notifies the stale waiter while this thread waits on `next`.
    const worker = new Worker(
      `
      const { workerData, parentPort } = require('worker_threads');
      const { notify, waitersForTesting } = require(workerData.root);
      const stale = new Int32Array(workerData.stale);
      const next = new Int32Array(workerData.next);
      const nap = new Int32Array(new SharedArrayBuffer(4));
      while (waitersForTesting(next, 0).registry === 0) Atomics.wait(nap, 0, 0, 1);
      parentPort.postMessage(notify(stale, 0, 1));
      `,
      { eval: true, workerData: { root, stale: stale.buffer, next: next.buffer } }
    );
    const notified = new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    try {
      assert.strictEqual(wait(next, 0, 0, 1000), 'timed-out', 'woken by a notify meant for the stale waiter');
      assert.strictEqual(await notified, 1, 'the notify took the stale waiter');
    } finally {
      await worker.terminate();
    }
    assert.strictEqual(waitersForTesting().registry, 0);
  });
});
