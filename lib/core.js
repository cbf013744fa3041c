'use strict';
// What every primitive of the family (lib/async-lock.js, lib/condition.js)
// shares: intrinsic promises, the `{ timeout, signal }` options and their
// errors, Symbol.dispose where the runtime has it.

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

module.exports = {
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
