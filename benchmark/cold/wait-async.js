'use strict';
// Cold: a fresh thread's first 1,000 `waitAsync` calls, each on an element
// of its own and each returning a pending promise: the main thread of a
// fresh process, native `Atomics.waitAsync` or the package's (required
// before the measured part). Prints one JSON line: { ns } per call (the
// call loop / 1,000) and { firstNs }, the first call alone (its share of
// the loop). The waits are left pending: the process ends at once.

const c = require('./common');

const ELEMENTS = 1000;

const name = c.implName();
const api = c.load(name);
const i32 = new Int32Array(new SharedArrayBuffer(4 * ELEMENTS));
const results = new Array(ELEMENTS);
const start = process.hrtime.bigint();
results[0] = api.waitAsync(i32, 0, 0); // measured
const firstNs = c.since(start);
for (let i = 1; i < ELEMENTS; i++) results[i] = api.waitAsync(i32, i, 0); // measured
const ns = c.since(start) / ELEMENTS;
c.check(results.every((r) => r.async), 'every wait is pending');
c.done({ impl: name, ns, firstNs });
