'use strict';
// waitAsync remembers the typed array of its last calls (src/napi/env.rs
// `last_array`) to skip N-API's typed-array look-up: calls on that array,
// on other arrays, on views of the same memory, after the array grew, or
// after it was collected, must all find the element they name. The sync
// wait goes through the same memory, so the two kinds of call mix.

const assert = require('assert');
const v8 = require('v8');
const vm = require('vm');
const { waitAsync, wait, notify, waitersForTesting } = require('../..');

const settle = async (ta, index, n = 1) => {
  assert.strictEqual(notify(ta, index), n);
};

describe('waitAsync on the array of its last calls', () => {
  it('finds each element of the same array, and of others in between', async () => {
    const a = new Int32Array(new SharedArrayBuffer(64));
    const b = new Int32Array(new SharedArrayBuffer(64));
    b[5] = 1;
    for (let round = 0; round < 4; round++) {
      for (const i of [0, 15, 3]) {
        const r = waitAsync(a, i, 0);
        assert.strictEqual(r.async, true);
        assert.strictEqual(waitersForTesting(a, i).registry, 1);
        await settle(a, i);
        assert.strictEqual(await r.value, 'ok');
      }
      // Another array, every other round twice in a row (it becomes the last).
      for (let k = 0; k <= round % 2; k++) {
        assert.deepStrictEqual(waitAsync(b, 5, 0), { async: false, value: 'not-equal' });
        const r = waitAsync(b, 5, 1);
        assert.strictEqual(waitersForTesting(b, 5).registry, 1);
        assert.strictEqual(waitersForTesting(a, 5).registry, 0);
        await settle(b, 5);
        assert.strictEqual(await r.value, 'ok');
      }
      assert.throws(() => waitAsync(a, 16, 0), RangeError);
      // ToIndex(1.5) is 1 (the binding refuses it, the spec path does not).
      const r = waitAsync(a, 1.5, 0);
      assert.strictEqual(waitersForTesting(a, 1).registry, 1);
      await settle(a, 1);
      assert.strictEqual(await r.value, 'ok');
    }
  });

  it('tells apart views of one buffer at other offsets and of other kinds', async () => {
    const buffer = new SharedArrayBuffer(64);
    const whole = new Int32Array(buffer);
    const tail = new Int32Array(buffer, 16, 4);
    const big = new BigInt64Array(buffer);
    whole[4] = 9;
    for (let k = 0; k < 3; k++) {
      assert.deepStrictEqual(waitAsync(whole, 4, 0), { async: false, value: 'not-equal' });
      assert.deepStrictEqual(waitAsync(tail, 0, 0), { async: false, value: 'not-equal' });
      assert.deepStrictEqual(waitAsync(big, 2, 0n), { async: false, value: 'not-equal' });
      assert.throws(() => waitAsync(tail, 4, 0), RangeError);
    }
    const r = waitAsync(tail, 0, 9);
    assert.strictEqual(waitersForTesting(whole, 4).registry, 1);
    await settle(whole, 4);
    assert.strictEqual(await r.value, 'ok');
    assert.strictEqual(waitersForTesting().pending, 0);
  });

  it('a length-tracking array that grew finds its new elements', async function () {
    let buffer;
    try {
      buffer = new SharedArrayBuffer(8, { maxByteLength: 64 });
    } catch (_) {
      this.skip();
    }
    if (buffer.growable !== true) this.skip();
    const ta = new Int32Array(buffer);
    for (let k = 0; k < 3; k++) {
      const r = waitAsync(ta, 1, 0);
      await settle(ta, 1);
      assert.strictEqual(await r.value, 'ok');
    }
    assert.throws(() => waitAsync(ta, 2, 0), RangeError);
    buffer.grow(64);
    const r = waitAsync(ta, 15, 0);
    assert.strictEqual(r.async, true);
    await settle(ta, 15);
    assert.strictEqual(await r.value, 'ok');
  });

  it('an array that was collected is not taken for a new one', async function () {
    if (typeof WeakRef !== 'function') this.skip(); // (Node < 14.6: no way to see it collected)
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc');
    const other = new Int32Array(new SharedArrayBuffer(8));
    for (let round = 0; round < 20; round++) {
      let ta = new Int32Array(new SharedArrayBuffer(8 + 8 * round));
      for (let k = 0; k < 2; k++) {
        const r = waitAsync(ta, 1, 0);
        await settle(ta, 1);
        assert.strictEqual(await r.value, 'ok');
      }
      const collected = new WeakRef(ta);
      ta = null;
      // notify remembers the last array it was given (lib/atomics.js): give
      // it another, so that nothing but the binding's weak reference is left.
      notify(other, 0);
      await new Promise(setImmediate); // a WeakRef keeps its target to the end of the job
      gc();
      assert.strictEqual(collected.deref(), undefined, 'the array was collected (else this tests nothing)');
      const fresh = new Int32Array(new SharedArrayBuffer(8));
      fresh[1] = 3;
      assert.deepStrictEqual(waitAsync(fresh, 1, 0), { async: false, value: 'not-equal' });
      const r = waitAsync(fresh, 1, 3);
      assert.strictEqual(waitersForTesting(fresh, 1).registry, 1);
      await settle(fresh, 1);
      assert.strictEqual(await r.value, 'ok');
    }
  });
});

