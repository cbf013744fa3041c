'use strict';
// How an error message names the value it received: one wording for every
// argument check of the package (lib/atomics.js, lib/core.js and every
// primitive); and the few facts about the runtime and this thread that
// several modules ask. (One file: each file a thread loads costs it ~0.2 ms
// of Node's module loading, whatever its size.)

// %TypedArray%.prototype accessors, taken once: they read internal slots,
// so a subclass or an own property cannot fake them. The package's one copy
// (lib/atomics.js and lib/node-loader.js take them from here).
const TypedArrayPrototype = Object.getPrototypeOf(Int32Array.prototype);
const uncurry = (fn) => Function.prototype.call.bind(fn);
const accessor = (name) => uncurry(Object.getOwnPropertyDescriptor(TypedArrayPrototype, name).get);
const typedArrayName = accessor(Symbol.toStringTag); // undefined for non-TypedArrays
const typedArrayBuffer = accessor('buffer');
const typedArrayLength = accessor('length');

/** `a Float64Array`, `an instance of Map`, `"abc"`, `5n`, `a symbol`, ... */
function describe(value) {
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') {
    const name = typedArrayName(value);
    if (name !== undefined) return `a ${name}`;
    if (value instanceof DataView) return 'a DataView';
    const constructorName = value.constructor && value.constructor.name;
    return constructorName && constructorName !== 'Object' ? `an instance of ${constructorName}` : 'an object';
  }
  if (typeof value === 'symbol') return 'a symbol';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return JSON.stringify(value.length > 20 ? value.slice(0, 20) + '\u2026' : value);
  return String(value);
}

/**
 * Whether `versions` (process.versions) are Node's own: Bun and Deno report
 * a Node version too, but run none of Node's JS and have their own N-API.
 */
function isNodeItself(versions) {
  return (
    versions !== null &&
    typeof versions === 'object' &&
    typeof versions.node === 'string' &&
    !versions.bun &&
    !versions.deno
  );
}

// What the package takes from the runtime as it is when the package loads.
// The family's files load later, at a thread's first use of a class: they
// take these from here, so that what a program changes after loading the
// package (its fake timers, a replaced Promise or `then`, a Reflect, util
// or Symbol.dispose shim) reaches none of them. (lib/node-loader.js, the
// polyfill's, takes its own when install() first patches: usually as the
// program loads.)

// %Promise%, the intrinsic, as ECMA-262's waitAsync uses (NewPromiseCapability
// (%Promise%)): never the global Promise of the moment, which a program may
// have replaced (zone.js, core-js, a subclass, one whose constructor throws),
// possibly before the package loads (a preload). An async function's result
// is always an intrinsic promise, so its prototype is %Promise.prototype%;
// the `constructor` of that is %Promise% unless something rewrote it, in
// which case the global is tried. If both were replaced before the package
// loads, %Promise% cannot be reached: IntrinsicPromise is then undefined
// (never a replacement), and promises are made without it (reserve).
// (Works on Node 12 to 24, Bun and Deno.)
const kPromisePrototype = Object.getPrototypeOf((async function () {})());
const IntrinsicPromise = [kPromisePrototype.constructor, Promise].find(
  (candidate) => typeof candidate === 'function' && candidate.prototype === kPromisePrototype
);
const promiseThen = uncurry(kPromisePrototype.then);

/**
 * The clock of @sinonjs/fake-timers (which jest's modern timers are) where
 * `f` is one of its fakes, each marked with its clock (`.clock`); else
 * undefined.
 */
const fakeClockOf = (f) => (typeof f === 'function' && f.clock !== null && typeof f.clock === 'object' ? f.clock : undefined);

// Node's timers: a program's fake timers installed later (sinon's) neither
// fire a parked take's timeout nor keep it from firing (lib/line.js), as
// they do not the waits of the word. Installed before the package loads on
// Node's own global, @sinonjs/fake-timers (11 and later) replace the timers
// module's functions too, with the global's fakes, which keep the module's
// own on their clock (`timersModuleMethods`): those, then.
const timers = require('timers');
const realTimer = (name) => {
  let found = timers[name];
  // (Clocks stack where a second install leaves Date alone: each keeps the
  // one below's fake. A few at most.)
  for (let depth = 0; depth < 8; depth++) {
    const clock = fakeClockOf(found);
    const saved = clock !== undefined && Array.isArray(clock.timersModuleMethods)
      ? clock.timersModuleMethods.find((entry) => entry !== null && typeof entry === 'object' && entry.methodName === name)
      : undefined;
    if (saved === undefined || typeof saved.original !== 'function') break;
    found = saved.original;
  }
  return found;
};
const setTimer = realTimer('setTimeout');
const clearTimer = realTimer('clearTimeout');

