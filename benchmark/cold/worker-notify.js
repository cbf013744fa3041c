'use strict';
// Cold: a fresh worker's first 1,000 `notify` calls, each waking one
// main-thread waiter. The main thread (a fresh process) makes 1,000
// waits, one `waitAsync` pending on each of 1,000 elements of an
// Int32Array on a SharedArrayBuffer; then it starts a worker, which
// (addon: after it has required the package, outside the measured part)
// calls `notify(i32, i, 1)` once per element. Native: `Atomics.waitAsync`
// and the worker's global `Atomics.notify`; addon: the package's
// `waitAsync` and `notify` (each thread requires it).
//
// Prints one JSON line:
//   notifyNs   the worker's notify loop / 1,000: time per notify call
//   firstNs    the worker's first notify call alone (its share of the loop)
//   settledNs  from just before the worker's first notify until the main
//              thread has seen the 1,000th promise settle, / 1,000
//   createNs   the main thread's 1,000 waitAsync calls, / 1,000 (set-up;
//              wait-async.js measures the same without a worker)
//
// The two threads meet through a control buffer of their own, worked with
// the engine's Atomics in both implementations, and read after the
// measured part: the worker writes its clock readings there (hrtime is
// one clock for the whole process) and then waits, so that neither a
// message nor its exit lands on the main thread while the promises settle.

const c = require('./common');

const ELEMENTS = 1000;
// The control buffer: [T0] the worker's clock before its first notify,
// [T_FIRST] after it, [T1] after its last, [WOKEN] what its notify calls
// returned, summed, as BigInt64; and two Int32 flags after them: WROTE
// (the worker has written these) and STOP (the main thread lets it end).
const T0 = 0;
const T_FIRST = 1;
const T1 = 2;
const WOKEN = 3;
const WROTE = 8; // Int32 index: byte 32
const STOP = 9;
const CONTROL_BYTES = 40;

function control(sab) {
  return { big: new BigInt64Array(sab, 0, 4), flags: new Int32Array(sab) };
}

if (process.argv.includes('--in-worker')) {
  const { workerData } = require('worker_threads');
  const api = c.load(c.implName()); // addon: the package's first require in this thread
  const i32 = new Int32Array(workerData.elements);
  const { big, flags } = control(workerData.control);
  const start = process.hrtime.bigint();
  let woken = api.notify(i32, 0, 1); // measured
  const first = process.hrtime.bigint();
  for (let i = 1; i < ELEMENTS; i++) woken += api.notify(i32, i, 1); // measured
  const end = process.hrtime.bigint();
  Atomics.store(big, T0, start);
  Atomics.store(big, T_FIRST, first);
  Atomics.store(big, T1, end);
  Atomics.store(big, WOKEN, BigInt(woken));
  Atomics.store(flags, WROTE, 1);
  Atomics.notify(flags, WROTE);
  Atomics.wait(flags, STOP, 0);
} else {
  main().catch(c.fail);
}

async function main() {
  const name = c.implName();
  const api = c.load(name);
  const { Worker } = require('worker_threads');
  const stop = c.keepAlive();
  const i32 = new Int32Array(new SharedArrayBuffer(4 * ELEMENTS));
  const controlBuffer = new SharedArrayBuffer(CONTROL_BYTES);
  const { big, flags } = control(controlBuffer);
  let lastSettled = 0n;
  let createNs = 0;
  const settled = new Promise((resolve, reject) => {
    let count = 0;
    const onSettled = (outcome) => {
      if (outcome !== 'ok') reject(new Error(`a wait settled ${outcome}`));
      if (++count === ELEMENTS) {
        lastSettled = process.hrtime.bigint();
        resolve();
      }
    };
    const start = process.hrtime.bigint();
    for (let i = 0; i < ELEMENTS; i++) {
      const result = api.waitAsync(i32, i, 0);
      if (!result.async) return reject(new Error(`wait ${i}: ${result.value}`));
      result.value.then(onSettled);
    }
    createNs = c.since(start);
  });
  const worker = new Worker(__filename, {
    argv: ['--in-worker', '--impl', name],
    workerData: { elements: i32.buffer, control: controlBuffer },
  });
  worker.on('error', c.fail);
  await settled;
  Atomics.wait(flags, WROTE, 0); // (the worker stores its clock just after its last notify)
  const woken = Number(Atomics.load(big, WOKEN));
  c.check(woken === ELEMENTS, `the worker's notify calls woke ${woken} waiters, not ${ELEMENTS}`);
  const t0 = Atomics.load(big, T0);
  const notifyNs = Number(Atomics.load(big, T1) - t0) / ELEMENTS;
  const firstNs = Number(Atomics.load(big, T_FIRST) - t0);
  const settledNs = Number(lastSettled - t0) / ELEMENTS;
  Atomics.store(flags, STOP, 1);
  Atomics.notify(flags, STOP);
  await new Promise((resolve) => worker.on('exit', resolve));
  stop();
  c.done({ impl: name, notifyNs, firstNs, settledNs, createNs: createNs / ELEMENTS });
}
