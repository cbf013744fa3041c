'use strict';
// While a chunk of woken waiters is being settled, JS runs (promise hooks)
// and may call the binding's `cancel` on another waiter of the same chunk.
// A waiter whose chunk is being settled is no longer the binding's to take
// back: `cancel` must leave it alone. Were it to conclude that waiter's
// N-API deferred, the chunk would then resolve the same, already freed,
// deferred again: a use-after-free (SIGSEGV).

const assert = require('assert');
const { spawnSync } = require('child_process');
const { root } = require('../helpers');

// Main thread (N-API deferreds): two waiters notified at once; the first
// resolve runs a promiseResolve hook that cancels the second's slot.
const script = `
  const async_hooks = require('async_hooks');
  const root = ${JSON.stringify(root)};
  const binding = require(root + '/binding.js');
  const { waitAsync, notify } = require(root);
  const ta = new Int32Array(new SharedArrayBuffer(8));
  const a = waitAsync(ta, 0, 0).value, b = waitAsync(ta, 0, 0).value;
  let armed = true;
  async_hooks.createHook({ promiseResolve() { if (armed) { armed = false; binding.cancel(1); } } }).enable();
  const counted = notify(ta, 0);
  Promise.all([a, b]).then((values) => {
    console.log(JSON.stringify({ counted, values }));
  });
`;

describe('cancel from a promise hook while a chunk settles', function () {
  it('does not resolve a deferred twice (no crash), and both promises settle "ok"', function () {
    const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30000 });
    assert.strictEqual(result.signal, null, `child died of ${result.signal}: ${result.stderr}`);
    assert.strictEqual(result.status, 0, result.stderr);
    assert.deepStrictEqual(JSON.parse(result.stdout.trim()), { counted: 2, values: ['ok', 'ok'] });
  });
});
