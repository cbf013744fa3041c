'use strict';
// How soon a waiting thread gets an AsyncLock whose holder's thread ends
// holding it: a worker takes the lock, the main thread queues an acquire(),
// then the worker ends (terminate() from the main thread, or process.exit()
// inside it), and the time from that call to the acquire's resolution is
// measured. Wall clock, for the docs; no test reads it.
//
//   node benchmark/lock-handback.js [--rounds 50]

const { Worker } = require('worker_threads');
const { performance } = require('perf_hooks');
const path = require('path');
const { AsyncLock } = require('..');

const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 50;
const root = path.join(__dirname, '..');

async function once(how) {
  const lock = new AsyncLock();
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('worker_threads');
    const lock = require(workerData.root).AsyncLock.from(workerData.lock);
    lock.lock();
    parentPort.postMessage('held');
    parentPort.once('message', () => process.exit(0));
    setInterval(() => {}, 1000);
  `,
    { eval: true, workerData: { root, lock } }
  );
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  await new Promise((resolve) => worker.once('message', resolve));
  const got = lock.acquire();
  const start = performance.now();
  if (how === 'terminate') worker.terminate();
  else worker.postMessage('exit');
  const release = await got;
  const ms = performance.now() - start;
  if (!release.abandoned) throw new Error('the waiter was not told');
  release();
  await exited;
  return ms;
}

(async () => {
  console.log(`Node ${process.versions.node}, ${rounds} rounds each: ms from the call that ends the holder to the waiter's acquire resolving`);
  for (const how of ['terminate', 'exit']) {
    const times = [];
    for (let i = 0; i < rounds; i++) times.push(await once(how));
    times.sort((a, b) => a - b);
    const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(2);
    console.log(`${how === 'terminate' ? 'worker.terminate()' : 'process.exit() in the worker'}: p50 ${at(0.5)}, p99 ${at(0.99)}, max ${at(1)}`);
  }
})();
