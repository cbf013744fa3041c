'use strict';
// atomics-waitasync: Atomics.waitAsync, wait and notify for every Node.js
// release, backed by a Rust waiter registry shared by all threads; and the
// family of primitives built on them (AsyncLock, Condition, Latch,
// Semaphore, SignalSemaphore, Barrier, RwLock), each made here from its
// factory in lib/ with the package's own triple and the binding.
//
//   const { waitAsync, wait, notify } = require('atomics-waitasync');

const binding = require('./binding');
const { createAtomics } = require('./lib/atomics');
const { isNodeItself } = require('./lib/describe');
const { createPolyfill } = require('./lib/polyfill');
const { createAsyncLock } = require('./lib/async-lock');
const { createCondition } = require('./lib/condition');
const { createLatch } = require('./lib/latch');
const { createSemaphore } = require('./lib/semaphore');
const { createSignalSemaphore } = require('./lib/signal-semaphore');
const { createBarrier } = require('./lib/barrier');
const { createRwLock } = require('./lib/rwlock');
const { createQuery } = require('./lib/query');
const { createTracking } = require('./lib/tracking');
const { preloadInWorkers, PLAIN_PRELOAD, FORCE_PRELOAD } = require('./lib/workers');

const atomics = createAtomics(binding);
const polyfill = createPolyfill(binding, Atomics, atomics);

/**
 * The polyfill's install (lib/polyfill.js), and then, where it is active on
 * Node, the same install in every worker this thread starts afterwards, also
 * one started with its own execArgv (lib/workers.js).
 */
function install(options) {
  const result = polyfill.install(options);
  if (result.active && isNodeItself(process.versions)) {
    const force = Boolean(options && typeof options === 'object' && options.force);
    preloadInWorkers(require('worker_threads'), force ? FORCE_PRELOAD : PLAIN_PRELOAD, require('module'));
  }
  return result;
}

// The lock waits through this package's triple, never the global Atomics,
// and releases a contended word through the binding (free and notify in
// one call).
const AsyncLock = createAsyncLock({
  wait: atomics.wait,
  waitAsync: atomics.waitAsync,
  notify: atomics.notify,
  releaseLock: binding.releaseLock,
  lockOwner: binding.lockOwner,
  lockWatch: binding.lockWatch,
});

// A condition variable over the lock, through the same triple.
const Condition = createCondition({
  wait: atomics.wait,
  waitAsync: atomics.waitAsync,
  notify: atomics.notify,
  AsyncLock,
  stakeWatch: binding.stakeWatch,
});

// A count down to zero, through the same triple.
const Latch = createLatch({
  wait: atomics.wait,
  waitAsync: atomics.waitAsync,
  notify: atomics.notify,
  stakeWatch: binding.stakeWatch,
});

// Permits taken and given back n at a time; what a thread holds when it
// ends comes back (the binding's stakeWatch).
const Semaphore = createSemaphore({
  wait: atomics.wait,
  waitAsync: atomics.waitAsync,
  notify: atomics.notify,
  stakeWatch: binding.stakeWatch,
});

// A count any thread may add to, taken n at a time; a take is consumed
// (what a thread took stays taken when it ends; its waits are undone).
const SignalSemaphore = createSignalSemaphore({
  wait: atomics.wait,
  waitAsync: atomics.waitAsync,
  notify: atomics.notify,
  stakeWatch: binding.stakeWatch,
});

// Parties that meet, generation after generation; broken for all when one
// times out, aborts or ends while it waits.
const Barrier = createBarrier({
  wait: atomics.wait,
  waitAsync: atomics.waitAsync,
  notify: atomics.notify,
  stakeWatch: binding.stakeWatch,
});

// Many readers or one writer; what a thread holds when it ends is given
// back (the binding's stakeWatch).
const RwLock = createRwLock({
  wait: atomics.wait,
  waitAsync: atomics.waitAsync,
  notify: atomics.notify,
  stakeWatch: binding.stakeWatch,
});

// Who holds and waits for what, in every thread: lib/query.js.
const { query, report, inspectable } = createQuery(binding);
for (const Class of [AsyncLock, Condition, Latch, Semaphore, SignalSemaphore, Barrier, RwLock]) inspectable(Class);

// Each take that waits, registered for query(); deadlock detection and
// lock-order checks, as ATOMICS_WAITASYNC_DEBUG says: lib/tracking.js.
const tracking = createTracking(binding);
require('./lib/diagnostics').setTracking(tracking);
tracking.start([AsyncLock, Semaphore, RwLock]);

module.exports = {
  waitAsync: atomics.waitAsync,
  wait: atomics.wait,
  notify: atomics.notify,
  ref: atomics.ref,
  unref: atomics.unref,
  // Puts waitAsync, wait and notify on this thread's Atomics (the polyfill).
  install,
  // The post's mutex, done right: lib/async-lock.js.
  AsyncLock,
  // A condition variable over an AsyncLock: lib/condition.js.
  Condition,
  // A count down to zero that threads wait on: lib/latch.js.
  Latch,
  // Permits, n at a time, robust: lib/semaphore.js.
  Semaphore,
  // Permits any thread may release, whether or not it took any: lib/signal-semaphore.js.
  SignalSemaphore,
  // N parties meet, then all go on: lib/barrier.js.
  Barrier,
  // Many readers or one writer, robust: lib/rwlock.js.
  RwLock,
  // Every primitive in use in any thread, its holders and waiters; as text.
  query,
  report,
  // Opt-in: ERR_DEADLOCK for a wait that closes a cycle; lock-order warnings.
  detectDeadlocks: tracking.detectDeadlocks,
  checkLockOrder: tracking.checkLockOrder,
  // Test-only (not in index.d.ts): registry and pending-waiter counts.
  waitersForTesting: atomics.waitersForTesting,
};
