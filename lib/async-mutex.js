'use strict';
// atomics-waitasync/async-mutex: the API of async-mutex 0.5 (Mutex,
// Semaphore, withTimeout, tryAcquire, E_TIMEOUT, E_ALREADY_LOCKED,
// E_CANCELED) with its semantics in a thread, over the package's
// cross-thread primitives: an instance posted to a worker and rebuilt there
// with `from` is the same lock in both threads.
//
// Mutex is an AsyncLock (lib/async-lock.js): robust, its async takes served
// by priority, then first come, first served (lib/line.js); a release of
// the instance hands the lock to the first of its line at once.
//
// Semaphore is a signalling semaphore: a count in a SharedArrayBuffer that
// any thread may add to (release(n) with or without an acquire before it,
// setValue) and takes from, n at a time; it may go below 0. Two Int32s:
//
//   i32a[index]      value     taken by a CAS from v to v - n when v >= n;
//                              given by a CAS from v to v + n
//   i32a[index + 1]  waiters   threads between announcing a wait and leaving
//                              it; a change of `value` that sees it above 0
//                              wakes them all
//
// Its steps on the two (take, add, announce, withdraw) are the signalling
// semaphores' word protocol, in lib/signal-count.js, which SignalSemaphore
// (lib/signal-semaphore.js) uses too: no wake-up is lost (a waiter adds
// itself to `waiters`, then reads `value` and waits on what it read; a
// change adds to `value`, then reads `waiters`; tests/loom_semaphore.rs).
//
// In a thread, an instance keeps async-mutex's order: its takes wait in its
// line, by priority, then in turn; a release or setValue of the instance
// hands what it frees to the first of the line at once, as far as it goes
// (a heavy first holds lighter ones behind it off, so that it runs
// eventually). While takes wait, one async frame of the instance (the
// pump) waits on the value for the other threads' changes.
//
// Robust: what the instance took and has not given back (release(n) gives
// back what it holds first) comes back when its thread ends, however it
// ends (the binding's stakeWatch, as the family's Semaphore); permits it
// released beyond that are a signal, and stay.

const { describe } = require('./describe.js');
const {
  requireStakeWatch,
  watchStake,
  payOwed,
  AsyncWait,
  waitEnv,
  makeReleaser,
  fromPosted,
  int32Slot,
  ours,
  validatePriority,
  kLabel,
  monotonicNow,
} = require('./core.js');
const { newLine, deferred, join, leave, park, unpark, abandonPark, wake, mayPass, WAITING, GRANTED, ABORTED } = require('./line.js');
const { heldStateReader } = require('./async-lock.js');
const { kMax, kSignalStake, kStakeInts, kOwed, take, add, announce, withdraw } = require('./signal-count.js');
const { kLock } = require('./owned-word.js');
const { createKind, waitStart, waitEnd, tracing, traced } = require('./diagnostics.js');

// async-mutex's errors, by identity: code compares with them (e === E_CANCELED).
const E_TIMEOUT = new Error('timeout while waiting for mutex to become available');
const E_ALREADY_LOCKED = new Error('mutex already locked');
const E_CANCELED = new Error('request for lock canceled');

const kMin = -0x80000000;

/** A weight: an integer from 1 to 2^31 - 1 (async-mutex: > 0); `undefined` is 1. */
function validateWeight(weight) {
  if (weight === undefined) return 1;
  if (typeof weight !== 'number') {
    throw new TypeError(`The "weight" argument must be a number. Received ${describe(weight)}`);
  }
  if (!(Number.isInteger(weight) && weight >= 1 && weight <= kMax)) {
    throw new RangeError(`The "weight" argument must be an integer from 1 to ${kMax} (invalid weight: must be positive). Received ${describe(weight)}`);
  }
  return weight;
}

/** A priority argument: any finite number; `undefined` is 0. */
const priorityOf = (priority) => (priority === undefined ? 0 : validatePriority(priority, 'priority'));

