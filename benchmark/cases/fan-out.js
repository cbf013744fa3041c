'use strict';
// Fan-out: N waitAsync waiters pending on one element, then one notify
// wakes them all. Measures the time from just before notify() until the
// last promise's reaction has run (every promise gets the same .then
// counter, so this includes running N reactions, alike for both), and the
// synchronous notify() call alone. Median of a few repetitions per process.

const h = require('../lib/harness');

const N = 100000;
const REPEATS = 3;

h.run(async (impl) => {
  if (!impl.waitAsync) return { unsupported: 'no Atomics.waitAsync' };
  const ia = new Int32Array(new SharedArrayBuffer(8));
  await fanOut(impl, ia, 10000); // warm-up
  const total = [];
  const call = [];
  for (let r = 0; r < REPEATS; r++) {
    const t = await fanOut(impl, ia, N);
    total.push(t.total);
    call.push(t.notify);
  }
  return [
    h.metric('last-settled', 'notify until the last promise settled', 'ms', h.median(total)),
    h.metric('notify-call', 'the notify() call itself', 'ms', h.median(call)),
  ];
});

async function fanOut(impl, ia, n) {
  let settled = 0;
  let ok = 0;
  let end = 0;
  let done;
  const all = new Promise((resolve) => (done = resolve));
  const onSettled = (value) => {
    if (value === 'ok') ok++;
    if (++settled === n) {
      end = h.performance.now();
      done();
    }
  };
  for (let k = 0; k < n; k++) impl.waitAsync(ia, 0, 0).value.then(onSettled);
  const t0 = h.performance.now();
  const woken = impl.notify(ia, 0);
  const t1 = h.performance.now();
  await all;
  h.check(woken === n && ok === n, `notify woke ${woken} of ${n}, ${ok} settled "ok"`);
  return { total: end - t0, notify: t1 - t0 };
}
