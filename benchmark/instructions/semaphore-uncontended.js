'use strict';
// acquireSync(1); f(); release(1) with nobody else on the semaphore, f a
// counter increment. addon: the package's Semaphore (robust: it counts what
// the instance holds); native: a semaphore written by hand on native
// Atomics (benchmark/semaphore-native.js).

const o = require('../lib/ops');

const WARMUP = 5000;

o.run(async (impl, name, ops) => {
  const sab = new SharedArrayBuffer(64);
  const i32 = new Int32Array(sab);
  let run;
  if (name === 'native') {
    const semaphore = new (require('../semaphore-native').NativeSemaphore)(sab, 0);
    i32[0] = 1;
    run = () => {
      semaphore.acquire(1);
      i32[8] = i32[8] + 1;
      semaphore.release(1);
    };
  } else {
    const semaphore = new (require('../..').Semaphore)(1, sab, 0);
    run = () => {
      semaphore.acquireSync(1);
      i32[8] = i32[8] + 1;
      semaphore.release(1);
    };
  }
  loop(run, WARMUP);
  await o.timed(() => loop(run, ops)); // measured
  o.check(i32[8] === WARMUP + ops, 'f ran once per call');
  return {};
});

function loop(run, n) {
  for (let k = 0; k < n; k++) run();
}
