'use strict';
// worker.terminate() of a worker blocked in wait, or with a pending
// waitAsync, completes, and its waiter leaves the queue.

const assert = require('assert');

module.exports = [
  {
    name: 'terminate() of a worker blocked in wait completes; a later notify finds nobody',
    async run(ctx) {
      const ta = new Int32Array(new SharedArrayBuffer(16));
      const w = ctx.startWorker(ta.buffer);
      w.call({ op: 'wait', index: 0, value: 0 }).catch(() => {});
      await ctx.until(() => ctx.pkg.waitersForTesting(ta, 0).registry === 1);
      await w.worker.terminate();
      assert.strictEqual(ctx.pkg.waitersForTesting(ta, 0).registry, 0);
      assert.strictEqual(ctx.api.notify(ta, 0), 0);
    },
  },
  {
    name: 'terminate() of a worker with a pending waitAsync drops its waiter',
    async run(ctx) {
      const ta = new Int32Array(new SharedArrayBuffer(16));
      const w = ctx.startWorker(ta.buffer);
      const r = w.call({ op: 'waitAsync', index: 1, value: 0 });
      r.settled.catch(() => {});
      assert.deepStrictEqual(await r.reply, { async: true });
      assert.strictEqual(ctx.pkg.waitersForTesting(ta, 1).registry, 1);
      await w.worker.terminate();
      assert.strictEqual(ctx.pkg.waitersForTesting(ta, 1).registry, 0);
      assert.strictEqual(ctx.api.notify(ta, 1), 0);
    },
  },
];