describe('wait on the array of the last calls (waitAsync or wait)', () => {
  // On this thread a wait with timeout 0 says which element it read:
  // "timed-out" when it holds the value given, else "not-equal".
  const expect = (ta, index, value, outcome) => assert.strictEqual(wait(ta, index, value, 0), outcome);

  it('reads the element each call names, whichever array the last calls were on', async () => {
    const buffer = new SharedArrayBuffer(64);
    const whole = new Int32Array(buffer);
    const tail = new Int32Array(buffer, 16, 4); // tail[i] is whole[i + 4]
    const big = new BigInt64Array(buffer);
    const other = new Int32Array(new SharedArrayBuffer(64));
    whole[1] = 3;
    whole[3] = 7;
    whole[4] = 9;
    whole[5] = 11;
    other[3] = 5;
    // An array becomes the cached one on its second call in a row, so each
    // block of three calls on one array runs its last on the cache.
    for (let round = 0; round < 4; round++) {
      for (let k = 0; k < 3; k++) {
        expect(whole, 3, 7, 'timed-out');
        expect(whole, 4, 7, 'not-equal');
        expect(whole, 1, 3, 'timed-out');
      }
      for (let k = 0; k < 3; k++) {
        expect(other, 3, 5, 'timed-out');
        expect(other, 3, 7, 'not-equal');
      }
      for (let k = 0; k < 3; k++) {
        expect(tail, 0, 9, 'timed-out');
        expect(tail, 0, 7, 'not-equal');
        expect(tail, 1, 11, 'timed-out');
        assert.throws(() => wait(tail, 4, 0, 0), RangeError);
      }
      // big[1] covers whole[2] and whole[3], big[2] whole[4] and whole[5]:
      // two different values (either byte order).
      for (let k = 0; k < 3; k++) {
        expect(big, 2, big[2], 'timed-out');
        expect(big, 1, big[1], 'timed-out');
        expect(big, 1, big[2], 'not-equal');
      }
      // waitAsync on `other` in between, every other round three times
      // (then it is the cached array when `whole` comes round again).
      for (let k = 0; k < 1 + 2 * (round % 2); k++) {
        const r = waitAsync(other, 3, 5);
        assert.strictEqual(waitersForTesting(other, 3).registry, 1);
        assert.strictEqual(notify(other, 3), 1);
        assert.strictEqual(await r.value, 'ok');
      }
      expect(whole, 3, 7, 'timed-out');
      expect(whole, 3, 9, 'not-equal');
    }
    assert.strictEqual(waitersForTesting().pending, 0);
  });
});
