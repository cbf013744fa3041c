'use strict';
// Cold: a fresh main thread's first 1,000 waiters, start to settle: 1,000
// `waitAsync` pending on 1,000 elements, then one `notify` per element
// from the same thread, until the 1,000th promise's reaction ran. Native
// `Atomics` or the package (required before the measured part). Prints one
// JSON line: { ns } per waiter. Also the whole program whose instructions
// `--cold --instructions` counts: start-up, the package's require and
// these first calls, against the same program on native Atomics.

const c = require('./common');

const ELEMENTS = 1000;

const name = c.implName();
const api = c.load(name);
const stop = c.keepAlive();
const i32 = new Int32Array(new SharedArrayBuffer(4 * ELEMENTS));
const start = process.hrtime.bigint();
new Promise((resolve, reject) => {
  let settled = 0;
  const onSettled = (outcome) => {
    if (outcome !== 'ok') reject(new Error(`a wait settled ${outcome}`));
    if (++settled === ELEMENTS) resolve(c.since(start));
  };
  for (let i = 0; i < ELEMENTS; i++) {
    const result = api.waitAsync(i32, i, 0);
    if (!result.async) return reject(new Error(`wait ${i}: ${result.value}`));
    result.value.then(onSettled);
  }
  let woken = 0;
  for (let i = 0; i < ELEMENTS; i++) woken += api.notify(i32, i, 1);
  c.check(woken === ELEMENTS, `notify woke ${woken} waiters, not ${ELEMENTS}`);
})
  .then((ns) => {
    stop();
    c.done({ impl: name, ns: ns / ELEMENTS });
  })
  .catch(c.fail);
