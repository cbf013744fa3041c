'use strict';
// Teardown storms: batches of workers terminated while blocked in wait(),
// while holding pending waitAsync()s (with and without timeouts), and while
// notifying in a tight loop, plus workers that process.exit() by themselves
// with waits pending. No crash, and every count returns to zero.
// 1,000 workers when CI is set; 200 otherwise.

const assert = require('assert');
const { Worker } = require('worker_threads');
const { waitAsync, notify, waitersForTesting } = require('../..');
const { until, fixture } = require('../helpers');

const ROLES = ['wait', 'waitAsync', 'notify', 'exit', 'waitAsync', 'wait', 'notify', 'waitAsync'];

describe('teardown storm', function () {
  this.timeout(600000);

  it(`${process.env.CI ? 1000 : 200} workers torn down mid-wait, mid-waitAsync and mid-notify`, async () => {
    const total = process.env.CI ? 1000 : 200;
    const batch = 8;
    const ta = new Int32Array(new SharedArrayBuffer(16));
    // The main thread waits on the same element throughout, with and
    // without timeouts, and must be woken or time out normally.
    const mine = [];
    let settledMine = 0;
    for (let done = 0; done < total; done += batch) {
      Atomics.store(ta, 1, 0);
      const workers = ROLES.slice(0, batch).map(
        (role) => new Worker(fixture('storm-worker.js'), { workerData: { buffer: ta.buffer, role } })
      );
      const exits = workers.map((w) => new Promise((resolve) => w.once('exit', resolve)));
      for (const w of workers) w.on('error', (e) => assert.fail(`worker failed: ${e && e.stack}`));
      mine.push(waitAsync(ta, 0, 0, done % 16 ? 50 : undefined).value.then(() => settledMine++));
      await until(() => Atomics.load(ta, 1) === batch, 'every worker of the batch to be under way');
      await Promise.all(workers.map((w, i) => (ROLES[i] === 'exit' ? exits[i] : w.terminate())));
    }
    // Every worker is gone: only the main thread's own waiters may remain.
    const own = waitersForTesting().pending;
    assert.strictEqual(waitersForTesting(ta, 0).registry, own, 'no dead worker\'s waiter is left');
    notify(ta, 0);
    await Promise.all(mine);
    assert.strictEqual(settledMine, mine.length);
    assert.deepStrictEqual(
      [waitersForTesting(ta, 0).registry, waitersForTesting().pending],
      [0, 0]
    );
    await until(() => waitersForTesting().timers === 0, 'every deadline to be dropped');
  });
});
