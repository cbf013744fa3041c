'use strict';
// Argument validation and coercion follow ECMA-262 exactly: for every
// argument position and many kinds of value, the error type (or result) and
// the order of side effects (valueOf / Symbol.toPrimitive calls) match the
// runtime's native Atomics where it implements them, and the spec's
// expectations everywhere.

const assert = require('assert');
const { MessageChannel } = require('worker_threads');
const api = require('../..');

// Under the forced polyfill (scripts/test-matrix.js) the global Atomics are ours:
// nothing native to compare with.
const forced = process.env.ATOMICS_WAITASYNC_TEST_POLYFILL === 'force';
const hasNativeWaitAsync = typeof Atomics.waitAsync === 'function' && !forced;
const nativeImpl = { waitAsync: Atomics.waitAsync, wait: Atomics.wait, notify: Atomics.notify };

function detached() {
  const ab = new ArrayBuffer(16);
  const ta = new Int32Array(ab);
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(ab, [ab]);
  port1.close();
  port2.close();
  return ta;
}

let growable = null;
try {
  growable = new SharedArrayBuffer(8, { maxByteLength: 64 });
  if (!growable.growable) growable = null;
} catch (_) {
  growable = null;
}

class MyInt32Array extends Int32Array {}

const SEED = 0x5eed; // every element holds this; no coerced value equals it

function arrays() {
  const make = (Ctor, shared = true) => {
    const ta = new Ctor(shared ? new SharedArrayBuffer(64) : new ArrayBuffer(64));
    ta.fill(Ctor === BigInt64Array || Ctor === BigUint64Array ? BigInt(SEED) : SEED);
    return ta;
  };
  const list = {
    Int32Array: make(Int32Array),
    BigInt64Array: make(BigInt64Array),
    'Int32Array (non-shared)': make(Int32Array, false),
    'BigInt64Array (non-shared)': make(BigInt64Array, false),
    Uint32Array: make(Uint32Array),
    Int16Array: make(Int16Array),
    Int8Array: make(Int8Array),
    Uint8Array: make(Uint8Array),
    Uint8ClampedArray: make(Uint8ClampedArray),
    Uint16Array: make(Uint16Array),
    Float32Array: make(Float32Array),
    Float64Array: make(Float64Array),
    BigUint64Array: make(BigUint64Array),
    'Int32Array subclass': (() => { const t = new MyInt32Array(new SharedArrayBuffer(16)); t.fill(SEED); return t; })(),
    'Int32Array with byte offset': (() => { const t = new Int32Array(new SharedArrayBuffer(64), 8, 4); t.fill(SEED); return t; })(),
    'detached Int32Array': detached(),
    DataView: new DataView(new SharedArrayBuffer(16)),
    SharedArrayBuffer: new SharedArrayBuffer(16),
    ArrayBuffer: new ArrayBuffer(16),
    'plain array': [1, 2, 3],
    'array-like': { length: 4, buffer: new SharedArrayBuffer(16), 0: 0 },
    'fake toStringTag': { [Symbol.toStringTag]: 'Int32Array', buffer: new SharedArrayBuffer(16), length: 4 },
    undefined,
    null: null,
    number: 1,
    string: 'Int32Array',
    symbol: Symbol('x'),
    bigint: 1n,
    'Proxy of Int32Array': new Proxy(make(Int32Array), {}),
  };
  if (growable) {
    const ta = new Int32Array(growable); // length-tracking: 2 elements now
    ta.fill(SEED);
    list['length-tracking Int32Array on growable SAB'] = ta;
  }
  return list;
}

