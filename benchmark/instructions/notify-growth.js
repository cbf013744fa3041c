'use strict';
// notify(ta, 0, 1) on an element nobody waits on while --param P waiters
// are pending on OTHER elements (one each, elements 1..P of the same
// buffer): does notify slow down as the number of pending waiters grows?
// Instructions per call. The P waiters are queued in both runs (--ops N and
// --ops 0) and never woken: the process exits with them pending. A full GC
// after queueing them (with --expose-gc, which run.js passes here) leaves
// no GC work half done to land in one run's measured loop and not the
// other's: without it the 10^6 row moved by ±100% between runs.

const o = require('../lib/ops');

const WARMUP = 20000;

o.run((impl, name, ops, pending) => {
  if (!impl.waitAsync) return { unsupported: 'no Atomics.waitAsync' };
  const ia = new Int32Array(new SharedArrayBuffer(4 * (pending + 1)));
  for (let e = 1; e <= pending; e++) o.check(impl.waitAsync(ia, e, 0).async, 'pending');
  if (typeof global.gc === 'function') global.gc();
  let woken = loop(impl.notify, ia, WARMUP);
  woken += o.timed(() => loop(impl.notify, ia, ops)); // measured
  o.check(woken === 0, 'nobody on element 0 was woken');
  return {};
});

function loop(notify, ia, n) {
  let woken = 0;
  for (let k = 0; k < n; k++) woken += notify(ia, 0, 1);
  return woken;
}
