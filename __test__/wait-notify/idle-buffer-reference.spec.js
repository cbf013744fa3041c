'use strict';
// The main thread keeps the reference of the last buffer whose
// waits all ended, made weak, and makes it strong again for the next wait
// on the same address, instead of creating and deleting a reference per
// waiter. Weak, it must keep nothing alive (memory.spec.js: "once settled
// it is collectable"); and once its buffer was collected, another buffer
// that the allocator puts at the same address must get a reference of its
// own: reusing the empty one would leave a pending waiter's buffer
// unprotected, its memory freed and its address reused under a live key.
// Nor may the idle reference, its buffer still alive, serve a wait on
// another buffer: that one would be held by nothing.

const assert = require('assert');
const { fixture, runNode } = require('../helpers');

/** Whether this is Linux with glibc, whose mmap gives a freed range to the next mapping of its size. */
function isLinuxGlibc() {
  if (process.platform !== 'linux') return false;
  try {
    let report = process.report.getReport();
    if (typeof report === 'string') report = JSON.parse(report); // Node 12
    return Boolean(report.header.glibcVersionRuntime);
  } catch (error) {
    return false;
  }
}

describe('the idle buffer reference', function () {
  this.timeout(120000);

  (typeof WeakRef === 'function' ? it : it.skip)(
    'a buffer at the address of a collected one is kept alive while its waiter is pending',
    function () {
      const run = runNode(['--expose-gc', '--single-threaded-gc', fixture('idle-buffer.js')], { timeout: 100000 });
      assert.strictEqual(run.status, 0, run.stderr);
      const result = JSON.parse(run.stdout);
      assert.deepStrictEqual(result.failures, []);
      assert.strictEqual(result.pending, 0);
      // The allocator gave a collected buffer's address to a new one at
      // least once (else this showed nothing). glibc does, for a buffer
      // mapped on its own; other allocators need not.
      if (result.sameAddress === 0 && !isLinuxGlibc()) {
        console.log(`      skipped: no buffer got a collected one's address (${process.platform}, not glibc)`);
        this.skip();
      }
      assert.ok(result.sameAddress > 0, 'no buffer got a collected one\'s address');
    }
  );

  (typeof WeakRef === 'function' ? it : it.skip)(
    'a wait on another buffer than the idle reference\'s, still alive, keeps its own buffer alive',
    () => {
      const run = runNode(['--expose-gc', fixture('idle-buffer-other.js')], { timeout: 100000 });
      assert.strictEqual(run.status, 0, run.stderr);
      const result = JSON.parse(run.stdout);
      assert.deepStrictEqual(result.failures, []);
      assert.strictEqual(result.pending, 0);
    }
  );
});
