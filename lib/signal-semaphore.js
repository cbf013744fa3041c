'use strict';
// SignalSemaphore: a count in a SharedArrayBuffer that any thread may add
// to, whether or not it took anything, and that threads take from, n at a
// time (Java's Semaphore, C++20's counting_semaphore, POSIX sem_t): how a
// producer tells consumers "one more item". `acquireSync()` blocks
// (workers), `acquire()` never does (the main thread). Unlike the family's
// Semaphore (lib/semaphore.js), nothing goes back through the instance that
// took it: a permit taken is consumed.
//
// Two Int32s from `index`, and the steps on them, are the signalling
// semaphores' word protocol (lib/signal-count.js, shared with
// async-mutex's Semaphore):
//
//   i32a[index]      value     the permits free now, 0 to 2^31 - 1: taken
//                              by a CAS from v to v - n when v >= n, added
//                              to by a CAS from v to v + n
//   i32a[index + 1]  waiters   threads between announcing a wait and leaving
//                              it; a release that sees it above 0 wakes all
//
// Robust, as far as a consumed permit allows: a thread that ends after it
// took permits gives nothing back (they were consumed; the stake keeps no
// count of them). A thread that ends while it waits leaves `waiters` as it
// found it, and wakes the waiters: its stake counts its waits, and its
// teardown (src/stake.rs release_dead_permits) takes them out. A thread that
// ends between a release's add and its notify still wakes them (the stake's
// wake-up owed, which the teardown delivers whenever any wait). Every
// release wakes every waiter, so a waiter that dies takes no wake-up meant
// for another.

const { describe } = require('./describe.js');
const {
  codedError,
  kAttach,
  requireStakeWatch,
  watchStake,
  payOwed,
  spinTake,
  announcedWait,
  AsyncWait,
  waitEnv,
  int32Slot,
  fromPosted,
  ours,
  validateTimeout,
  validateCount,
  validateOptions,
  abortReason,
  slotOptions,
  kLabel,
  monotonicNow,
} = require('./core.js');
const { createKind, waitStart, waitEnd, endedAs } = require('./diagnostics.js');
const { kMax, kSignalStake, kStakeInts, kAnnounced, kOwed, take, add, announce, withdraw } = require('./signal-count.js');
const { newLine, join, leave, park, unpark, abandonPark, wakeFirst, goesOn, goOn, mayPass, GO, TIMED_OUT } = require('./line.js');

const notASignalSemaphore = (value) =>
  new TypeError(`The "this" value must be a SignalSemaphore (use SignalSemaphore.from() for a posted one). Received ${describe(value)}`);
const timeoutError = (ms) => codedError(`Timed out after ${ms} ms waiting for the SignalSemaphore`, 'ERR_SIGNAL_SEMAPHORE_TIMEOUT');
/** release(n)'s error where the value would go past 2^31 - 1 (nothing is added). */
const tooMuch = (seen, n) =>
  codedError(
    `The "n" argument (${n}) would take the SignalSemaphore's value (${seen}) past ${kMax}, the most it holds`,
    'ERR_SIGNAL_SEMAPHORE_OVERFLOW',
    RangeError
  );

/** `n` of every method: an integer from 0 to 2^31 - 1; `undefined` is 1. */
const validateN = (n) => (n === undefined ? 1 : validateCount(n, 'n', kMax));

/**
 * Takes `n` if that many are free; returns whether it did (a consumed
 * take: the stake keeps nothing). spinTake's and announcedWait's callback.
 */
const takes = (i32a, index, stake, n) => take(i32a, index, stake, n, false) !== null;

const fewerThan = (seen, n) => seen < n;

/**
 * Creates the SignalSemaphore class over the package's `{ wait, waitAsync,
 * notify }` and the binding's `stakeWatch`.
 */
