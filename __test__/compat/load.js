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
];
