'use strict';
// notify(ta, 0, 1) on an element nobody waits on (a lock's unlock path):
// instructions per call. Warm-up: the same loop, so it is optimised before
// the measured calls start.

const o = require('../lib/ops');

const WARMUP = 20000;

o.run((impl, name, ops) => {
  const ia = new Int32Array(new SharedArrayBuffer(8));
  let woken = loop(impl.notify, ia, WARMUP);
  woken += o.timed(() => loop(impl.notify, ia, ops)); // measured
  o.check(woken === 0, 'nobody was woken');
  return {};
});

function loop(notify, ia, n) {
  let woken = 0;
  for (let k = 0; k < n; k++) woken += notify(ia, 0, 1);
  return woken;
}
