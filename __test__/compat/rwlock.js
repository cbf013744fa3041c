'use strict';
// An RwLock's write lock held by a worker that is terminated is released
// on every runtime (the env teardown subtracts its share of the state), to
// the main thread's waiting read; and readers share it there.

const assert = require('assert');
const { Worker } = require('worker_threads');

module.exports = [
  {
    name: 'the write lock of a terminated worker goes to the main thread\'s waiting reads',
    async run(ctx) {
      const rwlock = new ctx.pkg.RwLock();
      const worker = new Worker(
        `
        const { parentPort, workerData } = require('worker_threads');
        const rwlock = require(workerData.root).RwLock.from(workerData.rwlock);
        rwlock.writeSync();
        parentPort.postMessage('held');
        setInterval(() => {}, 1000);
      `,
        { eval: true, workerData: { root: ctx.root, rwlock } }
      );
      await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      assert.strictEqual(rwlock.writeLocked, true);
      const reads = [rwlock.read({ timeout: 20000 }), ctx.pkg.RwLock.from(rwlock).read({ timeout: 20000 })];
      await ctx.until(() => ctx.pkg.waitersForTesting(rwlock.i32a, rwlock.index).registry === 2);
      await worker.terminate();
      const releases = await Promise.all(reads);
      assert.deepStrictEqual([rwlock.writeLocked, rwlock.readers], [false, 2]);
      releases.forEach((release) => release());
      assert.strictEqual(rwlock.tryWrite(), true);
      rwlock.releaseWrite();
    },
  },
];
