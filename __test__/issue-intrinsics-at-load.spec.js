'use strict';
// Review (JS, 8): lib/atomics.js called Math.trunc and BigInt.asIntN as
// they were at the time of the call; a program that replaced them changed
// how indexes and BigInt values were coerced. They are taken at load now,
// like the other intrinsics there.

const assert = require('assert');
const { waitAsync } = require('..');

describe('Math.trunc and BigInt.asIntN taken at load (review JS 8)', function () {
  it('a replaced Math.trunc / BigInt.asIntN is not called by waitAsync', () => {
    const trunc = Math.trunc;
    const asIntN = BigInt.asIntN;
    Math.trunc = () => {
      throw new Error('Math.trunc of the program');
    };
    BigInt.asIntN = () => {
      throw new Error('BigInt.asIntN of the program');
    };
    try {
      const i32a = new Int32Array(new SharedArrayBuffer(8));
      // An index that is not an integral Number takes the spec's ToIntegerOrInfinity.
      assert.deepStrictEqual(waitAsync(i32a, '1.5', 1, 0), { async: false, value: 'not-equal' });
      const i64a = new BigInt64Array(new SharedArrayBuffer(8));
      // A value that is not a BigInt primitive takes ToBigInt64.
      assert.deepStrictEqual(waitAsync(i64a, 0, Object(1n), 0), { async: false, value: 'not-equal' });
    } finally {
      Math.trunc = trunc;
      BigInt.asIntN = asIntN;
    }
  });
});