const { isSharedArrayBuffer, isInt32Array, isPromise } = require('util').types;
const symbolDispose = typeof Symbol.dispose === 'symbol' ? Symbol.dispose : undefined;
const symbolAsyncDispose = typeof Symbol.asyncDispose === 'symbol' ? Symbol.asyncDispose : undefined;
const reflectApply = Reflect.apply;
const reflectDefineProperty = Reflect.defineProperty;
const reflectGetOwnPropertyDescriptor = Reflect.getOwnPropertyDescriptor;
const reflectGetPrototypeOf = Reflect.getPrototypeOf;
const objectKeys = Object.keys;

// Loading perf_hooks costs ~1 ms, and worker_threads ~2 ms on the main
// thread (it loads Node's streams): the package never loads the first, and
// loads the second only where a thread first needs it, which most never do.

// The clock every wait and deadline of the family is in: process.hrtime's,
// in milliseconds (libuv's monotonic clock, as performance.now()'s, from
// another origin), taken as the package loads. Fake timers installed before
// that (@sinonjs/fake-timers, which jest's modern timers are) replace
// process.hrtime with a clock that stands still until the test ticks it,
// where the waits under a deadline (the engine's, Node's timers) run in
// real time: a deadline, or a hand-over's grace, would never come. Under
// such a fake (fakeClockOf) the clock is process.uptime()'s instead, the
// same clock, which they leave real (~500 instructions a call more: one
// call per take that waits).
const hrtime = process.hrtime;
const uptime = process.uptime;
const hrtimeFaked = fakeClockOf(hrtime) !== undefined;

/** The time, in milliseconds, on a clock that never goes back (differences only). */
const monotonicNow = hrtimeFaked
  ? () => uptime() * 1e3
  : () => {
      const time = hrtime();
      return time[0] * 1e3 + time[1] / 1e6;
    };

/**
 * Whether this thread is a worker, and its worker_threads threadId (0 on
 * the main thread), without loading worker_threads where it is not loaded
 * yet. The main thread of Node itself is the one environment that owns the
 * process's state: its process.chdir is Node's own (`wrappedChdir`; a
 * worker's is `unavailableInWorker`, Node 12 to 24), and Node's list of
 * what it loaded has neither worker_threads (a worker loads it before its
 * first line runs) nor the start-up module only a worker loads. Where any
 * of that is not so (Bun, whose list is empty; Deno; an embedder's other
 * environments; a program that wrapped process.chdir), worker_threads
 * says. (A thread taken for the main thread would share threadId 0 with
 * it: the locks could not tell their holders apart.)
 */
function thisThread() {
  const loaded = process.moduleLoadList;
  if (isNodeItself(process.versions) && typeof process.chdir === 'function' && process.chdir.name === 'wrappedChdir' &&
      Array.isArray(loaded) && loaded.includes('Internal Binding errors') &&
      !loaded.includes('NativeModule worker_threads') &&
      !loaded.includes('NativeModule internal/process/worker_thread_only')) {
    return { isMainThread: true, threadId: 0 };
  }
  const { isMainThread, threadId } = require('worker_threads');
  return { isMainThread, threadId };
}

const { isMainThread, threadId } = thisThread();

// The key under which lib/pending.js keeps a thread's table of pending
// promises on the binding, where every copy of lib/atomics.js finds it.
const kPendingTable = Symbol.for('atomics-waitasync.pendingPromises');

module.exports = {
  describe,
  isNodeItself,
  uncurry,
  TypedArrayPrototype,
  typedArrayName,
  typedArrayBuffer,
  typedArrayLength,
  monotonicNow,
  isMainThread,
  threadId,
  kPendingTable,
  IntrinsicPromise,
  promiseThen,
  setTimer,
  clearTimer,
  reflectApply,
  reflectDefineProperty,
  reflectGetOwnPropertyDescriptor,
  reflectGetPrototypeOf,
  objectKeys,
  isSharedArrayBuffer,
  isInt32Array,
  isPromise,
  symbolDispose,
  symbolAsyncDispose,
};
