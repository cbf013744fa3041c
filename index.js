'use strict';
// atomics-waitasync: Atomics.waitAsync, wait and notify for every Node.js
// release, backed by a Rust waiter registry shared by all threads; and the
// family of primitives built on them (AsyncLock, Condition, Latch,
// Semaphore, SignalSemaphore, Barrier, RwLock), each made here from its
// factory in lib/ with the package's own triple and the binding.
//
//   const { waitAsync, wait, notify } = require('atomics-waitasync');

const binding = require('./binding.js');
const { createAtomics } = require('./lib/atomics.js');

const atomics = createAtomics(binding);

// The rest is made when a program first asks for it: the polyfill at the
// first install(), each class of the family, query() and the deadlock
// switches at their first read. Their files are most of the package, and a
// thread that loads it (every worker of a pool, every test file of a
// runner) would pay to compile them whether or not it uses them.

let polyfill = null;

/**
 * The polyfill's install (lib/polyfill.js), and then, where it is active on
 * Node, the same install in every worker this thread starts afterwards, also
 * one started with its own execArgv (lib/workers.js).
 */
function install(options) {
  if (polyfill === null) {
    // Where Atomics has a waitAsync and nothing asks to replace it, there
    // is nothing to do, and nothing to load.
    if (options === undefined && typeof Atomics.waitAsync === 'function') return { installed: [], active: false };
    polyfill = require('./lib/polyfill.js').createPolyfill(binding, Atomics, atomics);
  }
  const result = polyfill.install(options);
  if (result.active && require('./lib/describe.js').isNodeItself(process.versions)) {
    const { preloadInWorkers, PLAIN_PRELOAD, FORCE_PRELOAD } = require('./lib/workers.js');
    const force = Boolean(options && typeof options === 'object' && options.force);
    preloadInWorkers(require('worker_threads'), force ? FORCE_PRELOAD : PLAIN_PRELOAD, require('module'));
  }
  return result;
}

// The primitives wait through this package's triple, never the global
// Atomics.
const triple = { wait: atomics.wait, waitAsync: atomics.waitAsync, notify: atomics.notify };
const { stakeWatch } = binding;

// Each class of the family, from its factory in lib/. (Each function, and
// make, tracked and the getters below, in parentheses: compiled with the
// file, and so in the published package's code cache, where a thread's
// first class would compile them.)
const makers = {
  // The lock also releases a contended word through the binding (free and
  // notify in one call).
  AsyncLock: (function AsyncLock() {
    return require('./lib/async-lock.js').createAsyncLock({
      ...triple,
      releaseLock: binding.releaseLock,
      lockOwner: binding.lockOwner,
      lockWatch: binding.lockWatch,
    });
  }),
  // A condition variable over the lock, which it releases and re-takes
  // through the lock's own methods as made (before any wrapping of
  // lib/tracking.js's).
  Condition: (function Condition() {
    const AsyncLock = make('AsyncLock');
    return require('./lib/condition.js').createCondition({ ...triple, AsyncLock, lockMethods, stakeWatch });
  }),
  // A count down to zero.
  Latch: (function Latch() {
    return require('./lib/latch.js').createLatch({ ...triple, stakeWatch });
  }),
  // Permits taken and given back n at a time; what a thread holds when it
  // ends comes back (the binding's stakeWatch).
  Semaphore: (function Semaphore() {
    return require('./lib/semaphore.js').createSemaphore({ ...triple, stakeWatch });
  }),
  // A count any thread may add to, taken n at a time; a take is consumed
  // (what a thread took stays taken when it ends; its waits are undone).
  SignalSemaphore: (function SignalSemaphore() {
    return require('./lib/signal-semaphore.js').createSignalSemaphore({ ...triple, stakeWatch });
  }),
  // Parties that meet, generation after generation; broken for all when one
  // times out, aborts or ends while it waits.
  Barrier: (function Barrier() {
    return require('./lib/barrier.js').createBarrier({ ...triple, stakeWatch });
  }),
  // Many readers or one writer; what a thread holds when it ends is given
  // back.
  RwLock: (function RwLock() {
    return require('./lib/rwlock.js').createRwLock({ ...triple, stakeWatch });
  }),
};

