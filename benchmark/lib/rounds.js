'use strict';
// What the cases in which a worker answers the main thread round by round
// share (benchmark/instructions/cross-thread-notify.js, fan-out.js): a
// control channel in a SharedArrayBuffer of its own, worked with the
// engine's own Atomics (the same in both implementations' runs, and once
// per round), and the main thread's loop of warm-up and measured rounds.
// Rounds are numbered from 1; round r's waiters wait on (r - 1) & 1 and
// the worker stores r & 1, so that nothing is reset between rounds.

const { Worker } = require('worker_threads');
const { once } = require('events');
const o = require('./ops');

// Control slots: the round the worker is to run (-1: stop), and the rounds
// it has finished.
const GO = 0;
const DONE = 1;

/**
 * Main thread: starts `file` as a worker with `workerData` and the channel
 * (`workerData.control`), runs `warmupRounds` rounds and then
 * `measuredRounds`, each `round(r, measured, go)`, which makes the round's
 * waits, calls `go()` to start the worker on it, and resolves when the
 * round is over; then stops the worker and checks it ran every round.
 */
async function driveRounds(file, workerData, warmupRounds, measuredRounds, round) {
  const control = new Int32Array(new SharedArrayBuffer(8));
  const peer = new Worker(file, { workerData: Object.assign({ control: control.buffer }, workerData) });
  await once(peer, 'online');
  const tell = (value) => {
    Atomics.store(control, GO, value);
    Atomics.notify(control, GO);
  };
  let r = 0;
  while (r < warmupRounds + measuredRounds) {
    r++;
    await round(r, r > warmupRounds, () => tell(r));
  }
  tell(-1);
  await once(peer, 'exit');
  if (Atomics.load(control, DONE) !== r) throw new Error('the worker did not run every round');
}

/**
 * Main thread, one round's waits: makes `k` of them with `wait(w)` (a
 * waitAsync result, which must be pending), starts the worker (`go()`),
 * and resolves once every one has settled "ok". A `measured` round adds
 * the time from go to the last settlement to the case's measured time
 * (ops.js `addMeasured`), and resolves with the time the `k` calls took,
 * in ns (0 when not measured).
 */
function settleRound(k, measured, wait, go) {
  let start = measured ? process.hrtime.bigint() : 0n;
  let createNs = 0;
  return new Promise((resolve, reject) => {
    let settled = 0;
    const onSettled = (outcome) => {
      if (outcome !== 'ok') reject(new Error(`settled ${outcome}`));
      if (++settled < k) return;
      if (measured) o.addMeasured(Number(process.hrtime.bigint() - start));
      resolve(createNs);
    };
    for (let w = 0; w < k; w++) {
      const result = wait(w);
      if (!result.async) return reject(new Error(`wait ${w}: ${result.value}`));
      result.value.then(onSettled);
    }
    if (measured) {
      const now = process.hrtime.bigint();
      createNs = Number(now - start);
      start = now;
    }
    go();
  });
}

/** Worker: runs `round(r)` for each round the main thread starts, until it stops them. */
function answerRounds(control, round) {
  for (let r = 1; ; r++) {
    let go;
    while ((go = Atomics.load(control, GO)) === r - 1) Atomics.wait(control, GO, go);
    if (go === -1) return;
    round(r);
    Atomics.store(control, DONE, r);
  }
}

module.exports = { driveRounds, settleRound, answerRounds };
