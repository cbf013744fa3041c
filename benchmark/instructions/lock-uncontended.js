'use strict';
// `await lock.executeLocked(f)` with nobody else on the lock, f a counter
// increment. addon: the package's AsyncLock; native: the V8 blog post's
// lock (benchmark/lock-post.js) on native Atomics, which needs native
// Atomics.waitAsync (Node >= 16). The post's executeLocked returns nothing,
// so it is wrapped in a promise that f resolves, as in lock-contention.js.

const o = require('../lib/ops');

const WARMUP = 5000;

o.run(async (impl, name, ops) => {
  if (name === 'native' && typeof Atomics.waitAsync !== 'function') {
    return { unsupported: 'the post\'s lock needs native Atomics.waitAsync' };
  }
  const sab = new SharedArrayBuffer(64);
  const i32 = new Int32Array(sab);
  const inc = () => {
    i32[8] = i32[8] + 1;
  };
  let run;
  if (name === 'native') {
    const lock = new (require('../lock-post').AsyncLock)(sab);
    run = () => new Promise((resolve) => lock.executeLocked(() => {
      inc();
      resolve();
    }));
  } else {
    const lock = new (require('../..').AsyncLock)(sab);
    run = () => lock.executeLocked(inc);
  }
  await loop(run, WARMUP);
  await o.timed(() => loop(run, ops)); // measured
  o.check(i32[8] === WARMUP + ops, 'f ran once per call');
  return {};
});

async function loop(run, n) {
  for (let k = 0; k < n; k++) await run();
}
