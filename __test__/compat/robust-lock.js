'use strict';
// An AsyncLock whose holder's thread ends holding it is given back, on every
// runtime: the env cleanup hook frees the word, and the next holder is told.

const assert = require('assert');
const { Worker } = require('worker_threads');

/** A worker that takes `lock` and then ends `how` ('terminate', 'exit' or 'end'). */
function holder(ctx, lock, how) {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('worker_threads');
    const lock = require(workerData.root).AsyncLock.from(workerData.lock);
    lock.lock();
    parentPort.postMessage('held');
    parentPort.once('message', (how) => {
      if (how === 'exit') process.exit(0);
      if (how === 'end') parentPort.close();
    });
  `,
    { eval: true, workerData: { root: ctx.root, lock } }
  );
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  const held = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    held,
    end() {
      if (how === 'terminate') return worker.terminate().then(() => exited);
      worker.postMessage(how);
      return exited;
    },
  };
}

module.exports = ['terminate', 'exit', 'end'].map((how) => ({
  name: `an AsyncLock whose holder ends by ${how} goes to the waiting main thread, told it was abandoned`,
  async run(ctx) {
    const lock = new ctx.pkg.AsyncLock();
    const h = holder(ctx, lock, how);
    await h.held;
    const got = lock.acquire();
    await ctx.until(() => ctx.pkg.waitersForTesting(lock.i32a, 0).registry === 1);
    await h.end();
    const release = await got;
    assert.strictEqual(release.abandoned, true);
    release();
    assert.strictEqual(lock.isLocked(), false);
    assert.strictEqual(lock.tryLock(), true);
    assert.strictEqual(lock.abandoned, false);
    lock.unlock();
  },
}));
