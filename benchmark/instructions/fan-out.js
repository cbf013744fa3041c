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
const { driveRounds, answerRounds } = require('../lib/rounds');

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
  await driveRounds(__filename, { impl: name, sab: ia.buffer, k }, warmupRounds, Math.floor(ops / k), (round, measured, go) =>
    oneRound(impl, ia, round, k, measured, go)
  );
  return {};
}

/**
 * One round: K waits pending on element 0, the worker told to go, every
 * wait settled "ok". A `measured` round adds the time from go to the last
 * settlement.
 */
function oneRound(impl, ia, round, k, measured, go) {
  const value = (round - 1) & 1; // what the element holds now
  let start;
  return new Promise((resolve, reject) => {
    let settled = 0;
    const onSettled = (outcome) => {
      if (outcome !== 'ok') reject(new Error(`settled ${outcome}`));
      if (++settled < k) return;
      if (measured) o.addMeasured(Number(process.hrtime.bigint() - start));
      resolve();
    };
    for (let w = 0; w < k; w++) {
      const result = impl.waitAsync(ia, 0, value);
      if (!result.async) return reject(new Error(`waiter ${w}: ${result.value}`));
      result.value.then(onSettled);
    }
    if (measured) start = process.hrtime.bigint();
    go();
  });
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
