'use strict';
// notify returns 0 without a native call when the element's "may be
// waiting" count (src/registry.rs `may_wait`, read by lib/atomics.js
// `skippingNotify`) is 0. That must never skip a waiter: the count JS
// reads for an element must be the one the registry counts its waiters
// in (every element, offset, array kind, and past the 32 MB boundaries
// where the count's hash folds in higher bits), and a waiter
// that queues concurrently must be seen (worker_threads, plain stores).

const assert = require('assert');
const { once } = require('events');
const { Worker } = require('worker_threads');
const { waitAsync, notify, wait } = require('../..');
const binding = require('../../binding');
const { skippingNotify } = require('../../lib/atomics');
const { fixture, runNodeAsync, atomicsTakeUnshared } = require('../helpers');

describe('notify skips the native call only when nobody can be waiting', function () {
  this.timeout(120000);

  it('the binding handed the counts, addressOf and notifyAt to lib/atomics.js, and keeps none of them', () => {
    // The package took the kit when it loaded: its notify skips (the tests
    // below would pass vacuously through the plain notify otherwise), except
    // where the engine's Atomics refuse the counts' plain buffer (Node 12
    // and 14): there it notifies through the plain notify ...
    if (atomicsTakeUnshared) {
      assert.notStrictEqual(skippingNotify(binding), binding.notify, 'the package has the kit');
    } else {
      assert.strictEqual(skippingNotify(binding), binding.notify, 'the plain notify');
    }
    // ... and nobody else can have it (loading/binding-after-load.spec.js).
    assert.strictEqual(binding.takeNotifyCounts(), undefined);
    for (const key of Reflect.ownKeys(binding)) {
      assert.ok(!/addressOf|notifyAt|notifyOneAt|mayWait/i.test(String(key)), `binding.${String(key)}`);
      // The one buffer is this thread's own 4-byte "a woken wait got to
      // JS" word (src/sync_wait.rs `WokenMark`), not the counts.
      if (key === 'waitSeen') continue;
      assert.ok(!(binding[key] instanceof ArrayBuffer), `binding.${String(key)} is a buffer`);
    }
    const taker = Object.getOwnPropertyDescriptor(binding, 'takeNotifyCounts');
    assert.deepStrictEqual([taker.writable, taker.configurable], [false, false]);
    const seen = Object.getOwnPropertyDescriptor(binding, 'waitSeen');
    assert.deepStrictEqual([seen.value.byteLength, seen.writable, seen.configurable], [4, false, false]);
  });

  it('a kit whose counts are not 2^23 bytes (a binary of another layout) leaves notify to the binding', () => {
    const kit = (bytes) => ({ counts: new ArrayBuffer(bytes), addressOf: () => 0, notifyAt: () => 0 });
    const fake = (bytes) => ({ notify: () => 0, takeNotifyCounts: () => kit(bytes) });
    const other = fake(4 << 14); // the 16,384 four-byte counts of takeFastNotify
    assert.strictEqual(skippingNotify(other), other.notify);
    // The layout it knows: a notify that reads the counts first (where the
    // engine's Atomics take a plain buffer: not Node 12 and 14).
    const same = fake(1 << 23);
    if (atomicsTakeUnshared) {
      assert.notStrictEqual(skippingNotify(same), same.notify);
    } else {
      assert.strictEqual(skippingNotify(same), same.notify);
    }
  });

  it('a notify of one goes to the kit\'s notifyOneAt, others to notifyAt; a kit without notifyOneAt (an older binary) gets all', function () {
    if (!atomicsTakeUnshared) this.skip(); // (the kit is not used there)
    const { createAtomics } = require('../../lib/atomics');
    const base = 1 << 20;
    const slot = (address) => (((address >>> 2) ^ (address >>> 25)) & ((1 << 23) - 1));
    const fake = (withOne) => {
      const calls = [];
      const counts = new Uint8Array(1 << 23);
      for (let i = 0; i < 4; i++) counts[slot(base + 4 * i)] = 1; // someone may wait on each element
      const kit = {
        counts: counts.buffer,
        addressOf: () => base,
        notifyAt: (address, count) => (calls.push(['notifyAt', address, count]), 1),
      };
      if (withOne) kit.notifyOneAt = (address) => (calls.push(['notifyOneAt', address]), 1);
      return { calls, binding: { notify: () => 0, takeNotifyCounts: () => kit } };
    };
    const ta = new Int32Array(new SharedArrayBuffer(16));
    for (const withOne of [true, false]) {
      const { calls, binding: fakeBinding } = fake(withOne);
      const { notify: fakeNotify } = createAtomics(fakeBinding, undefined, false);
      const skipper = skippingNotify(fakeBinding);
      assert.deepStrictEqual([fakeNotify(ta, 1, 1), fakeNotify(ta, 2), fakeNotify(ta, 3, 2), skipper(ta, 0, 1), skipper(ta, 1, 3)], [1, 1, 1, 1, 1]);
      const one = withOne ? 'notifyOneAt' : 'notifyAt';
      const oneCall = (i) => (withOne ? [one, base + 4 * i] : [one, base + 4 * i, 1]);
      assert.deepStrictEqual(calls, [
        oneCall(1),
        ['notifyAt', base + 8, Infinity],
        ['notifyAt', base + 12, 2],
        oneCall(0),
        ['notifyAt', base + 4, 3],
      ]);
    }
  });

  it('notifyAt and notifyOneAt wake by address; a wrong address finds nobody, a bad one throws; the kit comes once (child process)', async () => {
    const result = await runNodeAsync([fixture('fast-notify-kit.js')]);
    assert.deepStrictEqual([result.status, result.signal], [0, null], result.stderr);
    assert.deepStrictEqual(JSON.parse(result.stdout), {
      kit: ['addressOf', 'counts', 'notifyAt', 'notifyOneAt'],
      counts: true,
      againIsUndefined: true,
      packageFallsBack: true,
      base: true,
      neighbour: 0,
      nobody: 0,
      exact: 1,
      value: 'ok',
      bad: ['RangeError', 'RangeError', 'RangeError', 'RangeError', 'RangeError', 'Error'],
      oneNeighbour: 0,
      oneNobody: 0,
      oneExact: [1, 1, 0],
      oneValues: ['ok', 'ok'],
      oneBad: ['RangeError', 'RangeError', 'RangeError', 'RangeError', 'RangeError', 'Error'],
      notAnArray: 'TypeError',
      packageNotify: [0, 1],
      packageValue: 'ok',
    });
  });

  for (const [Kind, zero] of [[Int32Array, 0], [BigInt64Array, 0n]]) {
    it(`${Kind.name}: a pending waiter on any element is found by notify (offsets, 70,000 elements)`, async () => {
      const size = Kind.BYTES_PER_ELEMENT;
      const elements = 70000; // their counts: 70 KB, ~18 pages
      const sab = new SharedArrayBuffer(size * (elements + 3));
      for (const offsetElements of [0, 1, 3]) {
        const ta = new Kind(sab, offsetElements * size, elements);
        const settled = [];
        for (let i = 0; i < elements; i++) {
          const r = waitAsync(ta, i, zero);
          assert.strictEqual(r.async, true);
          settled.push(r.value);
          // The waiter is counted where notify looks: notify finds it.
          assert.strictEqual(notify(ta, i, 1), 1, `element ${i}, offset ${offsetElements}: the waiter was skipped`);
          // And once it has gone, nothing is left to find.
          assert.strictEqual(notify(ta, i, 1), 0);
        }
        assert.deepStrictEqual(new Set(await Promise.all(settled)), new Set(['ok']));
      }
    });
  }

  it('a waiter on an element past a 32 MB boundary of the address, where the count folds in its high bits, is found by notify', async () => {
    // 36 MB: at least one multiple of 2^25 lies inside, wherever the buffer
    // is. Every 1,021st element (a prime: every offset within a page comes
    // up) and the 64 elements at either end.
    const elements = (36 << 20) / 4;
    const ta = new Int32Array(new SharedArrayBuffer(elements * 4));
    const picked = new Set();
    for (let i = 0; i < elements; i += 1021) picked.add(i);
    for (let i = 0; i < 64; i++) picked.add(i).add(elements - 1 - i);
    for (const i of picked) {
      const r = waitAsync(ta, i, 0);
      assert.strictEqual(r.async, true);
      assert.strictEqual(notify(ta, i, 1), 1, `element ${i}: the waiter was skipped`);
      assert.strictEqual(await r.value, 'ok');
    }
  });

  it('alternating arrays and elements: each notify finds its own waiter', async () => {
    const arrays = [0, 1, 2].map(() => new Int32Array(new SharedArrayBuffer(64)));
    for (let round = 0; round < 50; round++) {
      const pending = arrays.map((ta, k) => waitAsync(ta, (round + k) % 16, 0));
      arrays.forEach((ta, k) => assert.strictEqual(notify(ta, (round + k + 1) % 16, 1), 0));
      arrays.forEach((ta, k) => assert.strictEqual(notify(ta, (round + k) % 16, 1), 1));
      assert.deepStrictEqual(await Promise.all(pending.map((r) => r.value)), ['ok', 'ok', 'ok']);
    }
  });

  it('a sync waiter in this thread that timed out leaves nothing counted', () => {
    const ta = new Int32Array(new SharedArrayBuffer(8));
    assert.strictEqual(wait(ta, 1, 0, 1), 'timed-out');
    assert.strictEqual(notify(ta, 1, 1), 0);
    const r = waitAsync(ta, 1, 0);
    assert.strictEqual(notify(ta, 1, 1), 1);
    return r.value;
  });

  it('two workers ping-pong with plain stores and skipping notifies: no wake-up lost (200,000 rounds)', async () => {
    const rounds = 200000;
    const sab = new SharedArrayBuffer(64);
    const common = { sab, offset: 16, length: 8, index: 3, rounds, patienceMs: 20000 };
    const workers = [0, 1].map((side) => new Worker(fixture('skip-notify-worker.js'), { workerData: { ...common, side } }));
    const results = await Promise.all(workers.map((w) => Promise.race([
      once(w, 'message').then(([m]) => m),
      once(w, 'error').then(([e]) => Promise.reject(e)),
    ])));
    for (const { lost } of results) assert.strictEqual(lost, 0, 'a wait timed out: its wake-up was lost');
    assert.strictEqual(new Int32Array(sab, 16, 8)[3], 2 * rounds);
  });

  it('main-thread waitAsync against a worker, plain stores on both sides: no wake-up lost (50,000 rounds)', async () => {
    const rounds = 50000;
    const sab = new SharedArrayBuffer(64);
    const ia = new Int32Array(sab, 16, 8);
    const index = 5;
    const worker = new Worker(fixture('skip-notify-worker.js'), {
      workerData: { sab, offset: 16, length: 8, index, side: 1, rounds, patienceMs: 20000 },
    });
    const failed = once(worker, 'error').then(([e]) => Promise.reject(e));
    const last = 2 * rounds;
    // On a machine loaded by other processes each round trip can wait for a
    // time slice on both sides (~0.5 s for all of them alone, over 120 s once
    // under load): after 30 s the run ends early, at the main thread's turn,
    // by moving the value to `last` (the worker then stops too), provided
    // it did a tenth of the rounds. What is checked is the same: no wait
    // ever timed out.
    const budgetEnds = Date.now() + 30000;
    for (;;) {
      const v = Atomics.load(ia, index);
      if (v >= last) break;
      if (v % 2 === 0) {
        ia[index] = v >= rounds / 5 && Date.now() > budgetEnds ? last : v + 1;
        notify(ia, index, 1);
      } else {
        const r = waitAsync(ia, index, v, 20000);
        if (r.async) {
          const outcome = await Promise.race([r.value, failed]);
          assert.strictEqual(outcome, 'ok', 'waitAsync timed out: its wake-up was lost');
        }
      }
    }
    const [{ lost }] = await Promise.race([once(worker, 'message'), failed]);
    assert.strictEqual(lost, 0, 'the worker\'s wait timed out: its wake-up was lost');
  });
});