/** A value of a Semaphore: an Int32. */
function validateValue(value) {
  if (typeof value !== 'number') {
    throw new TypeError(`The "value" argument must be a number. Received ${describe(value)}`);
  }
  if (!(Number.isInteger(value) && value >= kMin && value <= kMax)) {
    throw new RangeError(`The "value" argument must be an integer from ${kMin} to ${kMax}. Received ${describe(value)}`);
  }
  return value;
}

/** add's RangeError past 2^31 - 1 (lib/signal-count.js). */
const tooMuch = (seen, n) => new RangeError(`The Semaphore's value (${seen}) plus ${n} is past ${kMax}, the most it holds`);

/** `cancelError` of the constructors: an Error to reject canceled takes with (default E_CANCELED). */
function validateCancelError(cancelError) {
  if (cancelError === undefined) return E_CANCELED;
  if (cancelError === null || typeof cancelError !== 'object') {
    throw new TypeError(`The "cancelError" argument must be an Error. Received ${describe(cancelError)}`);
  }
  return cancelError;
}

/**
 * The surface of an AbortSignal that core's AsyncWait and lib/line.js use,
 * aborted by `abort()`: how a Mutex's cancel() reaches the takes of its
 * AsyncLock, waiting in its line or on its word.
 */
class Canceller {
  constructor(reason) {
    this.aborted = false;
    this.reason = reason;
    this.listeners = new Set();
  }

  addEventListener(type, listener) {
    this.listeners.add(listener);
  }

  removeEventListener(type, listener) {
    this.listeners.delete(listener);
  }

  abort() {
    this.aborted = true;
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const listener of listeners) listener();
  }
}

/**
 * Creates the entry's classes over the package's `{ waitAsync, notify }`,
 * its AsyncLock class and the binding's `stakeWatch`.
 */
