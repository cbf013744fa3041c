'use strict';
// A worker wakes the main thread's waiters one by one, one element each (a
// pool's workers finishing jobs): the main thread has K waitAsync pending
// on K elements (--param K); the worker stores and notifies each element in
// turn; the round ends when every promise has settled. Instructions (and,
// with --wall, time) per notify until settled, both threads; run.js gives
// the main thread's part too (callgrind --separate-threads=yes), the rest
// being mostly the worker's notifies. native: Atomics.waitAsync and
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

// Control slots, after the K elements: the round the worker is to run
// (1-based; -1: stop), and the rounds it has finished.
const GO = 0;
const DONE = 1;

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
  const peer = new Worker(__filename, { workerData: { impl: name, sab: ia.buffer, control: control.buffer } });
  await once(peer, 'online');
  let round = 0;
  const rounds = async (n) => {
    for (let r = 0; r < n; r++) round = await oneRound(impl, ia, control, round, k);
  };
  await rounds(Math.max(1, Math.ceil(WARMUP_NOTIFIES / k)));
  await o.timed(() => rounds(Math.floor(ops / k))); // measured
  Atomics.store(control, GO, -1);
  Atomics.notify(control, GO);
  await once(peer, 'exit');
  o.check(Atomics.load(control, DONE) === round, 'the worker ran every round');
  return {};
}

/** One round: K waits pending, the worker told to go, every wait settled "ok". */
function oneRound(impl, ia, control, round, k) {
  const value = round & 1; // what the elements hold now
  return new Promise((resolve, reject) => {
    let settled = 0;
    const onSettled = (outcome) => {
      if (outcome !== 'ok') reject(new Error(`settled ${outcome}`));
      if (++settled === k) resolve(round + 1);
    };
    for (let e = 0; e < k; e++) {
      const result = impl.waitAsync(ia, e, value);
      if (!result.async) return reject(new Error(`element ${e}: ${result.value}`));
      result.value.then(onSettled);
    }
    Atomics.store(control, GO, round + 1);
    Atomics.notify(control, GO);
  });
}

function worker() {
  const impl = o.load(workerData.impl);
  const ia = new Int32Array(workerData.sab);
  const control = new Int32Array(workerData.control);
  const k = ia.length;
  for (let round = 1; ; round++) {
    let go;
    while ((go = Atomics.load(control, GO)) === round - 1) Atomics.wait(control, GO, go);
    if (go === -1) return;
    const value = round & 1; // (round r's waiters wait on (r - 1) & 1)
    for (let e = 0; e < k; e++) {
      Atomics.store(ia, e, value);
      o.check(impl.notify(ia, e, 1) === 1, `element ${e} had its waiter`);
    }
    Atomics.store(control, DONE, round);
  }
}
