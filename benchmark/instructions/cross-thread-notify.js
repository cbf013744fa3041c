'use strict';
// A worker wakes the main thread's waiters one by one, one element each (a
// pool's workers finishing jobs): the main thread has K waitAsync pending
// on K elements (--param K); the worker stores and notifies each element in
// turn; the round ends when every promise has settled. Instructions per
// notify, the whole round (the K waits made, notified and settled), both
// threads; run.js gives the main thread's part too (callgrind
// --separate-threads=yes), the rest being mostly the worker's notifies.
// With --wall, the time per notify from the worker's go until the last
// promise settled (`ns`: the waits are made before the clock starts), the
// worker's notify calls alone (`notifyNs`, its loop of stores and
// notifies, timed by the worker), and the main thread's K waitAsync calls
// (`createNs`: making the waits, as K grows). native: Atomics.waitAsync and
// Atomics.notify; addon: the package's.
//
// Rounds alternate the value waited on (0, 1, 0, …) so that nothing is
// reset between them; the worker starts a round when the main thread has
// made all K waits pending (benchmark/lib/rounds.js).

const { isMainThread, workerData } = require('worker_threads');
const o = require('../lib/ops');
const { driveRounds, settleRound, answerRounds } = require('../lib/rounds');

const WARMUP_NOTIFIES = 20000;

// The worker's time in its notify loops of the measured rounds, in ns (a
// Float64Array of its own).
const NOTIFY_NS = 0;

if (isMainThread) {
  o.run(main);
} else {
  worker();
}

async function main(impl, name, ops, k) {
  if (!impl.waitAsync) return { unsupported: 'no Atomics.waitAsync' };
  if (!(k > 0)) throw new Error('--param K (the elements) must be at least 1');
  const ia = new Int32Array(new SharedArrayBuffer(4 * k));
  const times = new Float64Array(new SharedArrayBuffer(8));
  const warmupRounds = Math.max(1, Math.ceil(WARMUP_NOTIFIES / k));
  const data = { impl: name, sab: ia.buffer, times: times.buffer, warmupRounds };
  let createNs = 0;
  await driveRounds(__filename, data, warmupRounds, Math.floor(ops / k), async (round, measured, go) => {
    const value = (round - 1) & 1; // what the elements hold now
    createNs += await settleRound(k, measured, (e) => impl.waitAsync(ia, e, value), go);
  });
  return { notifyNs: times[NOTIFY_NS], createNs };
}

function worker() {
  const impl = o.load(workerData.impl);
  const ia = new Int32Array(workerData.sab);
  const times = new Float64Array(workerData.times);
  const k = ia.length;
  answerRounds(new Int32Array(workerData.control), (round) => {
    const value = round & 1; // (round r's waiters wait on (r - 1) & 1)
    const start = process.hrtime.bigint();
    for (let e = 0; e < k; e++) {
      Atomics.store(ia, e, value);
      if (impl.notify(ia, e, 1) !== 1) throw new Error(`element ${e} had no waiter`);
    }
    if (round > workerData.warmupRounds) times[NOTIFY_NS] += Number(process.hrtime.bigint() - start);
  });
}
