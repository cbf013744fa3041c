'use strict';
// A sync wait whose value check fails: `wait(ia, 0, 1)` while ia[0] is 0
// returns "not-equal" at once, on the main thread (Node allows a sync wait
// there). What every sync wait pays before it can sleep (the arguments, the
// typed array's look-up, the value check), with no other thread involved,
// so the count repeats: instructions per call.

const o = require('../lib/ops');

const WARMUP = 20000;

o.run((impl, name, ops) => {
  const ia = new Int32Array(new SharedArrayBuffer(8));
  loop(impl, ia, WARMUP);
  o.timed(() => loop(impl, ia, ops)); // measured
  return {};
});

function loop(impl, ia, n) {
  for (let k = 0; k < n; k++) {
    o.check(impl.wait(ia, 0, 1) === 'not-equal', 'the value differs');
  }
}
