'use strict';
// Two workers, both in sync waits, alternating on one Int32 slot: worker A
// stores the next odd number and wakes B, B stores the next even one and
// wakes A. Instructions per round trip, the whole process (callgrind runs
// the threads one at a time). The main thread starts both workers and
// waits for them to exit.
//
// Start line: a worker that waited for its peer to boot would spend that
// time (seconds under valgrind, and as long as the machine's load makes
// it) in the addon's wait, which returns to JS every 10 ms slice, so the
// count would depend on the clock. So both workers first block in the
// built-in Atomics.wait on another slot (the same for both
// implementations, no slices) until main has seen both ready.
//
// Each worker's wait either sleeps until woken or finds the value changed
// already ("not-equal"), depending on how the threads interleave; the case
// reports how many of each in the measured rounds (`paths`), since the
// count per round trip depends on them (docs/performance.md).

const { Worker, isMainThread, workerData, parentPort } = require('worker_threads');
const { once } = require('events');
const o = require('../lib/ops');

// Long enough that the JIT is done before the measured rounds (see
// ping-pong.js: with 500, TurboFan compiled inside the measured part).
const WARMUP = 20000;
const VALUE = 0; // the slot the round trips use
const GO = 16; // the start line, on its own cache line

if (isMainThread) {
  o.run(async (impl, name, ops) => {
    const ia = new Int32Array(new SharedArrayBuffer(128));
    const rounds = WARMUP + ops; // the workers warm up with the first WARMUP
    const peers = [0, 1].map((side) => new Worker(__filename, { workerData: { impl: name, sab: ia.buffer, side, rounds } }));
    await Promise.all(peers.map((peer) => once(peer, 'message')));
    // Each reports how its waits went in the measured rounds, and side 0
    // the wall time of those rounds (for --wall).
    const reports = peers.map((peer) => once(peer, 'message'));
    Atomics.store(ia, GO, 1);
    Atomics.notify(ia, GO);
    await Promise.all(peers.map((peer) => once(peer, 'exit')));
    const [[first], [second]] = await Promise.all(reports);
    o.addMeasured(first.ns);
    o.check(Atomics.load(ia, VALUE) === 2 * rounds, `ended at ${2 * rounds}`);
    return {
      paths: { workerSlept: first.slept + second.slept, workerNotEqual: first.notEqual + second.notEqual },
    };
  });
} else {
  const impl = o.load(workerData.impl);
  const ia = new Int32Array(workerData.sab);
  const { side, rounds } = workerData;
  o.rareWaitPaths(impl);
  parentPort.postMessage('ready');
  while (Atomics.load(ia, GO) === 0) Atomics.wait(ia, GO, 0);
  // side 0 moves even -> odd, side 1 odd -> even; each waits while the
  // value is not its turn.
  const last = 2 * rounds;
  const measuredFrom = 2 * (rounds - ops(rounds));
  let start = null;
  // Waits that slept ("ok") and that returned "not-equal": counted from the
  // first round, so that the measured part runs no code the warm-up did not
  // (code first run there deoptimizes TurboFan's), and taken at its start.
  const counts = [0, 0];
  let before = null;
  for (;;) {
    const v = Atomics.load(ia, VALUE);
    if (start === null && v >= measuredFrom) {
      start = process.hrtime.bigint();
      before = counts.slice();
    }
    if (v >= last) break;
    if (v % 2 === side) {
      Atomics.store(ia, VALUE, v + 1);
      impl.notify(ia, VALUE, 1);
    } else {
      const outcome = impl.wait(ia, VALUE, v);
      counts[outcome === 'not-equal' ? 1 : 0]++;
    }
  }
  const ns = start === null ? 0 : Number(process.hrtime.bigint() - start);
  const [slept, notEqual] = before === null ? [0, 0] : [counts[0] - before[0], counts[1] - before[1]];
  parentPort.postMessage({ ns, slept, notEqual });
}

/** The measured rounds of `rounds` (the first WARMUP warm up). */
function ops(rounds) {
  return Math.max(0, rounds - WARMUP);
}