function createAsyncMutex({ waitAsync, notify, AsyncLock, stakeWatch }) {
  const heldOf = heldStateReader(AsyncLock);
  // What the instances' waits are reported as (lib/diagnostics.js). A
  // Mutex's are its AsyncLock's, reported as the Mutex's.
  const mutexKind = createKind('async-mutex/Mutex');
  const semaphoreKind = createKind('async-mutex/Semaphore');
  // Every change wakes every waiter, so no wake-up is meant for one.
  const env = waitEnv({ waitAsync, notify }, { leave: () => {} });

  // -------------------------------------------------------------------------
  // Mutex
  // -------------------------------------------------------------------------

  let attaching = null; // the AsyncLock Mutex.from() hands its constructor

  /**
   * async-mutex's Mutex over an AsyncLock: `new Mutex(cancelError?)` in a
   * fresh 4-byte SharedArrayBuffer; `Mutex.from(posted)` in another thread.
   */
  class Mutex {
    #lock;
    #cancelError;
    #canceller;

    constructor(cancelError) {
      this.#cancelError = validateCancelError(cancelError);
      const lock = attaching !== null ? attaching : new AsyncLock();
      attaching = null;
      this.#lock = lock;
      // Its lock's waits, abandoned takes and acquire() are reported as this Mutex's.
      const held = heldOf(lock);
      held.instance = this;
      held.kind = mutexKind;
      this.#canceller = new Canceller(this.#cancelError);
      /** The SharedArrayBuffer, Int32Array and index of the lock's word (what postMessage copies). */
      this.sab = lock.sab;
      this.i32a = lock.i32a;
      this.index = lock.index;
    }

    /**
     * The Mutex over the word of one posted to this thread (`{ sab, i32a,
     * index }`), or over an AsyncLock's slot: the same lock.
     */
    static from(value, cancelError) {
      fromPosted(value, 'a Mutex'); // (its TypeError, naming a Mutex)
      const lock = AsyncLock.from(value);
      attaching = lock;
      try {
        return new Mutex(cancelError);
      } finally {
        attaching = null;
      }
    }

    /** Resolves with a release function once this call holds the lock; by priority, then in turn. */
    acquire(priority) {
      const lock = mutexLock(this);
      return lock.acquire({ priority: priorityOf(priority), signal: this.#canceller });
    }

    /** Runs `callback` holding the lock, once acquire() resolved; releases it however it ends. */
    runExclusive(callback, priority) {
      if (mutexKind.run && tracing(mutexKind, 'run')) {
        return traced(mutexKind, 'run', this, 'runExclusive', kLock, runMutexExclusive, this, callback, priority);
      }
      return runMutexExclusive(this, callback, priority);
    }

    /** Whether any thread holds the lock, or a take of this instance waits (a snapshot). */
    isLocked() {
      return mutexLock(this).isLocked();
    }

    /** Resolves, without taking it, once the lock could be taken by a take of `priority`. */
    waitForUnlock(priority) {
      return mutexLock(this).waitForUnlock({ priority: priorityOf(priority) });
    }

    /**
     * Releases the lock if this instance holds it (its oldest waiting take
     * goes on to take it, before any later take of the instance; a waiter
     * of another thread may come first); does nothing otherwise, as
     * async-mutex's (a hold of another thread is never released from here).
     */
    release() {
      const lock = mutexLock(this);
      if (heldOf(lock).held) lock.unlock();
    }

    /** Rejects every take of this instance that waits, with the cancel error. */
    cancel() {
      mutexLock(this);
      const canceller = this.#canceller;
      this.#canceller = new Canceller(this.#cancelError);
      canceller.abort();
    }

    static lockOf(mutex) {
      try {
        return mutex.#lock;
      } catch (_) {
        return undefined;
      }
    }
  }
  const lockOf = Mutex.lockOf;
  delete Mutex.lockOf;

  /** Mutex#runExclusive, untraced. */
  async function runMutexExclusive(mutex, callback, priority) {
    if (typeof callback !== 'function') {
      throw new TypeError(`The "callback" argument must be a function. Received ${describe(callback)}`);
    }
    const release = await mutex.acquire(priority);
    try {
      return await callback();
    } finally {
      release();
    }
  }

  function mutexLock(mutex) {
    const lock = lockOf(mutex);
    if (lock === undefined) {
      throw new TypeError(`The "this" value must be a Mutex (use Mutex.from() for a posted one). Received ${describe(mutex)}`);
    }
    return lock;
  }

  // -------------------------------------------------------------------------
  // Semaphore
  // -------------------------------------------------------------------------

  /**
   * Takes `n` if the value is `n` or more, keeping them in the stake (given
   * back by the thread's teardown, or by the instance's next add);
   * returns the value before, or null if it did not (lib/signal-count.js).
   */
  const takeKept = (s, n) => take(s.i32a, s.index, s.stake, n, true);

  /**
   * Adds `n` to the value (giving back first what the instance holds),
   * hands what it can to the line, and wakes the other threads' waiters.
   * RangeError, changing nothing, past 2^31 - 1. Out of stack it may
   * throw having added: the wake-up is owed by then, and paid by the
   * instance's next call or its thread's end.
   */
  function give(s, n) {
    addTo(s, n);
    changed(s);
  }

  /**
   * give's change of the value and the stake, and the other waiters'
   * wake-up owed (in the stake, before any call: the thread's teardown,
   * or the instance's next call, pays it if changed() does not), without
   * changed() (lib/signal-count.js).
   */
  const addTo = (s, n) => add(s.i32a, s.index, s.stake, n, tooMuch);

  /**
   * After a change of the value that may let takes go, whose caller owed
   * the other waiters a wake-up in the stake if any wait (before calling
   * this, so that the thread's teardown or the instance's next call
   * delivers it should the call fail): hands what it can to the line,
   * then pays the wake-up.
   */
  function changed(s) {
    const { i32a, index, stake } = s;
    dispatch(s);
    if (stake[kOwed] !== 0) payOwed(notify, i32a, index, stake, kOwed);
  }

  /**
   * Hands the value to the line's first takes, in order, as far as it goes;
   * resolves the waitForUnlock() calls it lets go (async-mutex's order).
   */
  function dispatch(s) {
    const line = s.line;
    for (;;) {
      drainUnlockWaiters(s);
      const first = line.first;
      if (first === null) return;
      if (first.outcome !== WAITING) {
        leave(first); // canceled or gone: out already for its frame
        continue;
      }
      const before = takeKept(s, first.want);
      if (before === null) return;
      first.value = before;
      wake(first, GRANTED, true);
    }
  }

  /**
   * Resolves each waitForUnlock() whose weight the value covers and whose
   * priority is above that of the line's first (all, if the line is empty).
   */
  function drainUnlockWaiters(s) {
    const waiters = s.unlockWaiters;
    if (waiters.length === 0) return;
    const value = Atomics.load(s.i32a, s.index);
    const first = s.line.first;
    for (let i = 0; i < waiters.length; ) {
      const waiter = waiters[i];
      if (waiter.weight <= value && (first === null || waiter.priority > first.priority)) {
        waiters.splice(i, 1);
        waiter.resolve();
      } else {
        i++;
      }
    }
  }

  /**
   * Whether the value `seen` lets the first take or a waitForUnlock() go
   * (by drainUnlockWaiters' rule: else the pump would look again at once,
   * for good).
   */
  function mayGo(s, seen) {
    const first = s.line.first;
    if (first !== null && seen >= first.want) return true;
    for (const waiter of s.unlockWaiters) {
      if (waiter.weight <= seen && (first === null || waiter.priority > first.priority)) return true;
    }
    return false;
  }

  /** Starts the instance's pump (one at a time) while anything of it waits. */
  function startPump(s) {
    if (s.pumping) return;
    s.pumping = true;
    try {
      pump(s); // (never rejects)
    } catch (error) {
      s.pumping = false; // (the call itself ran out of stack: nothing of it ran)
      throw error;
    }
  }

  /**
   * The instance's one wait on the value while its takes or waitForUnlock()
   * calls wait: wakes on the other threads' changes (and its own), hands
   * on what they let go, and waits again until nothing of it waits.
   */
  async function pump(s) {
    const { i32a, index, stake } = s;
    let failed = false; // the last round failed
    try {
      for (;;) {
        try {
          dispatch(s);
          if (s.line.first === null && s.unlockWaiters.length === 0) return;
          const canceller = new Canceller(undefined);
          s.pumpCanceller = canceller;
          const waiting = new AsyncWait(env, i32a, index, Infinity, canceller, () => null);
          let announced = false;
          try {
            announce(i32a, index, stake);
            announced = true;
            const seen = Atomics.load(i32a, index);
            if (!mayGo(s, seen)) {
              const pending = waiting.next(seen);
              if (pending !== undefined) waiting.settled(await pending);
            }
          } catch (error) {
            if (!canceller.aborted) throw error; // (an abort: look again)
          } finally {
            if (announced) withdraw(i32a, index, stake);
            s.pumpCanceller = null;
            waiting.end();
          }
          failed = false;
        } catch (error) {
          // Out of stack (it started deep in a caller's stack), or a failed
          // wait: once more from the bottom of the stack, after an await
          // (of a non-promise: it calls nothing). Failing there too, it
          // fails what waits, which nothing would wake.
          if (failed) {
            failWaiting(s, error);
            return;
          }
          failed = true;
          await undefined;
        }
      }
    } finally {
      s.pumping = false;
    }
  }

  /** Rejects the instance's waiting takes and waitForUnlock() calls with `error` (the pump failed). */
  function failWaiting(s, error) {
    for (let entry = s.line.first; entry !== null; ) {
      const next = entry.next;
      entry.error = error;
      wake(entry, ABORTED, true);
      entry = next;
    }
    const waiters = s.unlockWaiters.splice(0);
    for (const waiter of waiters) {
      waiter.error = error;
      waiter.resolve();
    }
  }

  /**
   * The release function of `n` taken through the instance. Called again
   * after it threw (past 2^31 - 1, or out of stack), it does what is left.
   */
  function releaserOf(s, n) {
    let added = false;
    return makeReleaser(
      () => {
        if (!added) {
          addTo(s, n);
          added = true;
        }
        changed(s);
      },
      () => true // (asked after a throw: the release function stays, for a call again)
    );
  }

  /** acquire(): taken at once if the line lets it, else waits its turn in the line. */
  async function acquireIn(s, weight, priority) {
    let value = mayPass(s.line, priority) ? takeKept(s, weight) : null;
    if (value === null) {
      // Before it joins the line: should this throw, nothing is queued.
      const since = monotonicNow();
      const token = waitStart(s.instance, semaphoreKind, { permits: weight }, false, false, since);
      let ended = 'error'; // how the wait ended (lib/diagnostics.js)
      try {
        const entry = join(s.line, weight, priority, since);
        let parked = true;
        try {
          // Parked before the pump starts: its first look may hand it the
          // permits (another thread gave some since the take above).
          const turn = park(entry, Infinity, undefined);
          startPump(s);
          const outcome = await ours(turn);
          parked = false;
          unpark(entry);
          if (outcome !== GRANTED) {
            if (entry.error === undefined) ended = 'abort'; // (cancel(); else the pump failed)
            throw entry.error !== undefined ? entry.error : s.cancelError;
          }
          value = entry.value;
          ended = 'taken';
        } finally {
          // (A failed await of its turn: out of the line; given back if it was handed them.)
          if (parked && abandonPark(entry)) give(s, weight);
          leave(entry);
        }
      } finally {
        if (token !== undefined) waitEnd(token, ended);
      }
    }
    try {
      return [value, releaserOf(s, weight)];
    } catch (_) {
      // Out of stack (a take at once, deep in a caller's stack): once more
      // from the bottom of the stack, after an await (of a non-promise: it
      // calls nothing). A give-back here could fail as well.
      await undefined;
      return [value, releaserOf(s, weight)];
    }
  }

  /** waitForUnlock() that cannot go at once: waits in the instance's unlockWaiters. */
  async function waitForUnlockIn(s, weight, priority) {
    // Before it joins the waiters: should this throw, nothing is queued.
    const token = waitStart(s.instance, semaphoreKind, { permits: weight, unlocked: true }, false);
    let ended = 'error'; // how the wait ended (lib/diagnostics.js)
    try {
      const { promise, resolve } = deferred();
      const waiters = s.unlockWaiters;
      let at = waiters.length;
      while (at > 0 && waiters[at - 1].priority < priority) at--;
      const waiter = { weight, priority, resolve, error: undefined };
      waiters.splice(at, 0, waiter);
      try {
        startPump(s);
      } catch (error) {
        const left = waiters.indexOf(waiter);
        if (left !== -1) waiters.splice(left, 1);
        throw error;
      }
      await ours(promise);
      if (waiter.error !== undefined) throw waiter.error;
      ended = 'unlocked';
    } finally {
      if (token !== undefined) waitEnd(token, ended);
    }
  }

  let attachingSlot = null; // the { i32a, index } Semaphore.from() hands its constructor

  /**
   * async-mutex's Semaphore, across threads: `new Semaphore(value,
   * cancelError?)` in a fresh 8-byte SharedArrayBuffer;
   * `Semaphore.from(posted)` in another thread.
   */
  class Semaphore {
    #s;

    constructor(value, cancelError) {
      requireStakeWatch(stakeWatch, 'Semaphore');
      const attach = attachingSlot;
      attachingSlot = null;
      const slot = attach !== null ? attach : int32Slot(undefined, undefined, 0, 8, 2);
      if (attach === null) Atomics.store(slot.i32a, slot.index, validateValue(value));
      /** The SharedArrayBuffer, Int32Array and index of the value (what postMessage copies). */
      this.sab = slot.sab;
      this.i32a = slot.i32a;
      this.index = slot.index;
      const stake = watchStake(stakeWatch, slot.i32a, slot.index, kSignalStake, kStakeInts, this, kLabel.MutexSemaphore);
      this.#s = {
        i32a: slot.i32a,
        index: slot.index,
        stake,
        line: newLine(),
        unlockWaiters: [],
        cancelError: validateCancelError(cancelError),
        pumping: false,
        pumpCanceller: null,
        // The instance, kept alive by what holds this state (its release
        // functions, its pump, its waiting takes): a collected instance's
        // stake stays watched for its thread's teardown while it holds
        // permits.
        instance: this,
      };
    }

    /**
     * The Semaphore over the two Int32s of one posted to this thread (`{
     * sab, i32a, index }`): the same count. Writes nothing.
     */
    static from(value, cancelError) {
      const [sab, index] = fromPosted(value, 'a Semaphore');
      attachingSlot = int32Slot(sab, index, 0, 8, 2);
      try {
        return new Semaphore(0, cancelError);
      } finally {
        attachingSlot = null;
      }
    }

    /**
     * Takes `weight` (default 1): resolves with `[value before, release]`;
     * at once if the value covers it and no take of this instance of the
     * same or a higher priority waits, else in turn.
     */
    acquire(weight, priority) {
      const s = stateOf(this);
      weight = validateWeight(weight);
      priority = priorityOf(priority);
      if (semaphoreKind.acquire && tracing(semaphoreKind, 'acquire')) {
        return traced(semaphoreKind, 'acquire', this, 'acquire', { permits: weight }, acquireIn, s, weight, priority);
      }
      return acquireIn(s, weight, priority);
    }

    /** Runs `callback(value)` holding `weight`, once acquire() resolved; gives them back however it ends. */
    runExclusive(callback, weight, priority) {
      if (semaphoreKind.run && tracing(semaphoreKind, 'run')) {
        const what = { permits: weight === undefined ? 1 : weight };
        return traced(semaphoreKind, 'run', this, 'runExclusive', what, runSemaphoreExclusive, this, callback, weight, priority);
      }
      return runSemaphoreExclusive(this, callback, weight, priority);
    }

    /** Resolves, without taking, once a take of `weight` and `priority` could go at once. */
    waitForUnlock(weight, priority) {
      const s = stateOf(this);
      weight = validateWeight(weight);
      priority = priorityOf(priority);
      if (mayPass(s.line, priority) && Atomics.load(s.i32a, s.index) >= weight) return ours((async () => {})());
      return ours(waitForUnlockIn(s, weight, priority));
    }

    /** Whether the value is 0 or less (a snapshot). */
    isLocked() {
      const s = stateOf(this);
      return Atomics.load(s.i32a, s.index) <= 0;
    }

    /** The value now (a snapshot). */
    getValue() {
      const s = stateOf(this);
      return Atomics.load(s.i32a, s.index);
    }

    /** Sets the value, and lets the takes it covers go. */
    setValue(value) {
      const s = stateOf(this);
      Atomics.store(s.i32a, s.index, validateValue(value));
      if (Atomics.load(s.i32a, s.index + 1) > 0) s.stake[kOwed] = 1; // (before any call: changed() pays it)
      changed(s);
    }

    /** Adds `weight` (default 1) to the value, and lets the takes it covers go. */
    release(weight) {
      const s = stateOf(this);
      give(s, validateWeight(weight));
    }

    /** Rejects every take of this instance that waits, with the cancel error. */
    cancel() {
      const s = stateOf(this);
      for (let entry = s.line.first; entry !== null; ) {
        const next = entry.next;
        wake(entry, ABORTED, true);
        entry = next;
      }
      // The waitForUnlock() calls that the canceled takes held back may go now.
      dispatch(s);
      if (s.pumpCanceller !== null && s.unlockWaiters.length === 0) s.pumpCanceller.abort();
    }

    static stateIfSemaphore(semaphore) {
      try {
        return semaphore.#s;
      } catch (_) {
        return undefined;
      }
    }
  }
  const stateIfSemaphore = Semaphore.stateIfSemaphore;
  delete Semaphore.stateIfSemaphore;

  /** Semaphore#runExclusive, untraced. */
  async function runSemaphoreExclusive(semaphore, callback, weight, priority) {
    if (typeof callback !== 'function') {
      throw new TypeError(`The "callback" argument must be a function. Received ${describe(callback)}`);
    }
    const [value, release] = await semaphore.acquire(weight, priority);
    try {
      return await callback(value);
    } finally {
      release();
    }
  }

  function stateOf(semaphore) {
    const s = stateIfSemaphore(semaphore);
    if (s === undefined) {
      throw new TypeError(`The "this" value must be a Semaphore (use Semaphore.from() for a posted one). Received ${describe(semaphore)}`);
    }
    if (s.stake[kOwed] !== 0) payOwed(notify, s.i32a, s.index, s.stake, kOwed);
    return s;
  }

  return { Mutex, Semaphore };
}

// ---------------------------------------------------------------------------
// withTimeout, tryAcquire
// ---------------------------------------------------------------------------

const isSemaphoreLike = (sync) => typeof sync.getValue === 'function';

function checkWeight(weight) {
  if (weight !== undefined && !(weight > 0)) throw new RangeError(`invalid weight ${weight}: must be positive`);
}

/**
 * async-mutex's withTimeout: the same lock, whose acquire() and
 * waitForUnlock() reject with `timeoutError` once `timeout` ms pass first
 * (on the program's timers, looked up at each call, as async-mutex does).
 * An acquire that times out still takes the lock when its turn comes, and
 * gives it back at once.
 */
function withTimeout(sync, timeout, timeoutError = E_TIMEOUT) {
  if (sync === null || typeof sync !== 'object' || typeof sync.acquire !== 'function') {
    throw new TypeError(`The "sync" argument must be a Mutex or a Semaphore. Received ${describe(sync)}`);
  }
  if (typeof timeout !== 'number' || !(timeout >= 0)) {
    throw new TypeError(`The "timeout" argument must be a number of milliseconds >= 0. Received ${describe(timeout)}`);
  }
  const semaphore = isSemaphoreLike(sync);
  const decorated = {
    acquire(weightOrPriority, priority) {
      const weight = semaphore ? weightOrPriority : undefined;
      if (!semaphore) priority = weightOrPriority;
      checkWeight(weight);
      return new Promise((resolve, reject) => {
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          reject(timeoutError);
        }, timeout);
        const taking = semaphore ? sync.acquire(weight, priority) : sync.acquire(priority);
        taking.then(
          (ticket) => {
            if (timedOut) {
              (Array.isArray(ticket) ? ticket[1] : ticket)();
            } else {
              clearTimeout(timer);
              resolve(ticket);
            }
          },
          (error) => {
            if (!timedOut) {
              clearTimeout(timer);
              reject(error);
            }
          }
        );
      });
    },

    async runExclusive(callback, weight, priority) {
      let release = () => undefined;
      try {
        const ticket = await decorated.acquire(weight, priority);
        if (Array.isArray(ticket)) {
          release = ticket[1];
          return await callback(ticket[0]);
        }
        release = ticket;
        return await callback();
      } finally {
        release();
      }
    },

    release(weight) {
      sync.release(weight);
    },

    cancel() {
      return sync.cancel();
    },

    waitForUnlock(weightOrPriority, priority) {
      const weight = semaphore ? weightOrPriority : undefined;
      if (!semaphore) priority = weightOrPriority;
      checkWeight(weight);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(timeoutError), timeout);
        (semaphore ? sync.waitForUnlock(weight, priority) : sync.waitForUnlock(priority)).then(
          () => {
            clearTimeout(timer);
            resolve();
          },
          (error) => {
            clearTimeout(timer);
            reject(error);
          }
        );
      });
    },

    isLocked: () => sync.isLocked(),
    getValue: () => sync.getValue(),
    setValue: (value) => sync.setValue(value),
  };
  return decorated;
}

/** async-mutex's tryAcquire: withTimeout(sync, 0, alreadyAcquiredError). */
function tryAcquire(sync, alreadyAcquiredError = E_ALREADY_LOCKED) {
  return withTimeout(sync, 0, alreadyAcquiredError);
}

module.exports = { createAsyncMutex, withTimeout, tryAcquire, E_TIMEOUT, E_ALREADY_LOCKED, E_CANCELED };
