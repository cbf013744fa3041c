'use strict';
// A worker that exits or is terminated with waiters queued: its waiters
// leave the registry, later notifies neither count nor crash on them, and
// terminate() of a worker blocked in wait() completes.

const assert = require('assert');
const { Worker } = require('worker_threads');
const { waitAsync, notify, waitersForTesting } = require('../..');
const { until, startWorker, fixture } = require('../helpers');

describe('worker teardown', function () {
  it('terminate() with pending waitAsync removes its waiters; notify does not count them', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    const w = startWorker();
    for (let i = 0; i < 3; i++) {
      const { queued } = w.waitAsync({ buffer: ta.buffer, index: 0, value: 0, timeout: i === 0 ? 60000 : undefined });
      await queued;
    }
    const mine = waitAsync(ta, 0, 0).value;
    assert.strictEqual(waitersForTesting(ta, 0).registry, 4);
    await w.terminate();
    assert.strictEqual(waitersForTesting(ta, 0).registry, 1, 'only the main thread\'s waiter is left');
    assert.strictEqual(notify(ta, 0), 1);
    assert.strictEqual(await mine, 'ok');
    await until(() => waitersForTesting().timers === 0, 'the terminated worker\'s deadline to be dropped');
  });

  it('a worker that exits by itself with waiters pending leaves none behind', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    const w = startWorker();
    await w.waitAsync({ buffer: ta.buffer, index: 1, value: 0 }).queued;
    const exited = new Promise((resolve) => w.worker.once('exit', resolve));
    w.worker.postMessage({ op: 'exit', code: 3 });
    assert.strictEqual(await exited, 3);
    assert.strictEqual(waitersForTesting(ta, 1).registry, 0);
    assert.strictEqual(notify(ta, 1), 0);
  });

  it('terminate() of a worker blocked in wait(Infinity) completes, and its waiter is gone', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    const w = startWorker();
    w.call({ op: 'wait', buffer: ta.buffer, index: 2, value: 0 }).catch(() => {});
    await until(() => waitersForTesting(ta, 2).registry === 1, 'the worker to block');
    const code = await w.terminate();
    assert.strictEqual(code, 1, 'terminated, not finished');
    assert.strictEqual(waitersForTesting(ta, 2).registry, 0);
    assert.strictEqual(notify(ta, 2), 0);
  });

  it('notifies racing with terminations never crash and never count the dead', async function () {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    const rounds = process.env.CI ? 40 : 10;
    for (let round = 0; round < rounds; round++) {
      const workers = [0, 1, 2].map(() => new Worker(fixture('wait-forever.js'), { workerData: { buffer: ta.buffer } }));
      await until(() => waitersForTesting(ta, 0).registry >= 6, 'workers to queue');
      let stop = false;
      const notifier = (async () => {
        while (!stop) {
          notify(ta, 0, 1);
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      await Promise.all(workers.map((w) => w.terminate()));
      stop = true;
      await notifier;
      assert.strictEqual(waitersForTesting(ta, 0).registry, 0);
    }
  });
});
