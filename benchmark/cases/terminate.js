'use strict';
// Terminate latency: a worker blocked in a sync wait with no timeout
// (native: Atomics.wait; addon: the package's wait); the time for
// `await worker.terminate()`, median and max over several workers, one
// after another. The worker posts 'ready' right before it waits; main
// then gives it 50 ms to block (for the addon it also waits until the
// waiter is queued, which the built-in cannot tell).

const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');
const { once } = require('events');
const h = require('../lib/harness');

const WORKERS = 8;

if (isMainThread) {
  h.run(main);
} else {
  const impl = h.load(workerData.impl);
  const ia = new Int32Array(workerData.sab);
  parentPort.postMessage('ready');
  impl.wait(ia, 0, 0); // nobody notifies: only terminate() ends this
  throw new Error('the wait returned');
}

async function main(impl, name) {
  const ms = [];
  for (let w = 0; w < WORKERS; w++) {
    const ia = new Int32Array(new SharedArrayBuffer(8));
    const worker = new Worker(__filename, { workerData: { impl: name, sab: ia.buffer } });
    let failed = null;
    worker.on('error', (error) => (failed = error));
    await once(worker, 'message');
    await h.sleep(50);
    if (name === 'addon') await queued(ia, w);
    const t0 = h.performance.now();
    await worker.terminate();
    ms.push(h.performance.now() - t0);
    h.check(failed === null, `worker ${w} failed: ${failed}`);
  }
  return [
    h.metric('median', 'await worker.terminate(), median', 'ms', h.median(ms)),
    h.metric('max', 'await worker.terminate(), max', 'ms', h.percentile(ms, 100)),
  ];
}

/** Polls the registry until the worker's wait is queued (addon only). */
async function queued(ia, w) {
  const { waitersForTesting } = require('../..');
  for (let tries = 0; waitersForTesting(ia, 0).registry !== 1; tries++) {
    h.check(tries < 1000, `worker ${w} is queued in the registry within 5 s`);
    if (tries === 0) console.error(`terminate: worker ${w} not queued after 50 ms; waiting`);
    await h.sleep(5);
  }
}
