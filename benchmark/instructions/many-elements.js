'use strict';
// Many elements, one waiter each: batches of 1,000 waitAsync on 1,000
// different elements, then one notify per element, then every promise's
// reaction runs. Instructions per waiter (--ops is rounded down to whole
// batches).

const o = require('../lib/ops');

const ELEMENTS = 1000;
const WARMUP_BATCHES = 3;

o.run(async (impl, name, ops) => {
  if (!impl.waitAsync) return { unsupported: 'no Atomics.waitAsync' };
  const ia = new Int32Array(new SharedArrayBuffer(4 * ELEMENTS));
  for (let b = 0; b < WARMUP_BATCHES; b++) await batch(impl, ia);
  await o.timed(async () => {
    for (let b = 0; b < Math.floor(ops / ELEMENTS); b++) await batch(impl, ia); // measured
  });
  return {};
});

function batch(impl, ia) {
  return new Promise((resolve, reject) => {
    let settled = 0;
    const onSettled = (value) => {
      if (value !== 'ok') reject(new Error(`settled ${value}`));
      if (++settled === ELEMENTS) resolve();
    };
    for (let e = 0; e < ELEMENTS; e++) impl.waitAsync(ia, e, 0).value.then(onSettled);
    for (let e = 0; e < ELEMENTS; e++) o.check(impl.notify(ia, e, 1) === 1, `element ${e} had one waiter`);
  });
}
