'use strict';
// Condition: a condition variable over an AsyncLock, for worker_threads and
// the main thread alike: `wait(lock)` blocks, `waitAsync(lock)` never does.
//
// One Int32 slot of a SharedArrayBuffer, a sequence number (the classic
// design of futex-based condition variables, as in Rust's std and
// parking_lot's Condvar without its lock check):
//
//   wait:   seq = load(slot)          (holding the lock)
//           lock.unlock()
//           wait(slot, seq)           (returns at once if seq moved on)
//           lock.lock()               (however the wait ended)
//   notify: add(slot, 1)
//           notify(slot, count)
//
// No wake-up is lost between the unlock and the wait: a notify that comes
// in between has moved the slot on from `seq`, so the wait does not sleep.
// The price is spurious wake-ups: such a waiter returns as if notified,
// whether or not the notify's count was meant for it, and so may any
// waiter a notifyAll or a timeout raced with. Callers wait in a loop on
// their own condition, as with every condition variable.
//
// It waits and wakes through the package's own wait / waitAsync / notify
// (handed to the factory), as AsyncLock does.

const { describe } = require('./describe.js');
const { codedError, requireStakeWatch, watchStake, payOwed, int32Slot, fromPosted, ours, validateTimeout, validateOptions, abortReason, slotOptions, kLabel } = require('./core.js');
const { heldStateReader } = require('./async-lock.js');
const { createKind, waitStart, waitEnd, retake } = require('./diagnostics.js');

// The binding's stake kind of a wake-up owed to every waiter of the word
// (src/napi/stakes.rs), and the stake's Int32 that says it is.
const kOwedStake = 2;
const kOwed = 0;

// What a wait asks for (lib/diagnostics.js): a notify.
const kNotified = Object.freeze({ notified: true });

/**
 * Creates the Condition class over the package's `{ wait, waitAsync,
 * notify }` and its AsyncLock class.
 */
