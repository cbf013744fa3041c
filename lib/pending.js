'use strict';
// This thread's pending waitAsync promises, kept in JavaScript.
//
// The binding queues the waiter and answers with a slot number; the promise,
// and the typed array that keeps its SharedArrayBuffer alive while it waits,
// are kept here in that slot. When waiters are woken or time out, the
// binding's ThreadsafeFunction writes their outcomes into `outcomes`
// (`slot << 1 | timedOut`) and calls `settle(n)`: one call per batch of up to
// OUTCOMES waiters.
//
// Used in worker threads (lib/atomics.js decides). Keeping the promises on
// the JS heap rather than behind N-API deferreds means a terminated worker
// leaves nothing behind: its pending promises go with its heap, while an
// N-API deferred can only be freed by resolving it, which needs JS that no
// longer runs during teardown. The price: ~130 B more JS heap per pending waiter
// (a promise made in JS has resolve and reject functions and their context;
// one made by N-API has neither). Calls are faster (no global handle).
//
// Also where a promise is made without %Promise% (deferredWithoutConstructor),
// for lib/line.js.

const { IntrinsicPromise, promiseThen, kPendingTable: kTable } = require('./describe.js');

// Outcomes per settle call; the binding writes at most 256 at a time
// (src/napi/resolver.rs SCOPE_CHUNK) and checks the array holds that many.
const OUTCOMES = 256;

// %Promise% (IntrinsicPromise) and its `then`, as found when the package
// loaded: lib/describe.js.

/**
 * An intrinsic promise and its resolve function, made without %Promise%:
 * an async function awaits a thenable of ours, whose `then` gets the
 * resolve function one microtask later; a value that comes before that is
 * kept until then. Only where IntrinsicPromise is undefined.
 */
function deferredWithoutConstructor() {
  let resolveLater;
  let early;
  let settled = false;
  const thenable = {
    then(resolve) {
      if (settled) resolve(early);
      else resolveLater = resolve;
    },
  };
  const promise = awaitThenable(thenable);
  const resolve = (value) => {
    if (resolveLater !== undefined) {
      resolveLater(value);
    } else {
      settled = true;
      early = value;
    }
  };
  return { promise, resolve };
}

async function awaitThenable(thenable) {
  return await thenable;
}

const ignore = () => {};

// The table belongs to the binding instance (one per thread, per load of the
// addon), and the binding takes one settle function only; so every copy of
// this module finds it on the binding, under a registered symbol.

function pendingPromises(binding) {
  if (binding[kTable] !== undefined) return binding[kTable];

  const outcomes = new Uint32Array(OUTCOMES);

  // One executor for every promise: no closure per waiter. (Each function
  // here in parentheses: V8 compiles it with pendingPromises, at load, where
  // it would at a worker's first waitAsync: the published package's code
  // cache then holds it compiled.)
  let captured;
  const capture = (function capture(resolve) {
    captured = resolve;
  });

  /**
   * Makes the spare promise. Throws (out of stack or memory) before any
   * waiter is queued for it.
   */
  const reserve = (function reserve() {
    if (IntrinsicPromise === undefined) {
      const { promise, resolve } = deferredWithoutConstructor();
      table.spare = promise;
      table.spareResolve = resolve;
      return;
    }
    const promise = new IntrinsicPromise(capture);
    const resolve = captured;
    captured = undefined;
    if (resolve === undefined) {
      // The executor itself ran out of stack: the constructor rejected the
      // promise instead of throwing, and nothing could ever resolve it.
      // Throw as if the constructor had.
      try {
        promiseThen(promise, undefined, ignore); // not an unhandled rejection
      } catch (_) {
        // still out of stack: nothing more to do
      }
      throw new RangeError('Maximum call stack size exceeded');
    }
    table.spare = promise;
    table.spareResolve = resolve;
  });

  // Read and written inline by lib/atomics.js's waitAsync: once the binding
  // has queued a waiter, nothing may throw before the waiter has its
  // promise (near the stack limit any call can), or a notify would count a
  // wake-up nobody sees. So the promise for the next waiter is made before
  // the binding is called (`reserve`, when there is no spare), and taken
  // into the slot afterwards with plain property writes, no calls. A call
  // that returns "not-equal" or "timed-out" leaves the spare for the next.
  const table = {
    resolvers: [],
    arrays: [],
    live: 0,
    spare: undefined,
    spareResolve: undefined,
    reserve,
  };

  const settle = (function settle(n) {
    const resolvers = table.resolvers;
    const arrays = table.arrays;
    for (let i = 0; i < n; i++) {
      const outcome = outcomes[i];
      const slot = outcome >>> 1;
      const resolve = resolvers[slot];
      if (resolve === undefined) continue;
      resolvers[slot] = undefined;
      arrays[slot] = undefined;
      table.live--;
      resolve(outcome & 1 ? 'timed-out' : 'ok');
    }
    if (table.live === 0 && table.resolvers.length > 1024) {
      // A burst is over: give its memory back (the binding's slab does too).
      table.resolvers = [];
      table.arrays = [];
    }
  });

  binding.setSettler(settle, outcomes);
  Object.defineProperty(binding, kTable, { __proto__: null, value: table });
  return table;
}

module.exports = { pendingPromises, IntrinsicPromise, deferredWithoutConstructor };
