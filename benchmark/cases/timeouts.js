'use strict';
// Timeouts: N waitAsync waiters with a 20 ms timeout, nobody notifies.
// Lateness = (time the promise's reaction runs) - (time just before the
// call) - 20 ms, per waiter; p50, p99 and max in ms, for the first burst of
// N in a fresh process (after a warm-up of 1,000).
//
// No reaction can run before the loop creating the N waiters ends, so the
// earliest waiters are at least (creation - 20 ms) late whatever the
// implementation does: the creation time is a row too, and another row
// counts lateness from the later of the deadline and the end of creation,
// i.e. how soon a due waiter settles once the thread is free. A second
// burst of N shows the same process warm (memory already grown).

const h = require('../lib/harness');

const N = 10000;
const TIMEOUT = 20;

h.run(async (impl) => {
  if (!impl.waitAsync) return { unsupported: 'no Atomics.waitAsync' };
  const ia = new Int32Array(new SharedArrayBuffer(8));
  await burst(impl, ia, 1000); // warm-up
  const first = await burst(impl, ia, N);
  const second = await burst(impl, ia, N);
  return [
    h.metric('create', `creating the ${N} waiters`, 'ms', first.create),
    h.metric('late-p50', 'lateness p50', 'ms', h.median(first.late)),
    h.metric('late-p99', 'lateness p99', 'ms', h.percentile(first.late, 99)),
    h.metric('late-max', 'lateness max', 'ms', h.percentile(first.late, 100)),
    h.metric('free-p99', 'lateness p99, counted from when the thread is free', 'ms', h.percentile(first.free, 99)),
    h.metric('warm-p99', `lateness p99, second burst of ${N}`, 'ms', h.percentile(second.late, 99)),
  ];
});

/** Creates n waiters and resolves with their lateness once all timed out. */
function burst(impl, ia, n) {
  const late = new Float64Array(n);
  const free = new Float64Array(n);
  const due = new Float64Array(n);
  let settled = 0;
  let timedOut = 0;
  let freeAt = 0;
  return new Promise((resolve, reject) => {
    const t0 = h.performance.now();
    for (let k = 0; k < n; k++) {
      const start = h.performance.now();
      due[k] = start + TIMEOUT;
      impl.waitAsync(ia, 0, 0, TIMEOUT).value.then((value) => {
        const now = h.performance.now();
        late[k] = now - due[k];
        free[k] = now - Math.max(due[k], freeAt);
        if (value === 'timed-out') timedOut++;
        if (++settled < n) return;
        if (timedOut !== n) return reject(new Error(`only ${timedOut} of ${n} settled "timed-out"`));
        const early = h.percentile(late, 0);
        if (early < -1) console.error(`timeouts: a waiter settled ${-early} ms before its deadline`);
        resolve({ late, free, create: freeAt - t0 });
      });
    }
    freeAt = h.performance.now(); // reactions run only after this
  });
}
