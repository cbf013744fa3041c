'use strict';
// Waiters woken by a notify from another thread, both ways, and (with the
// polyfill) a thread blocked in the engine's own Atomics.wait.

const assert = require('assert');
const { Worker } = require('worker_threads');

module.exports = [
  {
    name: 'a notify in the main thread wakes a worker blocked in wait',
    async run(ctx) {
      const ta = new Int32Array(new SharedArrayBuffer(16));
      const w = ctx.startWorker(ta.buffer);
      const result = w.call({ op: 'wait', index: 0, value: 0 });
      await ctx.until(() => ctx.pkg.waitersForTesting(ta, 0).registry === 1);
      assert.strictEqual(ctx.api.notify(ta, 0), 1);
      assert.strictEqual(await result, 'ok');
      assert.strictEqual(ctx.pkg.waitersForTesting(ta, 0).registry, 0);
    },
  },
  {
    name: 'a notify in a worker settles the main thread\'s waitAsync',
    async run(ctx) {
      const ta = new Int32Array(new SharedArrayBuffer(16));
      const w = ctx.startWorker(ta.buffer);
      const r = ctx.api.waitAsync(ta, 1, 0);
      assert.strictEqual(r.async, true);
      assert.strictEqual(await w.call({ op: 'notify', index: 1 }), 1);
      assert.strictEqual(await r.value, 'ok');
    },
  },
  {
    name: 'a notify in one worker wakes another worker\'s waitAsync and wait, oldest first',
    async run(ctx) {
      const ta = new Int32Array(new SharedArrayBuffer(16));
      const [a, b, c] = [ctx.startWorker(ta.buffer), ctx.startWorker(ta.buffer), ctx.startWorker(ta.buffer)];
      const first = a.call({ op: 'waitAsync', index: 2, value: 0 });
      assert.deepStrictEqual(await first.reply, { async: true });
      const second = b.call({ op: 'wait', index: 2, value: 0 });
      await ctx.until(() => ctx.pkg.waitersForTesting(ta, 2).registry === 2);
      assert.strictEqual(await c.call({ op: 'notify', index: 2, count: 1 }), 1);
      assert.strictEqual(await first.settled, 'ok');
      assert.strictEqual(ctx.pkg.waitersForTesting(ta, 2).registry, 1, 'the later waiter is still queued');
      assert.strictEqual(await c.call({ op: 'notify', index: 2, count: 1 }), 1);
      assert.strictEqual(await second, 'ok');
    },
  },
  {
    name: 'a worker\'s waitAsync times out, and 600 of them are settled in order by one notify',
    async run(ctx) {
      const ta = new Int32Array(new SharedArrayBuffer(16));
      const w = ctx.startWorker(ta.buffer);
      const late = w.call({ op: 'waitAsync', index: 0, value: 0, timeout: 20 });
      assert.deepStrictEqual(await late.reply, { async: true });
      assert.strictEqual(await late.settled, 'timed-out');
      const many = w.call({ op: 'waitAsyncMany', index: 0, value: 0, count: 600 });
      assert.deepStrictEqual(await many.reply, { queued: 600 });
      assert.strictEqual(ctx.api.notify(ta, 0), 600);
      const order = await many.settled;
      assert.deepStrictEqual(order, Array.from({ length: 600 }, (_, i) => i + ':ok'));
    },
  },
  {
    name: 'the installed notify also wakes a worker blocked in the engine\'s own Atomics.wait',
    skip: (ctx) => (ctx.mode === 'ponyfill' ? 'only the installed Atomics.notify forwards to the native one' : null),
    async run(ctx) {
      const ta = new Int32Array(new SharedArrayBuffer(16));
      const worker = new Worker(ctx.fixture('compat-native-waiter.js'), { workerData: { sab: ta.buffer, index: 3 } });
      const result = new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      // Nothing tells when the native wait is queued: notify one waiter
      // until one was woken (a notify before it is queued wakes nobody).
      let woken = 0;
      await ctx.until(() => {
        woken += Atomics.notify(ta, 3, 1);
        return woken >= 1;
      });
      assert.strictEqual(woken, 1);
      assert.strictEqual(await result, 'ok');
      await worker.terminate();
    },
  },
];
