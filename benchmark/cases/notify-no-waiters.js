'use strict';
// notify on an element nobody waits on, in ns per call: the hot path of a
// lock's unlock. count 1, as a lock uses it. The addon also gets a
// binding-only row (the package's binding.js, no validation in index.js).

const h = require('../lib/harness');

const BATCH = 100000;
const BATCHES = 15;
const WARMUP_BATCHES = 5;

h.run((impl, name) => {
  const ia = new Int32Array(new SharedArrayBuffer(8));
  const notify = impl.notify;
  const perCall = [];
  let woken = 0;
  for (let b = 0; b < WARMUP_BATCHES + BATCHES; b++) {
    const t0 = h.nowNs();
    for (let k = 0; k < BATCH; k++) woken += notify(ia, 0, 1);
    const t1 = h.nowNs();
    if (b >= WARMUP_BATCHES) perCall.push((t1 - t0) / BATCH);
  }
  h.check(woken === 0, 'nobody was woken');
  const metrics = [h.metric('no-waiters', 'notify(ta, i, 1), nobody waiting', 'ns/call', h.median(perCall))];
  if (name === 'addon') {
    const binding = h.binding();
    const raw = [];
    for (let b = 0; b < WARMUP_BATCHES + BATCHES; b++) {
      const t0 = h.nowNs();
      for (let k = 0; k < BATCH; k++) woken += binding.notify(ia, 0, 1);
      const t1 = h.nowNs();
      if (b >= WARMUP_BATCHES) raw.push((t1 - t0) / BATCH);
    }
    h.check(woken === 0, 'nobody was woken (binding)');
    metrics.push(h.metric('binding-no-waiters', 'notify, binding only', 'ns/call', h.median(raw), { binding: true }));
  }
  return metrics;
});
