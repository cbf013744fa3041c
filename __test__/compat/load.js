'use strict';
// The addon loads, the API has the built-ins' shape, and the basic results
// come out right in one thread and in a worker.

const assert = require('assert');

module.exports = [
  {
    name: 'the package loads and exports the functions with the built-ins\' lengths',
    run(ctx) {
      const { pkg } = ctx;
      for (const name of ['waitAsync', 'wait', 'notify', 'ref', 'unref', 'install']) {
        assert.strictEqual(typeof pkg[name], 'function', name);
      }
      assert.deepStrictEqual([pkg.waitAsync.length, pkg.wait.length, pkg.notify.length], [4, 4, 3]);
    },
  },
  {
    name: 'wait, waitAsync and notify give the spec\'s results in one thread',
    async run(ctx) {
      const { api } = ctx;
      const ta = new Int32Array(new SharedArrayBuffer(16));
      assert.strictEqual(api.wait(ta, 0, 1), 'not-equal');
      assert.strictEqual(api.wait(ta, 0, 0, 0), 'timed-out');
      assert.deepStrictEqual(api.waitAsync(ta, 0, 1), { async: false, value: 'not-equal' });
      assert.deepStrictEqual(api.waitAsync(ta, 0, 0, 0), { async: false, value: 'timed-out' });
      const r = api.waitAsync(ta, 0, 0);
      assert.strictEqual(r.async, true);
      assert.ok(r.value instanceof Promise);
      assert.strictEqual(api.notify(ta, 0), 1);
      assert.strictEqual(await r.value, 'ok');
      assert.strictEqual(await api.waitAsync(ta, 1, 0, 10).value, 'timed-out');
      const big = new BigInt64Array(ta.buffer);
      const b = api.waitAsync(big, 1, 0n);
      assert.strictEqual(api.notify(big, 1, 1), 1);
      assert.strictEqual(await b.value, 'ok');
      assert.strictEqual(api.notify(new Int32Array(4), 0), 0, 'a non-shared array gives 0');
      assert.throws(() => api.wait(new Float64Array(new SharedArrayBuffer(8)), 0, 0), TypeError);
      assert.throws(() => api.waitAsync(ta, 4, 0), RangeError);
    },
  },
  {
    name: 'the package loads in a worker',
    async run(ctx) {
      const ta = new Int32Array(new SharedArrayBuffer(16));
      const w = ctx.startWorker(ta.buffer);
      assert.strictEqual(await w.call({ op: 'notify', index: 0 }), 0);
      assert.strictEqual(await w.call({ op: 'wait', index: 0, value: 1 }), 'not-equal');
    },
  },
  {
    name: 'the package tells the main thread from a worker as worker_threads does, without loading it first',
    async run(ctx) {
      // A fresh process: this one has loaded worker_threads, which the
      // package then asks. The worker loads lib/describe.js before it
      // touches worker_threads itself.
      const describeFile = JSON.stringify(require('path').join(ctx.root, 'lib', 'describe.js'));
      const program = `
        const ours = require(${describeFile});
        const main = { isMainThread: ours.isMainThread, threadId: ours.threadId };
        const w = require('worker_threads');
        const shared = new Int32Array(new SharedArrayBuffer(4));
        const { port1, port2 } = new w.MessageChannel();
        new w.Worker(\`
          const ours = require(${describeFile.replace(/\\/g, '\\\\')});
          const seen = { isMainThread: ours.isMainThread, threadId: ours.threadId };
          const w = require('worker_threads');
          w.workerData.port.postMessage({ seen, node: { isMainThread: w.isMainThread, threadId: w.threadId } });
          Atomics.store(w.workerData.shared, 0, 1);
          Atomics.notify(w.workerData.shared, 0);
        \`, { eval: true, workerData: { port: port2, shared }, transferList: [port2] }).unref();
        Atomics.wait(shared, 0, 0, 30000);
        const worker = w.receiveMessageOnPort(port1).message;
        console.log(JSON.stringify({ main, node: { isMainThread: w.isMainThread, threadId: w.threadId }, worker }));
        process.exit(0);
      `;
      // (ctx.runChild: an arm64 install spawns it through qemu-user.)
      const result = await ctx.runChild(['-e', program]);
      assert.strictEqual(result.status, 0, result.stderr);
      const seen = JSON.parse(result.stdout.trim().split('\n').pop());
      assert.deepStrictEqual(seen.main, seen.node);
      assert.deepStrictEqual(seen.main, { isMainThread: true, threadId: 0 });
      assert.deepStrictEqual(seen.worker.seen, seen.worker.node);
      assert.strictEqual(seen.worker.seen.isMainThread, false);
    },
  },
];