// Each take that waits, registered for query(); deadlock detection and
// lock-order checks, as ATOMICS_WAITASYNC_DEBUG says: lib/tracking.js. Made
// with the first class, or at the first call of a switch; at load where
// the variable is set, so that it switches detection on for the process
// as the thread loads the package, whatever it goes on to use.
let tracking = null;

const tracked = (function tracked() {
  if (tracking === null) {
    const made = require('./lib/tracking.js').createTracking(binding);
    require('./lib/diagnostics.js').setTracking(made);
    made.start([]);
    tracking = made;
  }
  return tracking;
});

// Who holds and waits for what, in every thread: lib/query.js.
let queries = null;

function queried() {
  if (queries === null) queries = require('./lib/query.js').createQuery(binding);
  return queries;
}

// The classes made, by name: one each per thread, whatever reads their
// property (a copy of its getter too, as Babel's interop makes, or a
// frozen copy of the exports).
const classes = { __proto__: null };
// AsyncLock's takes as made, for Condition (set with AsyncLock).
let lockMethods = null;

/** A class of the family, made once: inspectable as its state, its takes tracked. */
const make = (function make(name) {
  if (classes[name] !== undefined) return classes[name];
  const Class = makers[name]();
  if (name === 'AsyncLock') {
    const { unlock, lock, tryLock, acquire } = Class.prototype;
    lockMethods = { unlock, lock, tryLock, acquire };
  }
  // util.inspect shows the primitive's state in one line (lib/query.js).
  Object.defineProperty(Class.prototype, Symbol.for('nodejs.util.inspect.custom'), {
    value: function inspect(depth, options) {
      return queried().inspect(Class, this, options);
    },
    writable: true,
    configurable: true,
  });
  tracked().start([Class]);
  classes[name] = Class;
  return Class;
});

// Built in the order of its keys, each property new when added: data, then
// the classes' accessors, then data again. (A data property redefined as an
// accessor, or an accessor in an object literal, turns the object into a
// dictionary in V8, and every `api.notify(...)` in a caller's code not yet
// optimised then looks the name up in it: ~100 instructions a call, against
// ~40 for a property of a fast object.)
const api = {
  waitAsync: atomics.waitAsync,
  wait: atomics.wait,
  notify: atomics.notify,
  ref: atomics.ref,
  unref: atomics.unref,
  // Puts waitAsync, wait and notify on this thread's Atomics (the polyfill).
  install,
};

// The classes (lib/async-lock.js: the post's mutex, done right; a condition
// variable over it; a count down to zero; permits, n at a time; permits any
// thread may release; parties that meet; many readers or one writer): each
// made at the first read of its property, which reads as data from then on
// (or once written).
for (const name of Object.keys(makers)) {
  const settle = (function settle(value) {
    return Object.defineProperty(api, name, { value, writable: true, enumerable: true, configurable: true });
  });
  Object.defineProperty(api, name, {
    get: (function get() {
      const Class = make(name);
      try {
        settle(Class);
      } catch {
        // (frozen by the program: it reads the made class each time)
      }
      return Class;
    }),
    set: settle,
    enumerable: true,
    configurable: true,
  });
}

// Every primitive in use in any thread, its holders and waiters; as text.
api.query = function query() {
  return queried().query();
};
api.report = function report(snapshot) {
  return queried().report(snapshot);
};
// Opt-in: ERR_DEADLOCK for a wait that closes a cycle; lock-order warnings.
const detectDeadlocks = (enabled = true) => tracked().detectDeadlocks(enabled);
const checkLockOrder = (enabled = true) => tracked().checkLockOrder(enabled);
api.detectDeadlocks = detectDeadlocks;
api.checkLockOrder = checkLockOrder;
// Test-only (not in index.d.ts): registry and pending-waiter counts.
api.waitersForTesting = atomics.waitersForTesting;

if (process.env.ATOMICS_WAITASYNC_DEBUG) tracked();

module.exports = api;
