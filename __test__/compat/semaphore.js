'use strict';
// A Semaphore's permits held by a worker that is terminated come back on
// every runtime (the env teardown gives back its stake), to the main
// thread's waiting acquire.

const assert = require('assert');
const { Worker } = require('worker_threads');

module.exports = [
  {
    name: 'the permits of a terminated worker come back to the main thread\'s waiting acquire',
    async run(ctx) {
      const semaphore = new ctx.pkg.Semaphore(2);
      const worker = new Worker(
        `
        const { parentPort, workerData } = require('worker_threads');
        const semaphore = require(workerData.root).Semaphore.from(workerData.semaphore);
        semaphore.acquireSync(2);
        parentPort.postMessage('held');
        setInterval(() => {}, 1000);
      `,
        { eval: true, workerData: { root: ctx.root, semaphore } }
      );
      await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      assert.strictEqual(semaphore.available, 0);
      const mine = semaphore.acquire(2, { timeout: 20000 });
      await ctx.until(() => ctx.pkg.waitersForTesting(semaphore.i32a, semaphore.index).registry === 1);
      await worker.terminate();
      const release = await mine;
      assert.strictEqual(semaphore.held, 2);
      release();
      assert.strictEqual(semaphore.available, 2);
    },
  },
];
