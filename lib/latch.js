'use strict';
// Latch: a count that threads count down, once, to zero; whoever waits on
// it goes on when it reaches zero (Java's CountDownLatch, C++20's
// std::latch). `wait()` blocks (workers), `waitAsync()` never does (the
// main thread).
//
// One Int32 slot of a SharedArrayBuffer, the count itself:
//
//   countDown(n): CAS count -> count - n (never below 0); at 0, notify(all)
//   wait:         c = load(slot); while c > 0: wait(slot, c); c = load(slot)
//
// No wake-up is lost: a waiter sleeps only on the value it last saw, so a
// count-down that came in between makes its wait return at once, and the
// one that reaches zero wakes every waiter queued by then. Count-downs that
// do not reach zero wake nobody.
//
// A latch has no holder: a thread that ends before it counts down never
// does, and the latch stays above zero (wait with a timeout or a signal
// where a worker may die first); a waiter that ends leaves the queue. A
// thread stopped between the count-down that reached zero and its notify
// (a call, where a worker can be stopped) still wakes the waiters: each
// instance's stake says so, and the thread's teardown (the binding's
// stakeWatch) delivers it.

const { describe } = require('./describe.js');
const {
  codedError,
  kAttach,
  requireStakeWatch,
  watchStake,
  payOwed,
  AsyncWait,
  waitEnv,
  int32Slot,
  fromPosted,
  validateTimeout,
  validateOptions,
  validateCount,
  abortReason,
  slotOptions,
  kLabel,
  monotonicNow,
} = require('./core.js');
const { createKind, waitStart, waitEnd } = require('./diagnostics.js');

// The largest count a latch can start from.
const kMaxCount = 0x7fffffff;
// The binding's stake kind of a Latch (src/napi/stakes.rs), and the
// stake's Int32 that says a wake-up is owed.
const kLatchStake = 2;
const kOwed = 0;

// What a wait asks for (lib/diagnostics.js): the count at 0.
const kReached = Object.freeze({ count: 0 });

