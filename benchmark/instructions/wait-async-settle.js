'use strict';
// One waiter at a time: waitAsync goes pending, notify wakes it, and the
// await returns (so the promise's settlement, the event-loop turn that
// delivers it and the reaction are all inside the count). Instructions per
// waiter.

const o = require('../lib/ops');

const WARMUP = 2000;

o.run(async (impl, name, ops) => {
  if (!impl.waitAsync) return { unsupported: 'no Atomics.waitAsync' };
  const ia = new Int32Array(new SharedArrayBuffer(8));
  await loop(impl, ia, WARMUP);
  await o.timed(() => loop(impl, ia, ops)); // measured
  return {};
});

async function loop(impl, ia, n) {
  for (let k = 0; k < n; k++) {
    const r = impl.waitAsync(ia, 0, 0);
    o.check(r.async, 'the waiter is pending');
    o.check(impl.notify(ia, 0, 1) === 1, 'notify woke it');
    o.check((await r.value) === 'ok', 'it settled "ok"');
  }
}