/** Values for index, value, timeout and count positions; objects log their coercions. */
function values(log) {
  const logged = (name, result) => ({ valueOf() { log.push(`${name}.valueOf`); return result; } });
  return {
    undefined: undefined,
    null: null,
    true: true,
    false: false,
    0: 0,
    '-0': -0,
    1: 1,
    '-1': -1,
    1.5: 1.5,
    '-1.5': -1.5,
    NaN: NaN,
    Infinity: Infinity,
    '-Infinity': -Infinity,
    '2^53': 2 ** 53,
    '2^53-1': 2 ** 53 - 1,
    '2^32': 2 ** 32,
    '2^31': 2 ** 31,
    '-2^31': -(2 ** 31),
    "''": '',
    "'3'": '3',
    "' 2 '": ' 2 ',
    "'abc'": 'abc',
    "'0x10'": '0x10',
    symbol: Symbol('s'),
    '0n': 0n,
    '1n': 1n,
    '-1n': -1n,
    '2n**64n': 2n ** 64n,
    '{}': {},
    '[]': [],
    '[2]': [2],
    'valueOf → 1': logged('v', 1),
    'valueOf → 1n': logged('v', 1n),
    'valueOf throws': { valueOf() { log.push('throwing.valueOf'); throw new SyntaxError('from valueOf'); } },
    'Symbol.toPrimitive → 2': { [Symbol.toPrimitive](hint) { log.push(`toPrimitive:${hint}`); return 2; } },
    'Symbol.toPrimitive → object': { [Symbol.toPrimitive]() { log.push('toPrimitive:bad'); return {}; } },
    'toString only': { valueOf: undefined, toString() { log.push('toString'); return '1'; } },
    'Proxy of number-ish': new Proxy({ valueOf: () => 1 }, {}),
    function: function () {},
    Date: new Date(0),
  };
}

function outcome(fn) {
  try {
    const result = fn();
    if (result && typeof result === 'object') {
      return { result: { async: result.async, value: result.async ? 'promise' : result.value } };
    }
    return { result };
  } catch (error) {
    return { threw: error && error.constructor && error.constructor.name };
  }
}

/** Runs `call(impl, args)` for both implementations and returns their outcomes and logs. */
function both(build, call) {
  const results = [];
  for (const impl of [nativeImpl, api]) {
    const log = [];
    const args = build(log);
    const o = outcome(() => call(impl, args));
    results.push({ ...o, log: log.join(',') });
  }
  return results;
}

const logging = (log, name, v) => ({ valueOf() { log.push(`${name}`); return v; } });

// Where a runtime's native Atomics depart from ECMA-262, by Node major
// version: the case, what native does, and what the spec (and we) do. Only
// these may differ; docs/conformance.md lists them.
const kDepartures = {
  14: {
    // Node 14 (V8 8.4) throws on a non-shared Int32Array instead of
    // returning 0 (spec: Atomics.notify step 7).
    'notify typedArray=Int32Array (non-shared)': { native: { threw: 'TypeError' }, spec: { result: 0 } },
    'notify typedArray=BigInt64Array (non-shared)': { native: { threw: 'TypeError' }, spec: { result: 0 } },
  },
};
const departures = kDepartures[Number(process.versions.node.split('.')[0])] || {};

function checkAgainstNative(fnName, position, kind, build) {
  const [native, ours] = both(build, (impl, args) => impl[fnName](...args));
  const name = `${fnName} ${position}=${kind}`;
  const departure = departures[name];
  if (departure) {
    assert.deepStrictEqual({ threw: native.threw, result: native.result }, { result: undefined, ...departure.native }, `${name}: native`);
    assert.deepStrictEqual({ threw: ours.threw, result: ours.result }, { threw: undefined, ...departure.spec }, `${name}: ours`);
    return;
  }
  assert.deepStrictEqual(ours, native, name);
}

describe('validation matches native Atomics (' + process.version + ')', () => {
  for (const fnName of ['waitAsync', 'wait', 'notify']) {
    // Node 14 has wait and notify but no waitAsync to compare with.
    const hasNative = !forced && (fnName !== 'waitAsync' || hasNativeWaitAsync);
    (hasNative ? describe : describe.skip)(fnName, () => {
      it('typedArray: every kind of value', () => {
        for (const kind of Object.keys(arrays())) {
          checkAgainstNative(fnName, 'typedArray', kind, (log) => {
            const big = kind.startsWith('Big');
            const index = logging(log, 'index', 0);
            if (fnName === 'notify') return [arrays()[kind], index, logging(log, 'count', 1)];
            return [arrays()[kind], index, logging(log, 'value', big ? 1n : 1), logging(log, 'timeout', 0)];
          });
        }
      });

      const positions = fnName === 'notify' ? ['index', 'count'] : ['index', 'value', 'timeout'];
      for (const position of positions) {
        for (const arrayKind of ['Int32Array', 'BigInt64Array']) {
          it(`${position} on ${arrayKind}: every kind of value, in the spec's order`, () => {
            for (const kind of Object.keys(values([]))) {
              checkAgainstNative(fnName, position, kind, (log) => {
                const ta = arrays()[arrayKind];
                const big = arrayKind === 'BigInt64Array';
                const args =
                  fnName === 'notify'
                    ? { index: logging(log, 'index', 1), count: logging(log, 'count', 0) }
                    : { index: logging(log, 'index', 1), value: logging(log, 'value', big ? 1n : 1), timeout: logging(log, 'timeout', 0) };
                args[position] = values(log)[kind];
                return [ta, ...positions.map((p) => args[p])];
              });
            }
          });
        }
      }
    });
  }
});

