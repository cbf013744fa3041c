'use strict';
// lib/atomics.js takes Math.trunc and BigInt.asIntN at load, like the other
// intrinsics there: a program that replaces them later must not change how
// indexes and BigInt values are coerced.

const assert = require('assert');
const { waitAsync } = require('../..');

describe('Math.trunc and BigInt.asIntN taken at load', function () {
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
