'use strict';
// A Barrier's generation is broken for the others on every runtime when a
// party's worker is terminated while it waits (its env teardown breaks it).

const assert = require('assert');
const { Worker } = require('worker_threads');

module.exports = [
  {
    name: 'a party terminated while it waits breaks the generation for the main thread',
    async run(ctx) {
      const barrier = new ctx.pkg.Barrier(3);
      const worker = new Worker(
        `
        const { workerData } = require('worker_threads');
        require(workerData.root).Barrier.from(workerData.barrier).arriveAndWait();
      `,
        { eval: true, workerData: { root: ctx.root, barrier } }
      );
      worker.on('error', () => {});
      await ctx.until(() => barrier.waiting === 1);
      // (Its outcome taken at once: it may reject before terminate() resolves.)
      const mine = barrier.arriveAndWaitAsync({ timeout: 20000 }).then(() => 'passed', (error) => error.code);
      await ctx.until(() => ctx.pkg.waitersForTesting(barrier.i32a, barrier.index).registry === 2);
      await worker.terminate();
      assert.strictEqual(await mine, 'ERR_BARRIER_BROKEN');
      barrier.reset();
      assert.strictEqual(barrier.broken, false);
    },
  },
];
