'use strict';
// An instance is collected, and the core fails to take its row out of the
// table of who holds and who waits (a panic in the core, injected with
// panicForTesting): every snapshot still reads the row's memory, so its
// buffer stays held for good, never freed under it. Each case runs in a
// child (__test__/fixtures/unwatch-fails.js), where a read of freed memory
// crashes only that child.

const assert = require('assert');
const { fixture, runNodeAsync } = require('../helpers');

/** The fixture's report for an instance of `kind`, its row's removal failing (`panic`) or not. */
async function run(kind, fail) {
  const result = await runNodeAsync(['--expose-gc', fixture('unwatch-fails.js'), kind, fail]);
  assert.deepStrictEqual([result.status, result.signal], [0, null], result.stderr);
  return JSON.parse(result.stdout);
}

describe('teardown: a row the core fails to take out of its table', function () {
  this.timeout(60000);

  for (const [kind, state] of [
    ['AsyncLock', { locked: false, contended: false }],
    ['Semaphore', { free: 7, permits: 7 }],
  ]) {
    it(`keeps its buffer held: a snapshot after the ${kind} was collected reads live memory`, async () => {
      const failed = await run(kind, 'panic');
      assert.deepStrictEqual(failed, { collected: false, before: state, after: state });
      // The same without the failure: the row goes, and the buffer is
      // collected (so the case above saw it kept).
      assert.deepStrictEqual(await run(kind, 'none'), { collected: true, before: state });
    });
  }

  it('a worker whose teardown fails to take its rows out: later snapshots read no memory (its buffer went with the worker), and the process goes on', async () => {
    for (const kind of ['AsyncLock', 'Semaphore']) {
      const result = await runNodeAsync(['--expose-gc', fixture('forget-env-fails.js'), kind, 'panic']);
      assert.deepStrictEqual([result.status, result.signal], [0, null], result.stderr);
      const { before, after } = JSON.parse(result.stdout);
      assert.strictEqual(before.length, 1, 'the row stayed');
      assert.deepStrictEqual(after, before, 'read as before, not from freed memory');
      // Without the failure, the row goes with the worker.
      const clean = await runNodeAsync(['--expose-gc', fixture('forget-env-fails.js'), kind, 'none']);
      assert.deepStrictEqual(JSON.parse(clean.stdout), { before: [], after: [] });
    }
  });
});
