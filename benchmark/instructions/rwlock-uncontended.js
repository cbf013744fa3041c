'use strict';
// readSync(); f(); releaseRead() with nobody else on the lock, f a counter
// increment. addon: the package's RwLock (robust: it counts what the
// instance holds); native: a reader-writer lock written by hand on native
// Atomics (benchmark/rwlock-native.js).

const o = require('../lib/ops');

const WARMUP = 5000;

o.run(async (impl, name, ops) => {
  const sab = new SharedArrayBuffer(64);
  const i32 = new Int32Array(sab);
  let run;
  if (name === 'native') {
    const rw = new (require('../rwlock-native').NativeRwLock)(sab, 0);
    run = () => {
      rw.read();
      i32[8] = i32[8] + 1;
      rw.releaseRead();
    };
  } else {
    const rw = new (require('../..').RwLock)(sab, 0);
    run = () => {
      rw.readSync();
      i32[8] = i32[8] + 1;
      rw.releaseRead();
    };
  }
  loop(run, WARMUP);
  await o.timed(() => loop(run, ops)); // measured
  o.check(i32[8] === WARMUP + ops, 'f ran once per call');
  o.check(Atomics.load(i32, 0) === 0, 'the lock is free again');
  return {};
});

function loop(run, n) {
  for (let k = 0; k < n; k++) run();
}
