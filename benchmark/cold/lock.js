'use strict';
// Cold: a fresh thread's first 1,000 uncontended `await
// lock.executeLocked(f)`, f a counter increment, on the main thread of a
// fresh process. addon: the package's AsyncLock; native: the V8 blog
// post's lock on native Atomics (benchmark/lock-post.js), wrapped in a
// promise that f resolves, as benchmark/instructions/lock-uncontended.js
// (the warm counterpart) does. Each is required and the lock made before
// the measured part. Prints one JSON line: { ns } per call.

const c = require('./common');

const CALLS = 1000;

async function main() {
  const name = c.implName();
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
    const lock = new (require(c.ROOT).AsyncLock)(sab);
    run = () => lock.executeLocked(inc);
  }
  const start = process.hrtime.bigint();
  for (let k = 0; k < CALLS; k++) await run(); // measured
  const ns = c.since(start) / CALLS;
  c.check(i32[8] === CALLS, 'f ran once per call');
  c.done({ impl: name, ns });
}

main().catch(c.fail);
