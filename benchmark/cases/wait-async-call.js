'use strict';
// Cost of one waitAsync call, in ns, measured over batches of calls:
// - pending: the value matches, so the call queues a waiter and returns a
//   promise (no timeout). After each batch one notify wakes the whole batch
//   and the last promise is awaited, outside the timed region, so memory
//   stays flat;
// - pending with a timeout (60 s, never reached): the same, plus a deadline;
// - not-equal: the value differs, the synchronous fast path.
// The addon also gets binding-only rows: the same calls straight into
// the package's binding.js, without index.js's validation and result object,
// to show where the time goes.

const h = require('../lib/harness');

const PENDING_BATCH = 10000;
const PENDING_BATCHES = 25;
const FAST_BATCH = 100000;
const FAST_BATCHES = 15;
const WARMUP_BATCHES = 5;
const LONG_TIMEOUT = 60000;

h.run(async (impl, name) => {
  if (!impl.waitAsync) return { unsupported: 'no Atomics.waitAsync' };
  const ia = new Int32Array(new SharedArrayBuffer(8));
  const metrics = [
    h.metric('pending', 'pending (promise returned)', 'ns/call', await pending(impl, ia, undefined)),
    h.metric('pending-timeout', 'pending, with a timeout', 'ns/call', await pending(impl, ia, LONG_TIMEOUT)),
    h.metric('not-equal', 'not-equal fast path', 'ns/call', notEqual(impl, ia)),
  ];
  if (name === 'addon') {
    const binding = h.binding();
    const row = (key, label, value) => h.metric(key, label, 'ns/call', value, { binding: true });
    metrics.push(
      row('binding-pending', 'pending, binding only', await bindingPending(binding, ia, Infinity)),
      row('binding-pending-timeout', 'pending with a timeout, binding only', await bindingPending(binding, ia, LONG_TIMEOUT)),
      row('binding-not-equal', 'not-equal, binding only', bindingNotEqual(binding, ia))
    );
  }
  return metrics;
});

async function pending(impl, ia, timeout) {
  const waitAsync = impl.waitAsync;
  const perCall = [];
  for (let b = 0; b < WARMUP_BATCHES + PENDING_BATCHES; b++) {
    let last;
    const t0 = h.nowNs();
    for (let k = 0; k < PENDING_BATCH; k++) last = waitAsync(ia, 0, 0, timeout).value;
    const t1 = h.nowNs();
    h.check(impl.notify(ia, 0) === PENDING_BATCH, 'notify woke the whole batch');
    h.check((await last) === 'ok', 'the last waiter settled "ok"');
    if (b >= WARMUP_BATCHES) perCall.push((t1 - t0) / PENDING_BATCH);
  }
  return h.median(perCall);
}

function notEqual(impl, ia) {
  const waitAsync = impl.waitAsync;
  const perCall = [];
  let sink = 0;
  for (let b = 0; b < WARMUP_BATCHES + FAST_BATCHES; b++) {
    const t0 = h.nowNs();
    for (let k = 0; k < FAST_BATCH; k++) sink += waitAsync(ia, 0, 1).async ? 1 : 0;
    const t1 = h.nowNs();
    if (b >= WARMUP_BATCHES) perCall.push((t1 - t0) / FAST_BATCH);
  }
  h.check(sink === 0, 'every not-equal call returned synchronously');
  return h.median(perCall);
}

async function bindingPending(binding, ia, timeout) {
  const perCall = [];
  for (let b = 0; b < WARMUP_BATCHES + PENDING_BATCHES; b++) {
    let last;
    const t0 = h.nowNs();
    for (let k = 0; k < PENDING_BATCH; k++) last = binding.waitAsync(ia, 0, 0, timeout);
    const t1 = h.nowNs();
    h.check(binding.notify(ia, 0, Infinity) === PENDING_BATCH, 'binding notify woke the batch');
    await last;
    if (b >= WARMUP_BATCHES) perCall.push((t1 - t0) / PENDING_BATCH);
  }
  return h.median(perCall);
}

function bindingNotEqual(binding, ia) {
  const perCall = [];
  let sink = 0;
  for (let b = 0; b < WARMUP_BATCHES + FAST_BATCHES; b++) {
    const t0 = h.nowNs();
    for (let k = 0; k < FAST_BATCH; k++) sink += binding.waitAsync(ia, 0, 1, Infinity);
    const t1 = h.nowNs();
    if (b >= WARMUP_BATCHES) perCall.push((t1 - t0) / FAST_BATCH);
  }
  h.check(sink === FAST_BATCH * (WARMUP_BATCHES + FAST_BATCHES), 'binding returned NOT_EQUAL (1) every time');
  return h.median(perCall);
}