/** Creates the Latch class over the package's `{ wait, waitAsync, notify }`. */
function createLatch({ wait, waitAsync, notify, stakeWatch }) {
  const env = waitEnv({ waitAsync, notify });
  // What the instances' waits are reported as (lib/diagnostics.js).
  const kind = createKind('Latch');
  let stakeIfLatch;

  /**
   * `this` must be a Latch of this factory (not a posted copy); pays a
   * wake-up a count-down of this instance owes first (see countDown).
   */
  function checkThis(latch) {
    const stake = stakeIfLatch(latch);
    if (stake === undefined) {
      throw new TypeError(`The "this" value must be a Latch (use Latch.from() for a posted one). Received ${describe(latch)}`);
    }
    if (stake[kOwed] !== 0) payOwed(notify, latch.i32a, latch.index, stake, kOwed);
    return stake;
  }

  /**
   * A count in one Int32 slot of a SharedArrayBuffer that counts down to
   * zero once. Every thread builds its own instance over the same slot
   * (`Latch.from`).
   */
  class Latch {
    #stake; // Int32Array(2): [kOwed] 1 while a count-down to zero has not notified (see countDown)

    /**
     * `new Latch(count)` (a fresh 4-byte SharedArrayBuffer), `new
     * Latch(count, sab)` (its first Int32), `new Latch(count, sab, index)` or
     * `new Latch(count, int32Array, index)`: writes `count` into the slot.
     * A thread that is handed a latch attaches with `Latch.from(posted)`,
     * which writes nothing.
     *
     * @param {number} count an integer from 0 to 2^31 - 1
     * @param {SharedArrayBuffer | Int32Array} [sab]
     * @param {number} [index=0]
     */
    constructor(count, sab, index, options) {
      requireStakeWatch(stakeWatch, 'Latch');
      let name;
      [sab, index, name] = slotOptions(sab, index, options);
      if (count !== kAttach) validateCount(count, 'count', kMaxCount);
      const slot = int32Slot(sab, index, 0, 4);
      /** The SharedArrayBuffer. */
      this.sab = slot.sab;
      /** The Int32Array the count lives in. */
      this.i32a = slot.i32a;
      /** Its index in `i32a`. */
      this.index = slot.index;
      /** The name given at construction (or by the posted instance), for query() and util.inspect; only if given. */
      if (name !== undefined) this.name = name;
      // Should this thread end owing a wake-up, its teardown delivers it.
      this.#stake = watchStake(stakeWatch, this.i32a, this.index, kLatchStake, 2, this, kLabel.Latch, name);
      if (count !== kAttach) Atomics.store(this.i32a, this.index, count);
    }

    /**
     * A Latch over the slot of one posted to this thread (`{ sab, i32a,
     * index }`, the structured clone of an instance), or of a hand-made
     * `{ sab, index }` / `{ i32a, index }`. Leaves the count as it is.
     */
    static from(value, options) {
      return new Latch(kAttach, ...fromPosted(value, 'a Latch', options));
    }

    /** The count now (a snapshot); 0 once the latch is open. */
    get count() {
      checkThis(this);
      return Atomics.load(this.i32a, this.index);
    }

    /**
     * Counts down by `n` (default 1) and returns the count left; the count
     * down that reaches 0 wakes every waiter (should that notify fail, a
     * panic in the addon, it is retried from a timer: the count is 0
     * already, and this returns as usual). Throws a RangeError
     * (ERR_LATCH_COUNT_EXCEEDED), changing nothing, if `n` is more than the
     * count left, also on an open latch: counting down more often than the
     * latch was made for is a bug the caller should hear of (Java's
     * CountDownLatch ignores it).
     *
     * @param {number} [n=1]
     * @returns {number}
     */
    countDown(n) {
      const stake = checkThis(this);
      const by = n === undefined ? 1 : validateCount(n, 'n', kMaxCount);
      const { i32a, index } = this;
      let seen = Atomics.load(i32a, index);
      for (;;) {
        if (by > seen) {
          throw codedError(
            n === undefined
              ? `countDown() would take the count below zero: the latch is open (count 0)`
              : `The "n" argument must be at most the count left (${seen}). Received ${by}`,
            'ERR_LATCH_COUNT_EXCEEDED',
            RangeError
          );
        }
        if (by === 0) return seen;
        // The count-down that reaches zero owes every waiter a wake-up
        // from its compareExchange on: said in the stake (no call between
        // the two), so that the thread's teardown delivers it should the
        // thread be stopped at deliver's call, and this instance's next
        // call should deliver run out of stack.
        const last = seen === by;
        if (last) stake[kOwed] = 1;
        const was = Atomics.compareExchange(i32a, index, seen, seen - by);
        if (was === seen) break;
        if (last) stake[kOwed] = 0;
        seen = was;
      }
      if (seen === by) {
        // Now, or from a timer should the addon's notify fail (core's deliver).
        payOwed(notify, i32a, index, stake, kOwed);
      }
      return seen - by;
    }

    /** Whether the count is 0 (never waits). */
    tryWait() {
      checkThis(this);
      return Atomics.load(this.i32a, this.index) === 0;
    }

    /**
     * Blocks this thread until the count is 0 (workers, and Node's main
     * thread, which may block); true then, false once `timeout` ms have
     * passed first.
     *
     * @param {number} [timeout=Infinity]
     * @returns {boolean}
     */
    wait(timeout) {
      checkThis(this);
      const ms = timeout === undefined ? Infinity : validateTimeout(timeout, 'timeout');
      const { i32a, index } = this;
      let count = Atomics.load(i32a, index);
      if (count === 0) return true;
      if (ms === 0) return false; // (a look, not a wait)
      const token = waitStart(this, kind, kReached, true);
      let ended = 'error'; // how the wait ended (lib/diagnostics.js)
      try {
        const deadline = ms === Infinity ? Infinity : monotonicNow() + ms;
        for (;;) {
          const remaining = deadline === Infinity ? Infinity : deadline - monotonicNow();
          if (remaining <= 0) {
            ended = 'timeout';
            return false;
          }
          wait(i32a, index, count, remaining);
          count = Atomics.load(i32a, index);
          if (count === 0) {
            ended = 'reached';
            return true;
          }
        }
      } finally {
        if (token !== undefined) waitEnd(token, ended);
      }
    }

    /**
     * `wait()` without blocking: resolves true once the count is 0, false
     * after `options.timeout` ms; rejects with `options.signal`'s reason if
     * it aborts first (an abort that comes once the count is 0 changes
     * nothing: it resolves true). Either way nothing of it is left queued.
     *
     * @param {{ timeout?: number, signal?: AbortSignal }} [options]
     * @returns {Promise<boolean>}
     */
    async waitAsync(options) {
      checkThis(this);
      const { timeout, signal } = validateOptions(options);
      if (signal !== undefined && signal.aborted) throw abortReason(signal);
      const { i32a, index } = this;
      let count = Atomics.load(i32a, index);
      if (count === 0) return true;
      if (timeout === 0) return false; // (a look, not a wait)
      const token = waitStart(this, kind, kReached, false);
      let ended = 'error'; // how the wait ended (lib/diagnostics.js)
      let waiting = null;
      try {
        waiting = new AsyncWait(env, i32a, index, timeout, signal, timedOut);
        for (;;) {
          const pending = waiting.next(count);
          if (pending !== undefined) {
            try {
              waiting.settled(await pending);
            } catch (error) {
              if (waiting.aborted && Atomics.load(i32a, index) === 0) {
                ended = 'reached';
                return true; // open before the abort ran
              }
              if (waiting.aborted) ended = 'abort';
              throw error;
            }
          }
          count = Atomics.load(i32a, index);
          if (count === 0) {
            ended = 'reached';
            return true;
          }
        }
      } catch (error) {
        if (error === kTimedOut) {
          ended = 'timeout';
          return false;
        }
        throw error;
      } finally {
        try {
          if (waiting !== null) waiting.end();
        } finally {
          if (token !== undefined) waitEnd(token, ended);
        }
      }
    }

    /**
     * `countDown(n)`, then `wait()` (C++'s arrive_and_wait).
     *
     * @param {number} [n=1]
     * @param {number} [timeout=Infinity]
     * @returns {boolean}
     */
    arriveAndWait(n, timeout) {
      checkThis(this);
      if (timeout !== undefined) validateTimeout(timeout, 'timeout');
      this.countDown(n);
      return this.wait(timeout);
    }

    static stakeIfLatch(value) {
      try {
        return value.#stake;
      } catch (_) {
        return undefined;
      }
    }
  }
  stakeIfLatch = Latch.stakeIfLatch;
  delete Latch.stakeIfLatch;

  /** The bytes of SharedArrayBuffer a latch takes. */
  Latch.BYTES = 4;

  return Latch;
}

// The timeout of waitAsync, which resolves false rather than rejecting.
const kTimedOut = Symbol('timed out');
const timedOut = () => kTimedOut;

module.exports = { createLatch };
