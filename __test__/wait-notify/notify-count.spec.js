'use strict';
// notify's count argument and return value.

const assert = require('assert');
const { waitAsync, notify } = require('../..');

async function queued(n) {
  const ta = new Int32Array(new SharedArrayBuffer(8));
  const promises = [];
  for (let i = 0; i < n; i++) promises.push(waitAsync(ta, 0, 0).value);
  return { ta, promises };
}

describe('notify count', () => {
  const cases = [
    [undefined, 5],
    [Infinity, 5],
    [0, 0],
    [-1, 0],
    [-Infinity, 0],
    [NaN, 0],
    [2.9, 2],
    ['3', 3],
    [null, 0],
    [true, 1],
    [{ valueOf: () => 4 }, 4],
    [1e20, 5],
  ];
  for (const [count, expected] of cases) {
    it(`count ${typeof count === 'object' && count ? 'object' : String(count)} wakes ${expected} of 5`, async () => {
      const { ta, promises } = await queued(5);
      assert.strictEqual(notify(ta, 0, count), expected);
      assert.strictEqual(notify(ta, 0), 5 - expected, 'the rest were still queued');
      await Promise.all(promises);
    });
  }

  it('returns 0 on a non-shared Int32Array or BigInt64Array', () => {
    assert.strictEqual(notify(new Int32Array(4), 0), 0);
    assert.strictEqual(notify(new BigInt64Array(4), 3, 1), 0);
  });

  it('returns 0 when nobody waits', () => {
    assert.strictEqual(notify(new Int32Array(new SharedArrayBuffer(8)), 1), 0);
  });
});