function createSignalSemaphore({ wait, waitAsync, notify, stakeWatch }) {
  // How its waits are reported (lib/diagnostics.js).
  const kind = createKind('SignalSemaphore');
  // Every release wakes every waiter, so no wake-up is meant for one: a
  // wait that gives up after one has nothing to pass on.
  const env = waitEnv({ waitAsync, notify }, { leave: () => {} });
  let stakeIfSignalSemaphore;
  let lineOf;

  /**
   * The stake of a SignalSemaphore of this factory (a TypeError for
   * anything else), once it paid a wake-up a release of the instance owes.
   */
  function stakeOf(semaphore) {
    const stake = stakeIfSignalSemaphore(semaphore);
    if (stake === undefined) throw notASignalSemaphore(semaphore);
    if (stake[kOwed] !== 0) payOwed(notify, semaphore.i32a, semaphore.index, stake, kOwed);
    return stake;
  }

  /**
   * The blocking part of acquireSync(): spin a little, then wait (core's
   * announcedWait: the announce and withdraw of lib/signal-count.js, with
   * a blocking wait between) and take if enough are free; false once `ms`
   * have passed.
   */
  function acquireSlow(semaphore, i32a, index, stake, n, ms) {
    if (spinTake(takes, i32a, index, stake, n)) return true;
    if (ms === 0) return false;
    // Before the announced wait: should this throw, nothing is counted.
    const token = waitStart(semaphore, kind, { permits: n }, true);
    let outcome = 'error'; // how the wait ended (lib/diagnostics.js)
    try {
      const deadline = ms === Infinity ? Infinity : monotonicNow() + ms;
      for (;;) {
        if (!announcedWait(wait, i32a, index, stake, kAnnounced, deadline, fewerThan, n)) {
          outcome = 'timeout';
          return false;
        }
        if (takes(i32a, index, stake, n)) {
          outcome = 'taken';
          return true;
        }
      }
    } finally {
      if (token !== undefined) waitEnd(token, outcome);
    }
  }

  /**
   * acquire(), in one async frame (core's AsyncWait says why): first come,
   * first served among the instance's async takes, as the family's
   * Semaphore (lib/line.js); only the first of the line waits on the value.
   */
  async function acquireIn(semaphore, n, options) {
    const stake = stakeOf(semaphore);
    n = validateN(n);
    const { timeout, signal, priority } = validateOptions(options);
    if (signal !== undefined && signal.aborted) throw abortReason(signal);
    const { i32a, index } = semaphore;
    const line = lineOf(semaphore);
    if (mayPass(line, priority) && takes(i32a, index, stake, n)) return;
    if (timeout === 0) throw timeoutError(0);
    // Before it joins the line: should this throw, nothing is queued.
    const since = monotonicNow();
    const token = waitStart(semaphore, kind, { permits: n }, false, false, since);
    let ended = 'error'; // how the wait ended (lib/diagnostics.js)
    let entry = null;
    let parked = false; // awaiting its turn in the line
    let waiting = null;
    let announced = false; // this frame counts in `waiters`
    try {
      entry = join(line, n, priority, since);
      if (!goesOn(line, entry)) {
        parked = true;
        const outcome = await ours(park(entry, entry.since + timeout, signal));
        parked = false;
        unpark(entry);
        if (outcome === TIMED_OUT) {
          ended = 'timeout';
          throw timeoutError(timeout);
        }
        if (outcome !== GO || (signal !== undefined && signal.aborted)) throw abortReason(signal);
      }
      goOn(entry); // (when it was not woken so)
      const remaining = timeout === Infinity ? Infinity : entry.since + timeout - monotonicNow();
      if (remaining <= 0) {
        ended = 'timeout';
        throw timeoutError(timeout);
      }
      waiting = new AsyncWait(env, i32a, index, remaining, signal, () => timeoutError(timeout));
      for (;;) {
        announce(i32a, index, stake);
        announced = true;
        const seen = Atomics.load(i32a, index);
        if (seen < n) {
          const pending = waiting.next(seen);
          if (pending !== undefined) waiting.settled(await pending);
        }
        withdraw(i32a, index, stake);
        announced = false;
        if (takes(i32a, index, stake, n)) break;
      }
      ended = 'taken';
    } catch (error) {
      if (ended === 'error') ended = endedAs(waiting, signal);
      throw error;
    } finally {
      if (announced) withdraw(i32a, index, stake);
      try {
        if (waiting !== null) waiting.end();
      } catch (error) {
        // A signal whose removeEventListener threw: once taken, the
        // permits are the caller's (a taken permit cannot go back), so the
        // take resolves; else the error is the take's.
        if (ended !== 'taken') throw error;
      } finally {
        // (A failed await of its turn may have left it parked.)
        try {
          if (entry !== null) {
            if (parked) abandonPark(entry);
            leave(entry);
            wakeFirst(line, true);
          }
        } finally {
          if (token !== undefined) waitEnd(token, ended);
        }
      }
    }
  }

  /**
   * A count in two Int32 slots of a SharedArrayBuffer that any thread adds
   * to (`release`) and takes from, n at a time; a take is consumed. Every
   * thread builds its own instance over the same slots
   * (`SignalSemaphore.from`).
   */
  class SignalSemaphore {
    #stake; // Int32Array(4): nothing kept, waits announced, (unused), a wake-up owed (lib/signal-count.js)
    #line = newLine(); // the instance's async takes that wait their turn (lib/line.js)

    /**
     * `new SignalSemaphore()` (0, in a fresh 8-byte SharedArrayBuffer),
     * `new SignalSemaphore(initial)`, `new SignalSemaphore(initial, sab)`,
     * `new SignalSemaphore(initial, sab, index)` or `new
     * SignalSemaphore(initial, int32Array, index)` (two Int32s from
     * `index`): writes `initial` permits free, and no waiters. A thread
     * that is handed one attaches with `SignalSemaphore.from(posted)`,
     * which writes nothing.
     *
     * @param {number} [initial=0] an integer from 0 to 2^31 - 1
     * @param {SharedArrayBuffer | Int32Array} [sab]
     * @param {number} [index=0]
     */
    constructor(initial, sab, index, options) {
      requireStakeWatch(stakeWatch, 'SignalSemaphore');
      let name;
      [sab, index, name] = slotOptions(sab, index, options);
      if (initial === undefined) initial = 0;
      else if (initial !== kAttach) validateCount(initial, 'initial', kMax);
      const slot = int32Slot(sab, index, 0, SignalSemaphore.BYTES, 2);
      /** The SharedArrayBuffer. */
      this.sab = slot.sab;
      /** The Int32Array the semaphore lives in. */
      this.i32a = slot.i32a;
      /** The index of its first Int32 (the value) in `i32a`. */
      this.index = slot.index;
      /** The name given at construction (or by the posted instance), for query() and util.inspect; only if given. */
      if (name !== undefined) this.name = name;
      if (initial !== kAttach) {
        Atomics.store(this.i32a, this.index + 1, 0);
        Atomics.store(this.i32a, this.index, initial);
      }
      // Should this thread end in a wait, or owing a release's wake-up, its
      // teardown sets that right.
      this.#stake = watchStake(stakeWatch, this.i32a, this.index, kSignalStake, kStakeInts, this, kLabel.SignalSemaphore, name);
    }

    /**
     * A SignalSemaphore over the slots of one posted to this thread (`{
     * sab, i32a, index }`, the structured clone of an instance), or of a
     * hand-made `{ sab, index }` / `{ i32a, index }`. Writes nothing.
     */
    static from(value, options) {
      return new SignalSemaphore(kAttach, ...fromPosted(value, 'a SignalSemaphore', options));
    }

    /** The permits free now (a snapshot). */
    get available() {
      stakeOf(this);
      return Atomics.load(this.i32a, this.index);
    }

    /**
     * Adds `n` permits (default 1), from any thread, whether or not it took
     * any, and wakes the waiters. A RangeError with code
     * ERR_SIGNAL_SEMAPHORE_OVERFLOW, adding nothing, where the value would
     * go past 2^31 - 1. Out of stack once the permits are in, the wake-up
     * stays owed in the stake: paid by the instance's next call, by the
     * binding when the instance is collected first, or by the thread's
     * teardown.
     *
     * @param {number} [n=1]
     */
    release(n) {
      const stake = stakeOf(this);
      n = validateN(n);
      const { i32a, index } = this;
      add(i32a, index, stake, n, tooMuch);
      if (stake[kOwed] !== 0) payOwed(notify, i32a, index, stake, kOwed);
    }

    /**
     * Takes `n` permits (default 1) if that many are free, without
     * waiting; returns whether it did.
     *
     * @param {number} [n=1]
     * @returns {boolean}
     */
    tryAcquire(n) {
      const stake = stakeOf(this);
      return takes(this.i32a, this.index, stake, validateN(n));
    }

    /**
     * Takes `n` permits (default 1), blocking this thread until that many
     * are free (workers, and Node's main thread, which may block); false if
     * `timeout` ms pass first.
     *
     * @param {number} [n=1]
     * @param {number} [timeout=Infinity]
     * @returns {boolean}
     */
    acquireSync(n, timeout) {
      const stake = stakeOf(this);
      n = validateN(n);
      const ms = timeout === undefined ? Infinity : validateTimeout(timeout, 'timeout');
      const { i32a, index } = this;
      return takes(i32a, index, stake, n) || acquireSlow(this, i32a, index, stake, n, ms);
    }

    /**
     * Takes `n` permits (default 1) without blocking: resolves (with
     * undefined) once taken. Rejects with ERR_SIGNAL_SEMAPHORE_TIMEOUT
     * after `options.timeout` ms, or with `options.signal`'s reason,
     * leaving nothing queued and nothing taken.
     *
     * @param {number} [n=1]
     * @param {{ timeout?: number, signal?: AbortSignal, priority?: number }} [options]
     * @returns {Promise<void>}
     */
    acquire(n, options) {
      return acquireIn(this, n, options);
    }

    // Read `#stake` and `#line` for the functions above; taken off the class below.
    static stakeIfSignalSemaphore(semaphore) {
      try {
        return semaphore.#stake;
      } catch (_) {
        return undefined;
      }
    }

    static lineOf(semaphore) {
      return semaphore.#line; // (of an instance stakeOf took)
    }
  }
  stakeIfSignalSemaphore = SignalSemaphore.stakeIfSignalSemaphore;
  lineOf = SignalSemaphore.lineOf;
  delete SignalSemaphore.stakeIfSignalSemaphore;
  delete SignalSemaphore.lineOf;

  /** The bytes of SharedArrayBuffer a SignalSemaphore takes (two Int32s). */
  SignalSemaphore.BYTES = 8;

  return SignalSemaphore;
}

module.exports = { createSignalSemaphore };
