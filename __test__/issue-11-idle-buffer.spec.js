'use strict';
// Issue 11: the main thread keeps the reference of the last buffer whose
// waits all ended, made weak, and makes it strong again for the next wait
// on the same address, instead of creating and deleting a reference per
// waiter. Weak, it must keep nothing alive (memory.spec.js: "once settled
// it is collectable"); and once its buffer was collected, another buffer
// that the allocator puts at the same address must get a reference of its
// own: reusing the empty one would leave a pending waiter's buffer
// unprotected, its memory freed and its address reused under a live key.

const assert = require('assert');
const { waitAsync, notify, waitersForTesting } = require('..');
const { fixture, runNode } = require('./helpers');

const SIZE = 64;

describe('issue 11: the idle buffer reference', function () {
  this.timeout(120000);

  (typeof WeakRef === 'function' ? it : it.skip)(
    'a buffer at the address of a collected one is kept alive while its waiter is pending',
    () => {
      const run = runNode(['--expose-gc', '--single-threaded-gc', fixture('idle-buffer.js')], { timeout: 100000 });
      assert.strictEqual(run.status, 0, run.stderr);
      const result = JSON.parse(run.stdout);
      assert.deepStrictEqual(result.failures, []);
      // The allocator gave a collected buffer's address to a new one at
      // least once (else this showed nothing).
      assert.ok(result.sameAddress > 0, 'no buffer got a collected one\'s address');
      assert.strictEqual(result.pending, 0);
    }
  );

  it('waits on two buffers in turn each hold their own buffer', async () => {
    const a = new Int32Array(new SharedArrayBuffer(SIZE));
    const b = new Int32Array(new SharedArrayBuffer(SIZE));
    for (let round = 0; round < 100; round++) {
      const pa = waitAsync(a, 1, 0).value;
      const pb = waitAsync(b, 2, 0).value;
      assert.strictEqual(notify(a, 1, 1), 1);
      assert.strictEqual(await pa, 'ok');
      const pa2 = waitAsync(a, 1, 0).value;
      assert.strictEqual(notify(b, 2, 1), 1);
      assert.strictEqual(notify(a, 1, 1), 1);
      assert.deepStrictEqual(await Promise.all([pa2, pb]), ['ok', 'ok']);
    }
    assert.strictEqual(waitersForTesting().pending, 0);
  });
});
