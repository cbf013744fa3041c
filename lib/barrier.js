'use strict';
// Barrier: N parties meet, then all go on; again for the next generation
// (Java's CyclicBarrier, C++20's std::barrier). `arriveAndWait()` blocks
// (workers), `arriveAndWaitAsync()` never does (the main thread). A party
// that times out, aborts or dies while it waits breaks that generation for
// every party (ERR_BARRIER_BROKEN), until `reset()`.
//
// Three Int32s from `index`:
//
//   i32a[index]      state   generation << 17 | BROKEN (1 << 16)
//                            | PREV_BROKEN (1 << 15) | arrived (the parties
//                            arrived in this generation); PREV_BROKEN: the
//                            generation before ended broken (reset())
//   i32a[index + 1]  ended   bit (g & 31) set: generation g ended broken
//                            (for a party that wakes to find the barrier
//                            two to 15 generations on; see clearEnded)
//   i32a[index + 2]  parties
//
//   arrive:  CAS arrived + 1; the last party instead CASes to generation
//            g + 1, arrived 0, and notifies every waiter
//   wait:    wait on the state seen until it says BROKEN or the generation
//            moves on (passed, unless PREV_BROKEN, or, further on, its
//            `ended` bit, says broken)
//   break:   CAS the state of generation g to BROKEN (only if g is still
//            current and not complete), set g's `ended` bit, notify all
//   reset:   break the current generation, set its `ended` bit, then CAS
//            it to g + 1 | PREV_BROKEN, arrived 0, and notify all
//
// No wake-up is lost: a party waits only on the exact state it saw, and
// every change a waiter must see (the generation moving on, BROKEN) is a
// CAS followed by a notify of every waiter. Arrivals change the state but
// wake nobody: a party that saw an older state finds it moved on and looks
// again. tests/loom_barrier.rs model-checks these steps.
//
// What each instance is waiting at is its stake (the binding's stakeWatch,
// src/stake.rs): the generation + 1, written right after the arrival's
// CAS (no call between the two): when the thread ends waiting, its
// teardown breaks that generation. And a wake-up it owes, set before each
// CAS that makes waiters due one (the last arrival, a break, a reset) and
// cleared once the notify returned: the teardown wakes every waiter if the
// thread was stopped in between, and the instance's next call if the
// notify ran out of stack (or the binding, if the instance is collected
// first).

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
  validateCount,
  validateOptions,
  abortReason,
  slotOptions,
  kLabel,
  monotonicNow,
} = require('./core.js');
const { createKind, waitStart, waitEnd } = require('./diagnostics.js');

const ARRIVED = 0x7fff;
const PREV_BROKEN = 1 << 15;
const BROKEN = 1 << 16;
const GEN_SHIFT = 17;
const kMaxParties = 0x7fff;
// The binding's stake kind of a Barrier (src/napi/stakes.rs), and the
// stake's Int32s: the generation + 1 the instance waits at (0: none), 1
// while a wake-up of every waiter is owed (the two the teardown reads);
// how many of its waits are at that generation, and the parties.
const kBarrierStake = 3;
const kAt = 0;
const kOwed = 1;
const kWaits = 2;
const kParties = 3;

const generationOf = (state) => state >>> GEN_SHIFT;
const nextGeneration = (generation) => (generation + 1) & 0x3fff;
const endedBit = (generation) => 1 << (generation & 31);

const brokenError = () =>
  codedError('The Barrier is broken: a party timed out, aborted or ended while it waited, or it was reset', 'ERR_BARRIER_BROKEN');
const timeoutError = (ms) => codedError(`Timed out after ${ms} ms waiting at the Barrier (which is now broken)`, 'ERR_BARRIER_TIMEOUT');

