'use strict';
// One lock handed back and forth between the main thread's `await
// lock.executeLocked(f)` and a worker's blocking `lock()`, so that every
// take of the main thread waits: per round, the worker takes the lock,
// says so, waits until main's executeLocked has queued behind it, and
// unlocks; main's take then goes on, and its f tells the worker, which
// calls lock() again while main may still hold it. addon: the package's
// AsyncLock on both sides; native: the V8 blog post's lock
// (benchmark/lock-post.js) on native Atomics, which needs native
// Atomics.waitAsync (Node >= 16); its executeLocked returns nothing, so it
// is wrapped in a promise that f resolves, as in lock-uncontended.js.
// Instructions per round (both threads: callgrind runs them one at a time).
//
// The signals between the two (held, queued, f ran) go through native
// Atomics for both implementations, on slots of their own; so only the
// lock differs. Main's take always waits (the worker unlocks only once it
// has queued); the worker's lock() finds the lock still held when main has
// not released it yet, which depends on how the threads interleave: the
// case reports how many did (`paths`), as ping-pong.js does. Under
// valgrind that moves the count by tens of percent from run to run (the
// worker found the lock held in 4,934 of 5,000 rounds in one run, in 10 in
// the next); lock-contended-same-thread.js is the take that waits whose
// count repeats.

const { Worker, isMainThread, workerData } = require('worker_threads');
const { once } = require('events');
const o = require('../lib/ops');

const WARMUP = 5000;
const LOCK = 0; // the lock's word (both locks use the first Int32 of the buffer)
const HELD = 16; // worker: it holds the lock for round r
const QUEUED = 32; // main: its take of round r has queued
const RAN = 48; // main: f of round r ran (holding the lock)
const CONTENDED = 64; // worker: its lock() calls of the measured rounds that found the lock held
const FREE = 65; // … that found it free
const COUNT = 80; // what f counts

if (isMainThread) {
  o.run(main);
} else {
  worker();
}

async function main(impl, name, ops) {
  if (typeof Atomics.waitAsync !== 'function') return { unsupported: 'the signals (and the post\'s lock) need native Atomics.waitAsync' };
  const sab = new SharedArrayBuffer(512);
  const ia = new Int32Array(sab);
  const lock = makeLock(name, sab);
  const rounds = WARMUP + ops;
  const peer = new Worker(__filename, { workerData: { impl: name, sab, rounds } });
  // (Listened for now: the worker may exit before main's last take has
  // gone on, and its 'exit' be emitted before main would listen.)
  const exited = once(peer, 'exit');
  await loop(lock, ia, 1, WARMUP);
  await o.timed(() => loop(lock, ia, WARMUP + 1, rounds)); // measured
  await exited;
  o.check(ia[COUNT] === rounds, 'f ran once per round');
  return { paths: { mainWaited: ops, workerContended: ia[CONTENDED], workerFree: ia[FREE] } };
}

/** Rounds `from` to `to`: each waits for the worker to hold the lock, then takes it behind the worker. */
async function loop(lock, ia, from, to) {
  for (let r = from; r <= to; r++) {
    await until(ia, HELD, r);
    const taken = lock.run(() => {
      ia[COUNT] = ia[COUNT] + 1;
      Atomics.store(ia, RAN, r);
      Atomics.notify(ia, RAN);
    });
    Atomics.store(ia, QUEUED, r);
    Atomics.notify(ia, QUEUED);
    await taken;
  }
}

/** Resolves once `ia[at]` is `r` or more (native waitAsync). */
async function until(ia, at, r) {
  for (;;) {
    const seen = Atomics.load(ia, at);
    if (seen >= r) return;
    const result = Atomics.waitAsync(ia, at, seen);
    if (result.async) await result.value;
  }
}

/** `{ run(f), lock(), unlock() }` over the implementation's lock in `sab`. */
function makeLock(name, sab) {
  if (name === 'native') {
    const lock = new (require('../lock-post').AsyncLock)(sab);
    return {
      run: (f) => new Promise((resolve) => lock.executeLocked(() => {
        f();
        resolve();
      })),
      lock: () => lock.lock(),
      unlock: () => lock.unlock(),
    };
  }
  const lock = new (require('../..').AsyncLock)(sab);
  return { run: (f) => lock.executeLocked(f), lock: () => lock.lock(), unlock: () => lock.unlock() };
}

function worker() {
  const { impl, sab, rounds } = workerData;
  const ia = new Int32Array(sab);
  const lock = makeLock(impl, sab);
  for (let r = 1; r <= rounds; r++) {
    if (r > 1) {
      // Main's f of the round before has run: main holds the lock, or has
      // just released it.
      while (Atomics.load(ia, RAN) < r - 1) Atomics.wait(ia, RAN, Atomics.load(ia, RAN));
      if (r > WARMUP) ia[Atomics.load(ia, LOCK) !== 0 ? CONTENDED : FREE]++;
    }
    lock.lock();
    Atomics.store(ia, HELD, r);
    Atomics.notify(ia, HELD);
    while (Atomics.load(ia, QUEUED) < r) Atomics.wait(ia, QUEUED, Atomics.load(ia, QUEUED));
    lock.unlock();
  }
}
