'use strict';
// A pending waitAsync keeps its process alive until it settles (unlike the
// native one); with nothing pending, or after unref(), the process exits.

const assert = require('assert');

function scenario(ctx, name) {
  return ctx.runChild([ctx.fixture('compat-keep-alive.js'), ctx.mode, name]);
}

module.exports = [
  {
    name: 'a pending waitAsync with a timeout keeps the process alive until "timed-out"',
    async run(ctx) {
      const child = await scenario(ctx, 'timeout');
      assert.strictEqual(child.status, 0, child.stderr);
      assert.strictEqual(child.stdout, 'timed-out\nexit\n');
    },
  },
  {
    name: 'a pending waitAsync keeps the process alive until a worker notifies it',
    async run(ctx) {
      const child = await scenario(ctx, 'worker-notify');
      assert.strictEqual(child.status, 0, child.stderr);
      assert.deepStrictEqual(child.stdout.split('\n').sort(), ['', 'exit', 'notify 1', 'ok']);
    },
  },
  {
    name: 'nothing pending: the process exits',
    async run(ctx) {
      const child = await scenario(ctx, 'nothing');
      assert.strictEqual(child.status, 0, child.stderr);
      assert.strictEqual(child.stdout, 'exit\n');
    },
  },
  {
    name: 'after unref() a pending waitAsync does not hold the process',
    async run(ctx) {
      const child = await scenario(ctx, 'unref');
      assert.strictEqual(child.status, 0, child.stderr);
      assert.strictEqual(child.stdout, 'exit\n');
    },
  },
];
