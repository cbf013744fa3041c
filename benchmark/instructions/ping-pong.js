'use strict';
// Main thread waitAsync ⇄ a worker blocked in a sync wait, on one Int32
// slot, as in benchmark/cases/ping-pong.js: instructions per round trip,
// both threads (callgrind runs the threads one at a time and counts the
// whole process). native: Atomics.waitAsync / Atomics.wait; addon: the
// package's functions on both sides.
//
// Which way each wait goes depends on how the two threads interleave: main
// finds the worker's answer there before it calls waitAsync at all, or its
// waitAsync goes pending, or finds the answer arrived just before
// ("not-equal"); the worker's wait sleeps until woken, or finds the next
// value already there. The case reports how many of each (`paths`), since
// the count per round trip depends on them (docs/performance.md).

const { Worker, isMainThread, workerData } = require('worker_threads');
const { once } = require('events');
const o = require('../lib/ops');

// Long enough that the JIT is done before the measured part: with 500 (and
// even 5,000) round trips, lib/atomics.js's `wait` was first optimized by
// TurboFan inside the measured part of the N run only (`--trace-opt`),
// ~1,400-3,700 instructions per round trip that the 0 run never paid.
const WARMUP = 20000;

if (isMainThread) {
  o.run(main);
} else {
  worker();
}

async function main(impl, name, ops) {
  if (!impl.waitAsync) return { unsupported: 'no Atomics.waitAsync' };
  await o.rareWaitAsyncPaths(impl);
  // [0]: the round trips' slot; [2], [3]: the worker's waits that slept
  // (returned "ok") and that returned "not-equal" (o.echo).
  const ia = new Int32Array(new SharedArrayBuffer(16));
  const peer = new Worker(__filename, { workerData: { impl: name, sab: ia.buffer } });
  await once(peer, 'online');
  const warm = { answered: 0, pending: 0, notEqual: 0 };
  let v = await loop(impl, ia, 0, WARMUP, warm);
  const mine = { answered: 0, pending: 0, notEqual: 0 };
  const before = [ia[2], ia[3]];
  v = await o.timed(() => loop(impl, ia, v, ops, mine)); // measured
  Atomics.store(ia, 0, -1);
  impl.notify(ia, 0);
  await once(peer, 'exit');
  // (Read after the worker exited; off by at most its one wait in flight
  // when the measured part began.)
  return {
    paths: {
      mainAnswered: mine.answered,
      mainPending: mine.pending,
      mainNotEqual: mine.notEqual,
      workerSlept: ia[2] - before[0],
      workerNotEqual: ia[3] - before[1],
    },
  };
}

/**
 * n round trips from the value v; returns the value reached. Counts in
 * `paths` the round trips answered before main's first look, and main's
 * waitAsync calls by how they went.
 */
async function loop(impl, ia, v, n, paths) {
  for (let i = 0; i < n; i++) {
    v += 1;
    Atomics.store(ia, 0, v);
    impl.notify(ia, 0, 1);
    let calls = 0;
    while (Atomics.load(ia, 0) === v) {
      calls++;
      const r = impl.waitAsync(ia, 0, v);
      if (r.async) {
        paths.pending++;
        await r.value;
      } else {
        paths.notEqual++;
      }
    }
    if (calls === 0) paths.answered++;
    v += 1;
    o.check(Atomics.load(ia, 0) === v, `round trip ${i}: expected ${v}`);
  }
  return v;
}

function worker() {
  const impl = o.load(workerData.impl);
  o.rareWaitPaths(impl);
  o.echo(impl, new Int32Array(workerData.sab), new Int32Array(workerData.sab, 8, 2));
}
