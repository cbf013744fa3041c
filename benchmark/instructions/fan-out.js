'use strict';
// Fan-out: the main thread has K waitAsync pending on ONE element (--param
// K); a worker stores and notifies that element once, waking all K; the
// round ends when every promise has settled. Instructions per waiter, the
// whole round (the K waits made, the notify, the K settled), both threads.
// With --wall, the time per waiter from the worker's go until the last
// promise settled (the waits are made before the clock starts). native:
// Atomics.waitAsync and Atomics.notify; addon: the package's.
//
// Rounds alternate the value waited on (0, 1, 0, …), and the worker starts
// a round when the main thread has made all K waits pending, as in
// cross-thread-notify.js (benchmark/lib/rounds.js).

const { isMainThread, workerData } = require('worker_threads');
const o = require('../lib/ops');
const { driveRounds, settleRound, answerRounds } = require('../lib/rounds');

const WARMUP_WAITERS = 20000;

if (isMainThread) {
  o.run(main);
} else {
  worker();
}

async function main(impl, name, ops, k) {
  if (!impl.waitAsync) return { unsupported: 'no Atomics.waitAsync' };
  if (!(k > 0)) throw new Error('--param K (the waiters) must be at least 1');
  const ia = new Int32Array(new SharedArrayBuffer(4));
  const warmupRounds = Math.max(1, Math.ceil(WARMUP_WAITERS / k));
  await driveRounds(__filename, { impl: name, sab: ia.buffer, k }, warmupRounds, Math.floor(ops / k), (round, measured, go) => {
    const value = (round - 1) & 1; // what the element holds now
    return settleRound(k, measured, () => impl.waitAsync(ia, 0, value), go);
  });
  return {};
}

function worker() {
  const impl = o.load(workerData.impl);
  const ia = new Int32Array(workerData.sab);
  answerRounds(new Int32Array(workerData.control), (round) => {
    Atomics.store(ia, 0, round & 1); // (round r's waiters wait on (r - 1) & 1)
    const woken = impl.notify(ia, 0);
    if (woken !== workerData.k) throw new Error(`notify woke ${woken} of ${workerData.k}`);
  });
}