describe('validation (spec expectations, every runtime)', () => {
  const sab = () => new Int32Array(new SharedArrayBuffer(16));

  it('names the bad argument in the message', () => {
    assert.throws(() => api.waitAsync(new Float64Array(4), 0, 0), { name: 'TypeError', message: /"typedArray"/ });
    assert.throws(() => api.waitAsync(new Int32Array(4), 0, 0), { name: 'TypeError', message: /SharedArrayBuffer/ });
    assert.throws(() => api.waitAsync(sab(), 4, 0), { name: 'RangeError', message: /"index"/ });
    assert.throws(() => api.waitAsync(sab(), -1, 0), { name: 'RangeError', message: /"index"/ });
    assert.throws(() => api.wait(sab(), Symbol('i'), 0), { name: 'TypeError', message: /"index"/ });
    assert.throws(() => api.waitAsync(sab(), 0, 1n), { name: 'TypeError', message: /"value"/ });
    assert.throws(() => api.waitAsync(new BigInt64Array(new SharedArrayBuffer(16)), 0, 1), { name: 'TypeError', message: /"value"/ });
    assert.throws(() => api.waitAsync(sab(), 0, 0, 1n), { name: 'TypeError', message: /"timeout"/ });
    assert.throws(() => api.notify(sab(), 0, Symbol('c')), { name: 'TypeError', message: /"count"/ });
    assert.throws(() => api.notify(sab(), 9), { name: 'RangeError', message: /"index"/ });
  });

  it('coerces in the spec\'s order: index, then value, then timeout (and stops at the first throw)', () => {
    const log = [];
    const ta = sab();
    ta[0] = 5;
    const r = api.waitAsync(ta, logging(log, 'index', 0), logging(log, 'value', 4), logging(log, 'timeout', 0));
    assert.deepStrictEqual(r, { async: false, value: 'not-equal' });
    assert.deepStrictEqual(log, ['index', 'value', 'timeout']);
    log.length = 0;
    assert.throws(() => api.wait(ta, logging(log, 'index', 99), logging(log, 'value', 4)), RangeError);
    assert.deepStrictEqual(log, ['index'], 'the range check happens before value is coerced');
  });

  it('rejects a non-shared buffer before coercing the index (waitAsync, wait) but returns 0 from notify', () => {
    const log = [];
    assert.throws(() => api.waitAsync(new Int32Array(4), logging(log, 'index', 0), 0), TypeError);
    assert.deepStrictEqual(log, []);
    assert.strictEqual(api.notify(new Int32Array(4), logging(log, 'index', 0), logging(log, 'count', 1)), 0);
    assert.deepStrictEqual(log, ['index', 'count']);
  });

  it('a detached buffer is a TypeError, also for notify', () => {
    assert.throws(() => api.notify(detached(), 0), TypeError);
    assert.throws(() => api.waitAsync(detached(), 0, 0), TypeError);
  });

  (growable ? it : it.skip)('length-tracking views of a growable SharedArrayBuffer use the current length', async () => {
    const buffer = new SharedArrayBuffer(8, { maxByteLength: 64 });
    const ta = new Int32Array(buffer);
    assert.throws(() => api.waitAsync(ta, 2, 0), RangeError);
    buffer.grow(16);
    const r = api.waitAsync(ta, 3, 0);
    assert.strictEqual(r.async, true);
    assert.strictEqual(api.notify(ta, 3), 1);
    assert.strictEqual(await r.value, 'ok');
  });

  it('has the built-ins\' lengths and names', () => {
    assert.strictEqual(api.waitAsync.length, 4);
    assert.strictEqual(api.wait.length, 4);
    assert.strictEqual(api.notify.length, 3);
    assert.deepStrictEqual([api.waitAsync.name, api.wait.name, api.notify.name], ['waitAsync', 'wait', 'notify']);
  });
});
