'use strict';
// notify and waitAsync take their common call (an array, a Number index,
// a Number count or value) on a fast path that skips the spec's checks and
// leaves the rest to the slow path. Each case here is one the fast path
// must not take as it is, or must take exactly as the slow path would: the
// same result, the same error. An object argument (whose valueOf gives the
// same number) makes a call take the slow path, to compare with.

const assert = require('assert');
const { waitAsync, notify } = require('../..');

const slow = (n) => ({ valueOf: () => n });

/** What `f()` returns, or the constructor and message of what it throws. */
function outcome(f) {
  try {
    return { value: f() };
  } catch (error) {
    return { error: error.constructor, message: error.message };
  }
}

/** One pending waitAsync on each of `indices` of `ta`; their promises. */
function waiting(ta, indices) {
  return indices.map((i) => {
    const result = waitAsync(ta, i, 0);
    assert.strictEqual(result.async, true);
    return result.value;
  });
}

describe('notify and waitAsync fast paths', () => {
  it('notify on another view of the same buffer wakes the element of that view, not of the last array notified', async () => {
    const sab = new SharedArrayBuffer(32);
    const whole = new Int32Array(sab);
    const tail = new Int32Array(sab, 8, 4); // tail[i] is whole[i + 2]
    const promises = waiting(whole, [2, 3]);
    assert.strictEqual(notify(whole, 0, 1), 0); // the last array notified: whole
    assert.strictEqual(notify(tail, 0, 1), 1); // whole[2]
    assert.strictEqual(notify(whole, 0, 1), 0);
    assert.strictEqual(notify(tail, 1, 1), 1); // whole[3]
    assert.deepStrictEqual(await Promise.all(promises), ['ok', 'ok']);
  });

  it('notify on a non-shared Int32Array after a shared one returns 0 and wakes nobody', async () => {
    const shared = new Int32Array(new SharedArrayBuffer(16));
    const promises = waiting(shared, [0]);
    assert.strictEqual(notify(shared, 1, 1), 0);
    assert.strictEqual(notify(new Int32Array(4), 0, 1), 0);
    assert.strictEqual(notify(shared, 0, 1), 1, 'the waiter was still queued');
    await Promise.all(promises);
  });

  it('notify with an index that is fractional, negative, out of range (2^32 + 1 too, which is 1 mod 2^32), NaN, -0 or a string does what the spec path does', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    for (const index of [1.5, -1, -0.5, 4, 4.5, 2 ** 32, 2 ** 32 + 1, -(2 ** 32) + 1, 2 ** 53, Infinity, -Infinity, NaN, -0, '0', '1', '1.5', '']) {
      for (const count of [1, undefined]) {
        // A waiter on element 0 and on element 1, so that a wrong element or count shows.
        const promises = waiting(ta, [0, 1]);
        const fast = outcome(() => notify(ta, index, count));
        const rest = notify(ta, 0) + notify(ta, 1);
        const promisesToo = waiting(ta, [0, 1]);
        const spec = outcome(() => notify(ta, index, slow(count === undefined ? Infinity : count)));
        const restToo = notify(ta, 0) + notify(ta, 1);
        assert.deepStrictEqual(fast, spec, `index ${String(index)}, count ${count}`);
        assert.strictEqual(rest, restToo, `index ${String(index)}, count ${count}: the waiters left`);
        await Promise.all(promises.concat(promisesToo));
      }
    }
  });

  it('notify with a count that is negative, NaN, fractional, -0 or infinite wakes what the spec path wakes', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(8));
    for (const count of [-1, -0.5, -0, NaN, 0.5, 1.5, 2.9, Infinity, -Infinity, 2 ** 53, 2 ** 64]) {
      const promises = waiting(ta, [0, 0, 0]);
      const fast = notify(ta, 0, count);
      notify(ta, 0);
      const promisesToo = waiting(ta, [0, 0, 0]);
      const spec = notify(ta, 0, slow(count));
      notify(ta, 0);
      assert.strictEqual(fast, spec, `count ${count}`);
      await Promise.all(promises.concat(promisesToo));
    }
  });

  it('notify on a length-tracking view of a growable buffer wakes an element past the length it had when first notified', async function () {
    let gsab;
    try {
      gsab = new SharedArrayBuffer(8, { maxByteLength: 64 });
    } catch (_) {
      gsab = undefined;
    }
    if (gsab === undefined || !gsab.growable) this.skip();
    const ta = new Int32Array(gsab); // length-tracking
    assert.strictEqual(notify(ta, 0, 1), 0); // its length then: 2
    gsab.grow(32);
    const promises = waiting(ta, [5]);
    assert.strictEqual(notify(ta, 5, 1), 1);
    await Promise.all(promises);
  });

  it('waitAsync with primitives the binding refuses (a fractional index, an index out of range, a BigInt for an Int32Array, an array it does not take) does what the spec path does', () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    const cases = [
      [ta, 1.5, 1],
      [ta, -1, 1],
      [ta, 4, 1],
      [ta, 2 ** 53, 1],
      [ta, 0, 1n],
      [new Int32Array(4), 0, 1],
      [new Uint32Array(new SharedArrayBuffer(16)), 0, 1],
      [new BigInt64Array(new SharedArrayBuffer(16)), 0, 1],
    ];
    for (const [array, index, value] of cases) {
      const fast = outcome(() => waitAsync(array, index, value, 0));
      const spec = outcome(() => waitAsync(array, index, value, slow(0)));
      assert.deepStrictEqual(fast, spec, `${array.constructor.name}, index ${index}, value ${value}`);
    }
  });

  it('waitAsync with an index of -0, NaN or a string, or a string value, is coerced as the spec path coerces it', () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    ta[0] = 7;
    for (const [index, value] of [[-0, 0], [NaN, 0], ['0', 0], ['0', '7'], [0, '7'], [0, 7.9], [0, 2 ** 32 + 7]]) {
      const fast = waitAsync(ta, index, value, 0);
      const spec = waitAsync(ta, index, value, slow(0));
      assert.deepStrictEqual(fast, spec, `index ${String(index)}, value ${String(value)}`);
    }
  });

  it('waitAsync with a 5th argument that is not an object throws after the spec\'s checks, and one that is undefined waits as with four', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(8));
    assert.throws(() => waitAsync(ta, 0, 1, 0, 5), { name: 'TypeError', message: /"options" argument must be an object/ });
    assert.throws(() => waitAsync(ta, 2, 1, 0, 5), RangeError, 'the index is checked first');
    assert.deepStrictEqual(waitAsync(ta, 0, 1, 0, undefined), { async: false, value: 'not-equal' });
    const result = waitAsync(ta, 0, 0, undefined, undefined);
    assert.strictEqual(result.async, true);
    assert.strictEqual(notify(ta, 0, 1), 1);
    assert.strictEqual(await result.value, 'ok');
    assert.strictEqual(waitAsync.length, 4);
  });
});
