'use strict';
// A Latch opens at zero on every runtime: a worker blocked in wait() and
// the main thread's waitAsync both go on when the last count-down comes
// from another worker, and not before.

const assert = require('assert');
const { Worker } = require('worker_threads');

/** A worker that runs `body` with `latch` (from the posted one) and posts what it returns. */
function run(ctx, latch, body) {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('worker_threads');
    const latch = require(workerData.root).Latch.from(workerData.latch);
    parentPort.postMessage((${body})(latch));
  `,
    { eval: true, workerData: { root: ctx.root, latch } }
  );
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

module.exports = [
  {
    name: 'a Latch opens at zero for a blocked worker and the main thread, counted down from workers',
    async run(ctx) {
      const latch = new ctx.pkg.Latch(2);
      const blocked = run(ctx, latch, '(latch) => latch.wait() && latch.count');
      const mine = latch.waitAsync({ timeout: 20000 });
      await ctx.until(() => ctx.pkg.waitersForTesting(latch.i32a, 0).registry === 2);
      assert.strictEqual(await run(ctx, latch, '(latch) => latch.countDown()'), 1);
      assert.strictEqual(ctx.pkg.waitersForTesting(latch.i32a, 0).registry, 2, 'nobody went on at 1');
      assert.strictEqual(await run(ctx, latch, '(latch) => latch.countDown()'), 0);
      assert.strictEqual(await mine, true);
      assert.strictEqual(await blocked, 0);
      assert.strictEqual(ctx.pkg.waitersForTesting(latch.i32a, 0).registry, 0);
    },
  },
];
