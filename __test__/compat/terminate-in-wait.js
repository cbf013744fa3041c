'use strict';
// worker.terminate() of a worker blocked in wait, or with a pending
// waitAsync, completes, and its waiter leaves the queue; a wake-up that
// lands on it after terminate() goes on to the next waiter.

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
  {
    // The wait's "ok" must not reach a thread whose terminate() was
    // called: on Node the binding asks N-API whether the env can still
    // run JS (src/napi/ffi.rs can_run_js), which every release must answer
    // from terminate() on; elsewhere the engine's interrupt point decides.
    name: 'a notify after terminate() of the first of two workers blocked in wait wakes the second',
    async run(ctx) {
      for (let round = 0; round < 3; round++) {
        const ta = new Int32Array(new SharedArrayBuffer(16));
        const first = ctx.startWorker(ta.buffer);
        first.call({ op: 'wait', index: 0, value: 0 }).catch(() => {});
        await ctx.until(() => ctx.pkg.waitersForTesting(ta, 0).registry === 1);
        const second = ctx.startWorker(ta.buffer);
        const woken = second.call({ op: 'wait', index: 0, value: 0 });
        await ctx.until(() => ctx.pkg.waitersForTesting(ta, 0).registry === 2);
        const exited = first.worker.terminate();
        assert.strictEqual(ctx.api.notify(ta, 0, 1), 1);
        await exited;
        assert.strictEqual(await woken, 'ok', `round ${round}: the wake-up was lost`);
        assert.strictEqual(ctx.pkg.waitersForTesting(ta, 0).registry, 0);
        await second.worker.terminate();
      }
    },
  },
];
