'use strict';
// Main thread waitAsync ⇄ a worker blocked in a sync wait, on one Int32
// slot, as in benchmark/cases/ping-pong.js: instructions per round trip,
// both threads (callgrind runs the threads one at a time and counts the
// whole process). native: Atomics.waitAsync / Atomics.wait; addon: the
// package's functions on both sides.

const { Worker, isMainThread, workerData } = require('worker_threads');
const { once } = require('events');
const o = require('../lib/ops');

const WARMUP = 500;

if (isMainThread) {
  o.run(main);
} else {
  worker();
}

async function main(impl, name, ops) {
  if (!impl.waitAsync) return { unsupported: 'no Atomics.waitAsync' };
  const ia = new Int32Array(new SharedArrayBuffer(8));
  const peer = new Worker(__filename, { workerData: { impl: name, sab: ia.buffer } });
  await once(peer, 'online');
  let v = await loop(impl, ia, 0, WARMUP);
  v = await o.timed(() => loop(impl, ia, v, ops)); // measured
  Atomics.store(ia, 0, -1);
  impl.notify(ia, 0);
  await once(peer, 'exit');
  return {};
}

/** n round trips from the value v; returns the value reached. */
async function loop(impl, ia, v, n) {
  for (let i = 0; i < n; i++) {
    v += 1;
    Atomics.store(ia, 0, v);
    impl.notify(ia, 0, 1);
    while (Atomics.load(ia, 0) === v) {
      const r = impl.waitAsync(ia, 0, v);
      if (r.async) await r.value;
    }
    v += 1;
    o.check(Atomics.load(ia, 0) === v, `round trip ${i}: expected ${v}`);
  }
  return v;
}

function worker() {
  o.echo(o.load(workerData.impl), new Int32Array(workerData.sab));
}
