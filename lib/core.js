'use strict';
// What every primitive of the family (lib/async-lock.js, lib/condition.js)
// shares: intrinsic promises, the `{ timeout, signal }` options and their
// errors, Symbol.dispose where the runtime has it.

const { isSharedArrayBuffer, isInt32Array } = require('util').types;
const { describe } = require('./describe');
const { IntrinsicPromise } = require('./pending'); // undefined if not found

// Every promise of the primitives is an intrinsic %Promise%, made by an async function
// and chained only with `await`: never with the global Promise of the moment
// or `then`, which a program may have replaced or changed (zone.js, bluebird,
// core-js, a subclass, a constructor or a `Symbol.species` that throws, a
// rewritten `Promise.prototype.constructor`). Each would change what a
// primitive returns or break it: a species that throws, looked up by `then`,
// made an executeLocked that had taken the lock throw and leave it held, or
// left a queued waiter that nobody listened to (a lost wake-up).
//
// `await p` looks up `p.constructor` and, when that is %Promise%, chains
// without looking up anything else. So every promise of ours is given an
// own `constructor`: %Promise% as found at load (lib/pending.js); where it
// could not be found, `undefined` (the chain then still works, through
// %Promise.prototype.then%). Promises of the caller's f are awaited as they
// are, as any code awaiting them would.
const reflectDefineProperty = Reflect.defineProperty;
// Null-prototype descriptors: a property a program put on Object.prototype
// (`get`, a getter `enumerable`) cannot become part of them.
const kConstructor = { __proto__: null, value: IntrinsicPromise };
const ours = (promise) => {
  reflectDefineProperty(promise, 'constructor', kConstructor);
  return promise;
};

const symbolDispose = typeof Symbol.dispose === 'symbol' ? Symbol.dispose : undefined;
const symbolAsyncDispose = typeof Symbol.asyncDispose === 'symbol' ? Symbol.asyncDispose : undefined;

/** A timeout in milliseconds: a number >= 0 (Infinity allowed). */
function validateTimeout(timeout, name) {
  if (typeof timeout !== 'number') {
    throw new TypeError(`The "${name}" argument must be a number of milliseconds. Received ${describe(timeout)}`);
  }
  if (!(timeout >= 0)) {
    throw new RangeError(`The "${name}" argument must be >= 0 (or Infinity). Received ${describe(timeout)}`);
  }
  return timeout;
}

/**
 * `options.signal`: undefined, or an AbortSignal, or any object with its
 * surface (`aborted`, `reason`, `addEventListener`, `removeEventListener`),
 * so that Node 14, which has none, can pass one.
 */
function validateSignal(signal) {
  if (signal !== undefined &&
      (signal === null || typeof signal !== 'object' || typeof signal.aborted !== 'boolean' ||
       typeof signal.addEventListener !== 'function' || typeof signal.removeEventListener !== 'function')) {
    throw new TypeError(`The "options.signal" property must be an AbortSignal. Received ${describe(signal)}`);
  }
  return signal;
}

/** `{ timeout, signal }` of the async methods → `{ timeout, signal }`, validated. */
function validateOptions(options) {
  if (options === undefined) return { timeout: Infinity, signal: undefined };
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`The "options" argument must be an object. Received ${describe(options)}`);
  }
  const timeout = options.timeout === undefined ? Infinity : validateTimeout(options.timeout, 'options.timeout');
  return { timeout, signal: validateSignal(options.signal) };
}

/** The signal's reason; an AbortError like Node's where `reason` is missing (Node < 17.2). */
function abortReason(signal) {
  if (signal.reason !== undefined) return signal.reason;
  const error = new Error('The operation was aborted');
  error.name = 'AbortError';
  error.code = 'ABORT_ERR';
  return error;
}

/**
 * The Int32 slot a primitive lives in, from its constructor's arguments:
 * `(sab)` → element `defaultIndex` of an Int32Array over the whole buffer;
 * `(sab, index)` or `(int32Array, index)` → that element; `()` → a fresh
 * buffer of `bytes` bytes. Errors name the arguments `"sab"` and `"index"`.
 */
function int32Slot(sab, index, defaultIndex, bytes) {
  let i32a;
  if (sab === undefined) {
    sab = new SharedArrayBuffer(bytes);
    i32a = new Int32Array(sab);
  } else if (isSharedArrayBuffer(sab)) {
    i32a = new Int32Array(sab, 0, Math.floor(sab.byteLength / 4));
  } else if (isInt32Array(sab) && isSharedArrayBuffer(sab.buffer)) {
    i32a = sab;
    sab = sab.buffer;
  } else {
    throw new TypeError(
      `The "sab" argument must be a SharedArrayBuffer or an Int32Array over one. Received ${describe(sab)}`
    );
  }
  if (i32a.length === 0) {
    throw new RangeError(`The "sab" argument must hold at least one Int32 (4 bytes). Received ${sab.byteLength} bytes`);
  }
  if (index === undefined) {
    index = defaultIndex;
  } else if (typeof index !== 'number') {
    throw new TypeError(`The "index" argument must be a number. Received ${describe(index)}`);
  }
  if (!(Number.isInteger(index) && index >= 0 && index < i32a.length)) {
    throw new RangeError(
      `The "index" argument must be an integer from 0 to ${i32a.length - 1} (the Int32 slots of the buffer). ` +
        `Received ${describe(index)}`
    );
  }
  return { sab, i32a, index };
}

/**
 * The argument of a primitive's `from(value)`: an instance posted to this
 * thread (its structured clone, `{ sab, i32a, index }`) or a hand-made
 * `{ i32a, index }` / `{ sab, index }`; the constructor's arguments.
 */
function fromPosted(value, name) {
  if (value === null || typeof value !== 'object' || (value.i32a === undefined && value.sab === undefined)) {
    throw new TypeError(
      `The "value" argument must be ${name} or its posted copy { sab, i32a, index }. Received ${describe(value)}`
    );
  }
  return [value.i32a !== undefined ? value.i32a : value.sab, value.index];
}

module.exports = {
  int32Slot,
  fromPosted,
  IntrinsicPromise,
  ours,
  reflectDefineProperty,
  symbolDispose,
  symbolAsyncDispose,
  validateTimeout,
  validateOptions,
  validateSignal,
  abortReason,
};