/** Creates the Barrier class over the package's `{ wait, waitAsync, notify }` and the binding's `stakeWatch`. */
function createBarrier({ wait, waitAsync, notify, stakeWatch }) {
  // Every change a waiter waits for wakes every waiter: nothing to pass on.
  const env = waitEnv({ waitAsync, notify }, { leave: () => {} });
  // What the instances' waits are reported as (lib/diagnostics.js).
  const kind = createKind('Barrier');
  let stakeIfBarrier;

  /**
   * The stake of a Barrier of this factory; a TypeError for anything else.
   * Pays a wake-up a call of this instance owes first (see wakeAll).
   */
  function stakeOf(barrier) {
    const stake = stakeIfBarrier(barrier);
    if (stake === undefined) {
      throw new TypeError(`The "this" value must be a Barrier (use Barrier.from() for a posted one). Received ${describe(barrier)}`);
    }
    if (stake[kOwed] !== 0) wakeAll(barrier.i32a, barrier.index, stake);
    return stake;
  }

  /**
   * Wakes every waiter (core's deliver: now, or from a timer should the
   * addon's notify fail), after a CAS that made them due a wake-up, before
   * which `stake[kOwed]` was set (no call between the two): should the
   * thread be stopped at this call, its teardown wakes them; should the
   * notify run out of stack, this instance's next call does.
   */
  function wakeAll(i32a, index, stake) {
    payOwed(notify, i32a, index, stake, kOwed);
  }

  /**
   * Generation `generation` has just started (this thread's CAS): clears
   * the `ended` bit of generation + 16, which told how generation - 16
   * ended, 16 generations before that bit is needed again. A bit is so
   * right for a party up to 15 generations late, also when a clear comes
   * late (its thread slow); a thread stopped right before it leaves that
   * one bit as it was until its next clear, 32 generations on.
   */
  function clearEnded(i32a, index, generation) {
    Atomics.and(i32a, index + 1, ~endedBit(generation + 16));
  }

  /**
   * Breaks generation `generation` if it is still the current one and has
   * not completed: BROKEN, then its `ended` bit, every waiter woken.
   * Returns whether this call broke it.
   */
  function breakGeneration(i32a, index, stake, generation) {
    let seen = Atomics.load(i32a, index);
    for (;;) {
      if (generationOf(seen) !== generation || (seen & BROKEN) !== 0) return false;
      stake[kOwed] = 1;
      const was = Atomics.compareExchange(i32a, index, seen, seen | BROKEN);
      if (was === seen) break;
      stake[kOwed] = 0;
      seen = was;
    }
    Atomics.or(i32a, index + 1, endedBit(generation));
    wakeAll(i32a, index, stake);
    return true;
  }

  /**
   * Arrives: returns `{ generation, arrival, last, token }` once counted
   * (arrival is the order of arrival, parties - 1 for the one that
   * completed the generation, which has then woken the others), counting
   * the wait in `stake` unless it completed it. Throws ERR_BARRIER_BROKEN,
   * counting nothing, on a broken barrier.
   *
   * An arrival that is not the last is reported as a wait
   * (lib/diagnostics.js, `blocking` as the call is) before the
   * compareExchange that counts it: should that throw, nothing is counted.
   * `token` is the wait's, for the caller to end; one that turns out the
   * last after all (the others came meanwhile) is ended here, 'arrived'.
   */
  function arrive(barrier, stake, blocking) {
    const { i32a, index } = barrier;
    const parties = stake[kParties];
    let token;
    let waiting = false; // reported as a wait (token, if anyone listens)
    let seen = Atomics.load(i32a, index);
    try {
      for (;;) {
        if ((seen & BROKEN) !== 0) throw brokenError();
        const arrived = (seen & ARRIVED) + 1;
        const generation = generationOf(seen);
        if (arrived === parties) {
          // The last: starts the next generation (not PREV_BROKEN).
          const next = nextGeneration(generation);
          stake[kOwed] = 1;
          const was = Atomics.compareExchange(i32a, index, seen, next << GEN_SHIFT);
          if (was === seen) {
            clearEnded(i32a, index, next);
            wakeAll(i32a, index, stake);
            if (waiting) {
              waiting = false;
              if (token !== undefined) waitEnd(token, 'arrived');
            }
            return { generation, arrival: arrived - 1, last: true, token: undefined };
          }
          stake[kOwed] = 0;
          seen = was;
          continue;
        }
        if (!waiting) {
          token = waitStart(barrier, kind, { parties }, blocking);
          waiting = true;
        }
        const was = Atomics.compareExchange(i32a, index, seen, seen + 1);
        if (was === seen) {
          stake[kAt] = generation + 1;
          stake[kWaits]++;
          waiting = false; // (the caller's to end)
          return { generation, arrival: arrived - 1, last: false, token };
        }
        seen = was;
      }
    } finally {
      if (waiting && token !== undefined) waitEnd(token, (Atomics.load(i32a, index) & BROKEN) !== 0 ? 'broken' : 'error');
    }
  }

  /** How the wait of a party that arrived ended, for waitEnd: passed, broken, or `otherwise`. */
  const outcomeOf = (now, otherwise) => (now === 1 ? 'arrived' : now === -1 ? 'broken' : otherwise);

  /** The wait of a party of `generation` is over (whichever way). */
  function leave(stake) {
    if (--stake[kWaits] === 0) stake[kAt] = 0;
  }

  /**
   * How the generation a party waits at stands: 1 passed, -1 broken, 0
   * still open (then `state` is the value to wait on). One generation on,
   * the state says it (PREV_BROKEN: it was broken, then reset); further on
   * (the party slept through a whole generation: more threads than
   * parties, or resets), its `ended` bit.
   */
  function standing(i32a, index, generation, state) {
    const now = generationOf(state);
    if (now === generation) return (state & BROKEN) !== 0 ? -1 : 0;
    if (now === nextGeneration(generation)) return (state & PREV_BROKEN) !== 0 ? -1 : 1;
    return (Atomics.load(i32a, index + 1) & endedBit(generation)) !== 0 ? -1 : 1;
  }

  class Barrier {
    #stake; // Int32Array(4): the generation + 1 it waits at, a wake-up owed, its waits there, the parties (see above)

    /**
     * `new Barrier(parties)` (a fresh 12-byte SharedArrayBuffer), `new
     * Barrier(parties, sab)`, `new Barrier(parties, sab, index)` or `new
     * Barrier(parties, int32Array, index)` (three Int32s from `index`):
     * writes a fresh barrier. Others attach with `Barrier.from(posted)`.
     *
     * @param {number} parties an integer from 1 to 32767
     * @param {SharedArrayBuffer | Int32Array} [sab]
     * @param {number} [index=0]
     */
    constructor(parties, sab, index, options) {
      requireStakeWatch(stakeWatch, 'Barrier');
      let name;
      [sab, index, name] = slotOptions(sab, index, options);
      if (parties !== kAttach) {
        validateCount(parties, 'parties', kMaxParties);
        if (parties === 0) throw new RangeError('The "parties" argument must be an integer from 1 to 32767. Received 0');
      }
      const slot = int32Slot(sab, index, 0, Barrier.BYTES, 3);
      this.sab = slot.sab;
      this.i32a = slot.i32a;
      this.index = slot.index;
      /** The name given at construction (or by the posted instance), for query() and util.inspect; only if given. */
      if (name !== undefined) this.name = name;
      if (parties !== kAttach) {
        Atomics.store(this.i32a, this.index + 2, parties);
        Atomics.store(this.i32a, this.index + 1, 0);
        Atomics.store(this.i32a, this.index, 0);
      }
      // Should this thread end waiting at the barrier, its teardown breaks it.
      const stake = watchStake(stakeWatch, this.i32a, this.index, kBarrierStake, 4, this, kLabel.Barrier, name);
      stake[kParties] = Atomics.load(this.i32a, this.index + 2);
      this.#stake = stake;
    }

    static from(value, options) {
      return new Barrier(kAttach, ...fromPosted(value, 'a Barrier', options));
    }

    /** The parties the barrier was made for. */
    get parties() {
      return stakeOf(this)[kParties];
    }

    /** How many parties wait in the current generation now (a snapshot). */
    get waiting() {
      stakeOf(this);
      return Atomics.load(this.i32a, this.index) & ARRIVED;
    }

    /** Whether the barrier is broken (until reset()). */
    get broken() {
      stakeOf(this);
      return (Atomics.load(this.i32a, this.index) & BROKEN) !== 0;
    }

    /**
     * Arrives and blocks until all parties have arrived; returns this
     * party's arrival index (0 for the first, parties - 1 for the last,
     * which opens the barrier). Throws ERR_BARRIER_BROKEN if the barrier is
     * or becomes broken, and ERR_BARRIER_TIMEOUT after `timeout` ms, having
     * broken it for the others.
     *
     * @param {number} [timeout=Infinity]
     * @returns {number}
     */
    arriveAndWait(timeout) {
      const stake = stakeOf(this);
      const ms = timeout === undefined ? Infinity : validateTimeout(timeout, 'timeout');
      const { i32a, index } = this;
      const { generation, arrival, last, token } = arrive(this, stake, true);
      if (last) return arrival;
      let over = false; // the generation's outcome is known to this party
      let ended = 'error'; // how the wait ended (lib/diagnostics.js)
      try {
        const deadline = ms === Infinity ? Infinity : monotonicNow() + ms;
        for (;;) {
          const state = Atomics.load(i32a, index);
          const now = standing(i32a, index, generation, state);
          over = now !== 0;
          ended = outcomeOf(now, ended);
          if (now === 1) return arrival;
          if (now === -1) throw brokenError();
          const remaining = deadline === Infinity ? Infinity : deadline - monotonicNow();
          if (remaining <= 0) {
            if (breakGeneration(i32a, index, stake, generation)) {
              over = true;
              ended = 'timeout';
              throw timeoutError(ms);
            }
            continue; // completed or broken meanwhile: look again
          }
          wait(i32a, index, state, remaining);
        }
      } finally {
        try {
          // Leaving for any other reason (a throw of the wait: out of stack, a
          // panic in the addon) breaks the generation, as a party that dies.
          if (!over) breakGeneration(i32a, index, stake, generation);
          leave(stake);
        } finally {
          if (token !== undefined) waitEnd(token, ended);
        }
      }
    }

    /**
     * `arriveAndWait()` without blocking: resolves with the arrival index;
     * rejects with ERR_BARRIER_BROKEN, with ERR_BARRIER_TIMEOUT after
     * `options.timeout` ms, or with `options.signal`'s reason, the last two
     * having broken the barrier for the others (an abort or timeout that
     * comes once the generation completed changes nothing).
     *
     * @param {{ timeout?: number, signal?: AbortSignal }} [options]
     * @returns {Promise<number>}
     */
    async arriveAndWaitAsync(options) {
      const stake = stakeOf(this);
      const { timeout, signal } = validateOptions(options);
      if (signal !== undefined && signal.aborted) throw abortReason(signal);
      const { i32a, index } = this;
      const { generation, arrival, last, token } = arrive(this, stake, false);
      if (last) return arrival;
      let over = false; // the generation's outcome is known to this party
      let ended = 'error'; // how the wait ended (lib/diagnostics.js)
      let waiting = null;
      try {
        waiting = new AsyncWait(env, i32a, index, timeout, signal, () => kTimedOut);
        for (;;) {
          const state = Atomics.load(i32a, index);
          const now = standing(i32a, index, generation, state);
          over = now !== 0;
          ended = outcomeOf(now, ended);
          if (now === 1) return arrival;
          if (now === -1) throw brokenError();
          try {
            const pending = waiting.next(state);
            if (pending !== undefined) waiting.settled(await pending);
          } catch (error) {
            // Timed out or aborted: breaks the generation, unless it is over.
            if (error === kTimedOut || waiting.aborted) {
              if (breakGeneration(i32a, index, stake, generation)) {
                over = true;
                ended = error === kTimedOut ? 'timeout' : 'abort';
                throw error === kTimedOut ? timeoutError(timeout) : error;
              }
              continue; // over meanwhile: its outcome is this party's
            }
            throw error;
          }
        }
      } finally {
        try {
          // Leaving for any other reason (a signal whose addEventListener
          // threw, a failed await) breaks the generation, as a party that dies.
          if (!over) breakGeneration(i32a, index, stake, generation);
          if (waiting !== null) waiting.end();
          leave(stake);
        } finally {
          if (token !== undefined) waitEnd(token, ended);
        }
      }
    }

    /**
     * Breaks the current generation (its waiting parties get
     * ERR_BARRIER_BROKEN) and starts a fresh one, not broken.
     */
    reset() {
      const stake = stakeOf(this);
      const { i32a, index } = this;
      const generation = generationOf(Atomics.load(i32a, index));
      breakGeneration(i32a, index, stake, generation);
      const broken = Atomics.load(i32a, index);
      if (generationOf(broken) !== generation) return; // completed (or reset) meanwhile
      // Broken now (an arrival on a broken state throws): the next
      // generation starts saying so (PREV_BROKEN), for the parties that
      // wake to find it; its `ended` bit is set too, should a break have
      // set BROKEN and not yet the bit.
      Atomics.or(i32a, index + 1, endedBit(generation));
      const next = nextGeneration(generation);
      stake[kOwed] = 1;
      if (Atomics.compareExchange(i32a, index, broken, (next << GEN_SHIFT) | PREV_BROKEN) === broken) {
        clearEnded(i32a, index, next);
        wakeAll(i32a, index, stake);
      } else {
        stake[kOwed] = 0; // reset meanwhile by another
      }
    }

    static stakeIfBarrier(value) {
      try {
        return value.#stake;
      } catch (_) {
        return undefined;
      }
    }
  }
  stakeIfBarrier = Barrier.stakeIfBarrier;
  delete Barrier.stakeIfBarrier;

  Barrier.BYTES = 12;
  return Barrier;
}

const kTimedOut = Symbol('timed out');

module.exports = { createBarrier };
