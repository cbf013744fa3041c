'use strict';
// Ping-pong between the main thread and one worker over one Int32 slot.
// Main stores the next odd number, notifies, and waits with waitAsync; the
// worker, blocked in a sync wait, wakes, stores the next even number and
// notifies back. One round trip = main's store -> main's await returns.
// native: Atomics.waitAsync on main, Atomics.wait in the worker; addon: the
// package's functions on both sides.

const { Worker, isMainThread, workerData } = require('worker_threads');
const { once } = require('events');
const h = require('../lib/harness');

const WARMUP = 1000;
const ROUND_TRIPS = 10000;

if (isMainThread) {
  h.run(main);
} else {
  worker();
}

async function main(impl, name) {
  if (!impl.waitAsync) return { unsupported: 'no Atomics.waitAsync' };
  const ia = new Int32Array(new SharedArrayBuffer(8));
  const peer = new Worker(__filename, { workerData: { impl: name, sab: ia.buffer } });
  await once(peer, 'online');

  const micros = [];
  let v = 0;
  for (let i = 0; i < WARMUP + ROUND_TRIPS; i++) {
    const t0 = h.performance.now();
    v += 1;
    Atomics.store(ia, 0, v);
    impl.notify(ia, 0, 1);
    // Loop like real code: the worker's notify for the previous round may
    // land after this waiter is queued (when that round's waitAsync found
    // the new value at once), and wake it before the worker saw v.
    while (Atomics.load(ia, 0) === v) {
      const r = impl.waitAsync(ia, 0, v);
      if (r.async) await r.value;
    }
    const t1 = h.performance.now();
    v += 1;
    h.check(Atomics.load(ia, 0) === v, `round trip ${i}: expected ${v}, found ${Atomics.load(ia, 0)}`);
    if (i >= WARMUP) micros.push((t1 - t0) * 1000);
  }
  Atomics.store(ia, 0, -1);
  impl.notify(ia, 0);
  await once(peer, 'exit');

  return [
    h.metric('rt-p50', 'round trip, median', 'µs', h.median(micros)),
    h.metric('rt-p99', 'round trip, p99', 'µs', h.percentile(micros, 99)),
  ];
}

function worker() {
  h.echo(h.load(workerData.impl), new Int32Array(workerData.sab));
}
