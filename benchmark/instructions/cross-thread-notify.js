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
// made all K waits pending, told through a control slot with the engine's
// own Atomics (the same in both runs of a case, and once per K notifies).

const { Worker, isMainThread, workerData } = require('worker_threads');
const { once } = require('events');
const o = require('../lib/ops');

const WARMUP_NOTIFIES = 20000;

// Control slots: the round the worker is to run (1-based; -1: stop), and
// the rounds it has finished.
const GO = 0;
const DONE = 1;
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
  const control = new Int32Array(new SharedArrayBuffer(8));
  const times = new Float64Array(new SharedArrayBuffer(8));
  const warmupRounds = Math.max(1, Math.ceil(WARMUP_NOTIFIES / k));
  const peer = new Worker(__filename, {
    workerData: { impl: name, sab: ia.buffer, control: control.buffer, times: times.buffer, warmupRounds },
  });
  await once(peer, 'online');
  let round = 0;
  for (let r = 0; r < warmupRounds; r++) round = await oneRound(impl, ia, control, round, k, false);
  const measured = Math.floor(ops / k);
  for (let r = 0; r < measured; r++) round = await oneRound(impl, ia, control, round, k, true);
  const createNs = created.ns;
  Atomics.store(control, GO, -1);
  Atomics.notify(control, GO);
  await once(peer, 'exit');
  o.check(Atomics.load(control, DONE) === round, 'the worker ran every round');
  return { notifyNs: times[NOTIFY_NS], createNs };
}

// The main thread's time making the waits of the measured rounds, in ns.
const created = { ns: 0 };

/**
 * One round: K waits pending, the worker told to go, every wait settled
 * "ok". A `measured` round adds the time from go to the last settlement,
 * and the time the K waitAsync calls took to `created`.
 */
function oneRound(impl, ia, control, round, k, measured) {
  const value = round & 1; // what the elements hold now
  let start = measured ? process.hrtime.bigint() : 0n;
  return new Promise((resolve, reject) => {
    let settled = 0;
    const onSettled = (outcome) => {
      if (outcome !== 'ok') reject(new Error(`settled ${outcome}`));
      if (++settled < k) return;
      if (measured) o.addMeasured(Number(process.hrtime.bigint() - start));
      resolve(round + 1);
    };
    for (let e = 0; e < k; e++) {
      const result = impl.waitAsync(ia, e, value);
      if (!result.async) return reject(new Error(`element ${e}: ${result.value}`));
      result.value.then(onSettled);
    }
    if (measured) {
      const now = process.hrtime.bigint();
      created.ns += Number(now - start);
      start = now;
    }
    Atomics.store(control, GO, round + 1);
    Atomics.notify(control, GO);
  });
}

function worker() {
  const impl = o.load(workerData.impl);
  const ia = new Int32Array(workerData.sab);
  const control = new Int32Array(workerData.control);
  const times = new Float64Array(workerData.times);
  const k = ia.length;
  for (let round = 1; ; round++) {
    let go;
    while ((go = Atomics.load(control, GO)) === round - 1) Atomics.wait(control, GO, go);
    if (go === -1) return;
    const value = round & 1; // (round r's waiters wait on (r - 1) & 1)
    const start = process.hrtime.bigint();
    for (let e = 0; e < k; e++) {
      Atomics.store(ia, e, value);
      if (impl.notify(ia, e, 1) !== 1) throw new Error(`element ${e} had no waiter`);
    }
    if (round > workerData.warmupRounds) times[NOTIFY_NS] += Number(process.hrtime.bigint() - start);
    Atomics.store(control, DONE, round);
  }
}
