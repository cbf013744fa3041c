'use strict';
// Bytes per pending waiter: process.memoryUsage() after full GCs, before
// and after queueing N waitAsync waiters (no timeout) on one element.
// Only the last promise is kept by the case, so the deltas count what the
// implementation itself retains per waiter:
// - heapUsed: the JS heap (the promise, and for the addon nothing else);
// - external: memory V8 is told about by embedders (array buffers etc.);
// - rss: everything resident: JS heap pages plus native allocations
//   (V8's C++ waiter nodes and global handles, N-API persistent handles and
//   references, the addon's Rust registry and pending map). rss already
//   contains external, so rss is the total; the two are not added.
// The same again in a worker thread, where the addon keeps its promises on
// the JS heap (lib/pending.js) so that terminate() leaves nothing behind,
// at a price per pending waiter; RSS is the process's, the heap the worker's.
// Needs --expose-gc (run.js passes it; workers inherit it).

const { Worker, isMainThread, workerData, parentPort } = require('worker_threads');
const h = require('../lib/harness');

const N = 100000;
const WARMUP = 1000;

if (isMainThread) {
  h.run(async (impl, name) => {
    if (!impl.waitAsync) return { unsupported: 'no Atomics.waitAsync' };
    h.check(typeof global.gc === 'function', 'run with --expose-gc');
    const main = await perWaiter(impl);
    const worker = await inWorker(name);
    return [
      h.metric('rss', 'RSS delta per waiter (total)', 'bytes', main.rss),
      h.metric('heap', 'JS heap delta per waiter', 'bytes', main.heap),
      h.metric('external', 'external delta per waiter', 'bytes', main.external, { noRatio: true }),
      h.metric('worker-rss', 'in a worker: RSS delta per waiter', 'bytes', worker.rss),
      h.metric('worker-heap', 'in a worker: JS heap delta per waiter', 'bytes', worker.heap),
    ];
  });
} else {
  perWaiter(h.load(workerData.impl)).then((result) => parentPort.postMessage(result));
}

/** Bytes per pending waiter on this thread: RSS, JS heap, external. */
async function perWaiter(impl) {
  const ia = new Int32Array(new SharedArrayBuffer(8));
  // A small warm-up loads and compiles the code paths; it is kept small so
  // that freed memory the allocator keeps does not hide the real growth.
  await fill(impl, ia, WARMUP, null);
  const before = await settledUsage();
  const after = await fill(impl, ia, N, settledUsage);
  const per = (field) => (after[field] - before[field]) / N;
  return { rss: per('rss'), heap: per('heapUsed'), external: per('external') };
}

/** perWaiter in a fresh worker running the same implementation. */
function inWorker(impl) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(__filename, { workerData: { impl } });
    worker.once('message', (result) => {
      worker.terminate().then(() => resolve(result));
    });
    worker.once('error', reject);
  });
}

/** Queues n waiters, measures while they are pending, then wakes them. */
async function fill(impl, ia, n, measure) {
  let last;
  for (let k = 0; k < n; k++) last = impl.waitAsync(ia, 0, 0).value;
  const usage = measure ? await measure() : null;
  h.check(impl.notify(ia, 0) === n, `notify woke all ${n} waiters`);
  h.check((await last) === 'ok', 'the last waiter settled "ok"');
  return usage;
}

/** memoryUsage() after the event loop turned and two full GCs. */
async function settledUsage() {
  await new Promise((resolve) => setImmediate(resolve));
  global.gc();
  global.gc();
  return process.memoryUsage();
}
