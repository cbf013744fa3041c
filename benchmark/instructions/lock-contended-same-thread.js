'use strict';
// `await lock.executeLocked(f)` that always waits, in one thread: another
// instance over the same word holds the lock (its lock(), uncontended)
// when executeLocked is called, and unlocks right after; the take goes on
// once its wait is woken. Per round: one take that waits, its wake-up and
// f, and both releases. addon: the package's AsyncLock (two instances);
// native: the V8 blog post's lock (benchmark/lock-post.js) on native
// Atomics, which needs native Atomics.waitAsync (Node >= 16), its
// executeLocked wrapped in a promise that f resolves, as in
// lock-uncontended.js.
//
// lock-contended.js hands the lock between two threads, as programs do;
// how their waits interleave moves its count by a few percent from run to
// run. Here nothing depends on another thread, so the count repeats as
// the single-thread cases' do, and a change of a few instructions on the
// path of a take that waits shows.

const o = require('../lib/ops');

const WARMUP = 5000;

o.run(async (impl, name, ops) => {
  if (typeof Atomics.waitAsync !== 'function') return { unsupported: 'the post\'s lock needs native Atomics.waitAsync' };
  const sab = new SharedArrayBuffer(64);
  const i32 = new Int32Array(sab);
  const inc = () => {
    i32[8] = i32[8] + 1;
  };
  let holder;
  let run;
  if (name === 'native') {
    const { AsyncLock } = require('../lock-post');
    holder = new AsyncLock(sab);
    const lock = new AsyncLock(sab);
    run = () => new Promise((resolve) => lock.executeLocked(() => {
      inc();
      resolve();
    }));
  } else {
    const { AsyncLock } = require('../..');
    holder = new AsyncLock(sab);
    const lock = new AsyncLock(sab);
    run = () => lock.executeLocked(inc);
  }
  await loop(holder, run, i32, WARMUP);
  await o.timed(() => loop(holder, run, i32, ops)); // measured
  o.check(i32[8] === WARMUP + ops, 'f ran once per round');
  return {};
});

async function loop(holder, run, i32, n) {
  for (let k = 0; k < n; k++) {
    holder.lock();
    const before = i32[8];
    const taken = run();
    o.check(i32[8] === before, 'the take waits (f has not run)');
    holder.unlock();
    await taken;
  }
}