function createCondition({ wait, waitAsync, notify, AsyncLock, lockMethods = AsyncLock.prototype, stakeWatch }) {
  // What the instances' waits are reported as (lib/diagnostics.js).
  const kind = createKind('Condition');

  /**
   * `this` must be a Condition of this factory (not a posted copy); pays a
   * wake-up a notify of this instance owes first (see notify).
   */
  function checkThis(condition) {
    const stake = stakeIfCondition(condition);
    if (stake === undefined) {
      throw new TypeError(`The "this" value must be a Condition (use Condition.from() for a posted one). Received ${describe(condition)}`);
    }
    if (stake[kOwed] !== 0) payOwed(notify, condition.i32a, condition.index, stake, kOwed);
    return stake;
  }

  // An instance's `{ held, abandoned }`, read through the lock's own
  // private state (undefined for anything but an AsyncLock of this
  // package: a posted copy, a Proxy); and the class's own methods, so that
  // a subclass's overrides are not what releases and re-takes it
  // (`lockMethods`: as the class was made, before lib/tracking.js may have
  // wrapped them; its prototype's where not given).
  const stateOf = heldStateReader(AsyncLock);
  const { unlock, lock: lockBlocking, tryLock, acquire } = lockMethods;

  /**
   * The held state of the lock a wait of `condition` releases and re-takes:
   * an AsyncLock of the package, in another Int32 than the condition's (a
   * notify would move the lock's word on). Only objects of one message (or
   * one thread) can be told apart: a lock and a condition posted in two
   * messages come with two SharedArrayBuffer objects over the same memory.
   */
  function checkLock(condition, lock) {
    const mine = stateOf(lock);
    if (mine === undefined) {
      throw new TypeError(`The "lock" argument must be an AsyncLock. Received ${describe(lock)}`);
    }
    if (lock.sab === condition.sab &&
        lock.i32a.byteOffset + lock.index * 4 === condition.i32a.byteOffset + condition.index * 4) {
      throw codedError(
        'The "lock" argument uses the very Int32 of the Condition: give them different slots (new Condition(sab, 1))',
        'ERR_CONDITION_SAME_SLOT',
        RangeError
      );
    }
    return mine;
  }

  /**
   * Releases `lock`, held through this instance (`mine`); throws
   * ERR_ASYNC_LOCK_NOT_HELD, having done nothing, if it is not. Returns
   * null, or what unlock() threw: if the lock is still held then (out of
   * stack before anything changed), it is thrown here; if it was released
   * all the same (a panic in the addon's notify), the caller takes it
   * again before it throws that error, so that it holds the lock however
   * the wait ends.
   */
  function release(lock, mine) {
    checkHeld(mine);
    try {
      unlock.call(lock);
    } catch (error) {
      if (mine.held) throw error;
      return error;
    }
    return null;
  }

  /** Throws ERR_ASYNC_LOCK_NOT_HELD unless the lock is held through this instance (`mine`). */
  function checkHeld(mine) {
    if (!mine.held) {
      throw codedError(
        'The "lock" argument must be held, through this very instance, to wait on a Condition',
        'ERR_ASYNC_LOCK_NOT_HELD'
      );
    }
  }

  /** A notify count: an integer >= 0, or Infinity. */
  function validateCount(count) {
    if (typeof count !== 'number') {
      throw new TypeError(`The "count" argument must be a number. Received ${describe(count)}`);
    }
    if (!(count >= 0 && (Number.isInteger(count) || count === Infinity))) {
      throw new RangeError(`The "count" argument must be an integer >= 0 (or Infinity). Received ${describe(count)}`);
    }
    return count;
  }

  let stakeIfCondition;

  /**
   * A condition variable in one Int32 slot of a SharedArrayBuffer, used
   * with an AsyncLock: every thread builds its own instance over the same
   * slot (`Condition.from`).
   */
  class Condition {
    #stake; // Int32Array(2): [kOwed] 1 while a notify has moved the slot on but not returned (see notify)

    /**
     * `new Condition()` (a fresh 4-byte SharedArrayBuffer), `new
     * Condition(sab)` (its first Int32), `new Condition(sab, index)` or
     * `new Condition(int32Array, index)`. The slot may start at any value.
     *
     * @param {SharedArrayBuffer | Int32Array} [sab]
     * @param {number} [index=0]
     */
    constructor(sab, index, options) {
      requireStakeWatch(stakeWatch, 'Condition');
      let name;
      [sab, index, name] = slotOptions(sab, index, options);
      const slot = int32Slot(sab, index, 0, 4);
      /** The SharedArrayBuffer. */
      this.sab = slot.sab;
      /** The Int32Array the sequence number lives in. */
      this.i32a = slot.i32a;
      /** Its index in `i32a`. */
      this.index = slot.index;
      /** The name given at construction (or by the posted instance), for query() and util.inspect; only if given. */
      if (name !== undefined) this.name = name;
      // Should this thread end owing a wake-up, its teardown delivers it.
      this.#stake = watchStake(stakeWatch, this.i32a, this.index, kOwedStake, 2, this, kLabel.Condition, name);
    }

    /**
     * A Condition over the slot of one posted to this thread (`{ sab, i32a,
     * index }`, the structured clone of an instance), or of a hand-made
     * `{ sab, index }` / `{ i32a, index }`.
     */
    static from(value, options) {
      return new Condition(...fromPosted(value, 'a Condition', options));
    }

    /**
     * Releases `lock` (which this thread holds through that instance),
     * blocks until notified or `timeout` ms have passed, then takes the lock
     * again, however the wait ended, before it returns. True if woken (or
     * spuriously: see above), false on timeout. Check `lock.abandoned`
     * after it, as after any take of the lock.
     *
     * @param {AsyncLock} lock
     * @param {number} [timeout=Infinity]
     * @returns {boolean}
     */
    wait(lock, timeout) {
      checkThis(this);
      const mine = checkLock(this, lock);
      const ms = timeout === undefined ? Infinity : validateTimeout(timeout, 'timeout');
      const { i32a, index } = this;
      checkHeld(mine); // (misuse, told before it is reported as a wait)
      // Before the lock is released: should this throw, nothing has changed.
      const token = waitStart(this, kind, kNotified, true);
      let ended = 'error'; // how the wait ended (lib/diagnostics.js)
      let released = false;
      let releaseError = null;
      try {
        const seq = Atomics.load(i32a, index);
        releaseError = release(lock, mine);
        released = true;
        if (releaseError === null) ended = wait(i32a, index, seq, ms) === 'timed-out' ? 'timeout' : 'woken';
      } finally {
        try {
          // (Ended before the lock is taken again: that take waits as the lock's own.)
          if (token !== undefined) waitEnd(token, ended);
        } finally {
          if (released) retake(lock, () => lockBlocking.call(lock));
        }
      }
      if (releaseError !== null) throw releaseError;
      return ended === 'woken';
    }

    /**
     * `wait(lock)` without blocking: resolves, holding the lock again, with
     * true if woken (or spuriously), false after `options.timeout` ms;
     * rejects with `options.signal`'s reason if it aborts first, also
     * holding the lock again (an abort that comes after a notify or the
     * timeout took the waiter changes nothing: it resolves true or false). An already aborted signal rejects at once,
     * the lock never released. Use it inside `lock.executeLocked(f)` or
     * between `acquire()` and its release.
     *
     * @param {AsyncLock} lock
     * @param {{ timeout?: number, signal?: AbortSignal }} [options]
     * @returns {Promise<boolean>}
     */
    async waitAsync(lock, options) {
      checkThis(this);
      const mine = checkLock(this, lock);
      const { timeout, signal } = validateOptions(options);
      if (signal !== undefined && signal.aborted) throw abortReason(signal);
      const { i32a, index } = this;
      checkHeld(mine); // (misuse, told before it is reported as a wait)
      // Before the lock is released: should this throw, nothing has changed.
      const token = waitStart(this, kind, kNotified, false);
      let ended = 'error'; // how the wait ended (lib/diagnostics.js)
      let releaseError = null;
      let outcome;
      let failure;
      let failed = false;
      try {
        const seq = Atomics.load(i32a, index);
        releaseError = release(lock, mine);
        if (releaseError === null) {
          let result;
          try {
            result = waitAsync(i32a, index, seq, timeout, signal === undefined ? undefined : { signal });
            outcome = result.async ? await ours(result.value) : result.value;
            ended = outcome === 'timed-out' ? 'timeout' : 'woken';
          } catch (error) {
            failed = true;
            failure = error;
            if (signal !== undefined && signal.aborted) ended = 'abort';
            // Ours may still be queued with nobody to see its wake-up (the await
            // failed: out of stack, or a program's `then` where %Promise% could
            // not be found): flush it out by waking every waiter, who take it
            // for a spurious wake-up. (Not after an abort: the waiter left.)
            if (result !== undefined && result.async && !(signal !== undefined && signal.aborted)) {
              try {
                notify(i32a, index, Infinity);
              } catch (_) {
                // (out of stack too: ours absorbs one later notify)
              }
            }
          }
        }
      } finally {
        // (Ended before the lock is taken again: that take waits as the lock's own.)
        if (token !== undefined) waitEnd(token, ended);
      }
      if (releaseError !== null) {
        try {
          await undefined; // from the bottom of the stack (release may have failed near its top)
          await ours(retake(lock, () => acquire.call(lock)));
        } catch (_) {
          // (the first error is the one to report)
        }
        throw releaseError;
      }
      // Holding the lock again, whatever happened; no timeout or signal
      // bounds this part (as pthread_cond_timedwait's). Mostly free by
      // now (the notifier has gone on to release it): taken here, without
      // acquire()'s frame, await and release function.
      if (!tryLock.call(lock)) await ours(retake(lock, () => acquire.call(lock)));
      if (failed) throw failure;
      return outcome !== 'timed-out';
    }

    /**
     * Wakes up to `count` (default 1) threads waiting on this condition,
     * oldest first, and returns how many it woke that were asleep (a waiter
     * between its unlock and its wait also goes on, uncounted).
     *
     * @param {number} [count=1]
     * @returns {number}
     */
    notify(count) {
      const stake = checkThis(this);
      const n = count === undefined ? 1 : validateCount(count);
      // From the add on, the waiters are owed a wake-up: said in the stake
      // first (no call between the two), so that the thread's teardown
      // wakes them all (spurious wake-ups are allowed) should the thread be
      // stopped at notify's call, and this instance's next call should
      // notify run out of stack.
      stake[kOwed] = 1;
      Atomics.add(this.i32a, this.index, 1);
      const woke = notify(this.i32a, this.index, n);
      stake[kOwed] = 0;
      return woke;
    }

    /** Wakes every thread waiting on this condition; returns how many. */
    notifyAll() {
      checkThis(this);
      return this.notify(Infinity);
    }

    static stakeIfCondition(value) {
      try {
        return value.#stake;
      } catch (_) {
        return undefined;
      }
    }
  }
  stakeIfCondition = Condition.stakeIfCondition;
  delete Condition.stakeIfCondition;

  /** The bytes of SharedArrayBuffer a condition takes. */
  Condition.BYTES = 4;

  return Condition;
}

module.exports = { createCondition };
