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

module.exports = { driveRounds, answerRounds };
