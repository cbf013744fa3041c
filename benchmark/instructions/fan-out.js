'use strict';
// Fan-out: the main thread has K waitAsync pending on ONE element (--param
// K); a worker stores and notifies that element once, waking all K; the
// round ends when every promise has settled. Instructions per waiter, the
// whole round (the K waits made, the notify, the K settled), both threads.
// With --wall, the time per waiter from the worker's go until the last
// promise settled (the waits are made before the clock starts). native:
// Atomics.waitAsync and Atomics.notify; addon: the package's.
//
// Rounds alternate the value waited on (0, 1, 0, …), as in
// cross-thread-notify.js, and the worker is told to go through a control
// slot with the engine's own Atomics (once per K waiters).

const { Worker, isMainThread, workerData } = require('worker_threads');
const { once } = require('events');
const o = require('../lib/ops');

const WARMUP_WAITERS = 20000;

// Control slots: the round the worker is to run (1-based; -1: stop), and
// the rounds it has finished.
const GO = 0;
const DONE = 1;

if (isMainThread) {
  o.run(main);
} else {
  worker();
}

async function main(impl, name, ops, k) {
  if (!impl.waitAsync) return { unsupported: 'no Atomics.waitAsync' };
  if (!(k > 0)) throw new Error('--param K (the waiters) must be at least 1');
  const ia = new Int32Array(new SharedArrayBuffer(4));
  const control = new Int32Array(new SharedArrayBuffer(8));
  const peer = new Worker(__filename, { workerData: { impl: name, sab: ia.buffer, control: control.buffer, k } });
  await once(peer, 'online');
  let round = 0;
  const warmupRounds = Math.max(1, Math.ceil(WARMUP_WAITERS / k));
  for (let r = 0; r < warmupRounds; r++) round = await oneRound(impl, ia, control, round, k, false);
  const measured = Math.floor(ops / k);
  for (let r = 0; r < measured; r++) round = await oneRound(impl, ia, control, round, k, true);
  Atomics.store(control, GO, -1);
  Atomics.notify(control, GO);
  await once(peer, 'exit');
  o.check(Atomics.load(control, DONE) === round, 'the worker ran every round');
  return {};
}

/**
 * One round: K waits pending on element 0, the worker told to go, every
 * wait settled "ok". A `measured` round adds the time from go to the last
 * settlement.
 */
function oneRound(impl, ia, control, round, k, measured) {
  const value = round & 1; // what the element holds now
  let start;
  return new Promise((resolve, reject) => {
    let settled = 0;
    const onSettled = (outcome) => {
      if (outcome !== 'ok') reject(new Error(`settled ${outcome}`));
      if (++settled < k) return;
      if (measured) o.addMeasured(Number(process.hrtime.bigint() - start));
      resolve(round + 1);
    };
    for (let w = 0; w < k; w++) {
      const result = impl.waitAsync(ia, 0, value);
      if (!result.async) return reject(new Error(`waiter ${w}: ${result.value}`));
      result.value.then(onSettled);
    }
    if (measured) start = process.hrtime.bigint();
    Atomics.store(control, GO, round + 1);
    Atomics.notify(control, GO);
  });
}

function worker() {
  const impl = o.load(workerData.impl);
  const ia = new Int32Array(workerData.sab);
  const control = new Int32Array(workerData.control);
  for (let round = 1; ; round++) {
    let go;
    while ((go = Atomics.load(control, GO)) === round - 1) Atomics.wait(control, GO, go);
    if (go === -1) return;
    Atomics.store(ia, 0, round & 1); // (round r's waiters wait on (r - 1) & 1)
    const woken = impl.notify(ia, 0);
    if (woken !== workerData.k) throw new Error(`notify woke ${woken} of ${workerData.k}`);
    Atomics.store(control, DONE, round);
  }
}
