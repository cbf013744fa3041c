'use strict';
// Barrier: N parties meet, then all go on; again for the next generation
// (Java's CyclicBarrier, C++20's std::barrier). `arriveAndWait()` blocks
// (workers), `arriveAndWaitAsync()` never does (the main thread). A party
// that times out, aborts or dies while it waits breaks that generation for
// every party (ERR_BARRIER_BROKEN), until `reset()`.
//
// Two Int32s from `index`, and the parties:
//
//   i32a[index]      state   generation << 17 | BROKEN (1 << 16) | arrived
//                            (the parties arrived in this generation)
//   i32a[index + 1]  ended   bit (g & 31) set: generation g ended broken
//                            (told to a party that wakes to find the
//                            generation moved on past a broken one)
//   i32a[index + 2]  parties
//
//   arrive:  CAS arrived + 1; the last party instead CASes to generation
//            g + 1, arrived 0, and notifies every waiter
//   wait:    wait on the state seen until the generation moves on (passed,
//            unless its `ended` bit says broken) or it says BROKEN
//   break:   CAS the state of generation g to BROKEN (only if g is still
//            current and not complete), set g's `ended` bit, notify all
//   reset:   break the current generation, then CAS it to g + 1, arrived 0
//
// No wake-up is lost: a party waits only on the exact state it saw, and
// every change a waiter must see (the generation moving on, BROKEN) is a
// CAS followed by a notify of every waiter. Arrivals change the state but
// wake nobody: a party that saw an older state finds it moved on and looks
// again. tests/loom_barrier.rs model-checks these steps.
//
// What each instance is waiting at is its stake (the binding's stakeWatch,
// src/stake.rs): the generation + 1 and how many of its waits are there,
// written right after the arrival's CAS (no call between the two). When
// the thread ends waiting, its teardown breaks that generation.

const { performance } = require('perf_hooks');
const { describe } = require('./describe');
const {
  codedError,
  AsyncWait,
  waitEnv,
  int32Slot,
  fromPosted,
  validateTimeout,
  validateCount,
  validateOptions,
  abortReason,
} = require('./core');

const ARRIVED = 0xffff;
const BROKEN = 1 << 16;
const GEN_SHIFT = 17;
const kMaxParties = 0xffff;
// The constructor's first argument when from() attaches (writes nothing).
const kAttach = Symbol('attach');
// The binding's stake kind of a Barrier (src/napi/stakes.rs), and the
// stake's Int32s: the generation + 1 the instance waits at (0: none), and
// how many of its waits are there.
const kBarrierStake = 3;
const kAt = 0;
const kWaits = 1;

const generationOf = (state) => state >>> GEN_SHIFT;
const nextState = (state) => ((generationOf(state) + 1) & 0x3fff) << GEN_SHIFT;
const endedBit = (generation) => 1 << (generation & 31);

const brokenError = () =>
  codedError('The Barrier is broken: a party timed out, aborted or ended while it waited, or it was reset', 'ERR_BARRIER_BROKEN');
const timeoutError = (ms) => codedError(`Timed out after ${ms} ms waiting at the Barrier (which is now broken)`, 'ERR_BARRIER_TIMEOUT');

/** Creates the Barrier class over the package's `{ wait, waitAsync, notify }` and the binding's `stakeWatch`. */
function createBarrier({ wait, waitAsync, notify, stakeWatch }) {
  // Every change a waiter waits for wakes every waiter: nothing to pass on.
  const env = waitEnv({ waitAsync, notify }, { leave: () => {} });
  let stakeIfBarrier;

  function stakeOf(barrier) {
    const stake = stakeIfBarrier(barrier);
    if (stake === undefined) {
      throw new TypeError(`The "this" value must be a Barrier (use Barrier.from() for a posted one). Received ${describe(barrier)}`);
    }
    return stake;
  }

  /**
   * Breaks generation `generation` if it is still the current one and has
   * not completed: BROKEN, its `ended` bit, every waiter woken. Returns
   * whether this call broke it.
   */
  function breakGeneration(i32a, index, generation) {
    let seen = Atomics.load(i32a, index);
    for (;;) {
      if (generationOf(seen) !== generation || (seen & BROKEN) !== 0) return false;
      const was = Atomics.compareExchange(i32a, index, seen, seen | BROKEN);
      if (was === seen) break;
      seen = was;
    }
    Atomics.or(i32a, index + 1, endedBit(generation));
    notify(i32a, index, Infinity);
    return true;
  }

  /**
   * Arrives: returns `{ generation, arrival }` once counted (arrival is
   * the order of arrival, parties - 1 for the one that completed the
   * generation, which has then woken the others), counting the wait in
   * `stake` unless it completed it. Throws ERR_BARRIER_BROKEN, counting
   * nothing, on a broken barrier.
   */
  function arrive(barrier, stake) {
    const { i32a, index } = barrier;
    const parties = stake[2];
    let seen = Atomics.load(i32a, index);
    for (;;) {
      if ((seen & BROKEN) !== 0) throw brokenError();
      const arrived = (seen & ARRIVED) + 1;
      const generation = generationOf(seen);
      if (arrived === parties) {
        // The last: the `ended` bit of the next generation is cleared
        // before it starts (it is 32 generations old).
        const next = nextState(seen);
        Atomics.and(i32a, index + 1, ~endedBit(generationOf(next)));
        const was = Atomics.compareExchange(i32a, index, seen, next);
        if (was === seen) {
          notify(i32a, index, Infinity);
          return { generation, arrival: arrived - 1, last: true };
        }
        seen = was;
        continue;
      }
      const was = Atomics.compareExchange(i32a, index, seen, seen + 1);
      if (was === seen) {
        stake[kAt] = generation + 1;
        stake[kWaits]++;
        return { generation, arrival: arrived - 1, last: false };
      }
      seen = was;
    }
  }

  /** The wait of a party of `generation` is over (whichever way). */
  function leave(stake) {
    if (--stake[kWaits] === 0) stake[kAt] = 0;
  }

  /**
   * How the generation a party waits at stands: 1 passed, -1 broken, 0
   * still open (then `state` is the value to wait on).
   */
  function standing(i32a, index, generation, state) {
    if (generationOf(state) !== generation) {
      return (Atomics.load(i32a, index + 1) & endedBit(generation)) !== 0 ? -1 : 1;
    }
    return (state & BROKEN) !== 0 ? -1 : 0;
  }

  class Barrier {
    #stake; // Int32Array(3): the generation + 1 it waits at, its waits there, the parties (see above)

    /**
     * `new Barrier(parties)` (a fresh 12-byte SharedArrayBuffer), `new
     * Barrier(parties, sab)`, `new Barrier(parties, sab, index)` or `new
     * Barrier(parties, int32Array, index)` (three Int32s from `index`):
     * writes a fresh barrier. Others attach with `Barrier.from(posted)`.
     *
     * @param {number} parties an integer from 1 to 65535
     * @param {SharedArrayBuffer | Int32Array} [sab]
     * @param {number} [index=0]
     */
    constructor(parties, sab, index) {
      if (typeof stakeWatch !== 'function') {
        throw new Error('atomics-waitasync: the loaded binary has no stakeWatch: Barrier needs a binary of this version (npx atomics-waitasync-build)');
      }
      if (parties !== kAttach) {
        validateCount(parties, 'parties', kMaxParties);
        if (parties === 0) throw new RangeError('The "parties" argument must be an integer from 1 to 65535. Received 0');
      }
      const slot = int32Slot(sab, index, 0, Barrier.BYTES, 3);
      this.sab = slot.sab;
      this.i32a = slot.i32a;
      this.index = slot.index;
      const stake = new Int32Array(new SharedArrayBuffer(12));
      this.#stake = stake;
      if (parties !== kAttach) {
        Atomics.store(this.i32a, this.index + 2, parties);
        Atomics.store(this.i32a, this.index + 1, 0);
        Atomics.store(this.i32a, this.index, 0);
      }
      stake[2] = Atomics.load(this.i32a, this.index + 2);
      // Should this thread end waiting at the barrier, its teardown breaks it.
      stakeWatch(this.i32a, this.index, kBarrierStake, stake, this);
    }

    static from(value) {
      return new Barrier(kAttach, ...fromPosted(value, 'a Barrier'));
    }

    /** The parties the barrier was made for. */
    get parties() {
      return stakeOf(this)[2];
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
      const { generation, arrival, last } = arrive(this, stake);
      if (last) return arrival;
      const deadline = ms === Infinity ? Infinity : performance.now() + ms;
      try {
        for (;;) {
          const state = Atomics.load(i32a, index);
          const now = standing(i32a, index, generation, state);
          if (now === 1) return arrival;
          if (now === -1) throw brokenError();
          const remaining = deadline === Infinity ? Infinity : deadline - performance.now();
          if (remaining <= 0) {
            if (breakGeneration(i32a, index, generation)) throw timeoutError(ms);
            continue; // completed or broken meanwhile: look again
          }
          wait(i32a, index, state, remaining);
        }
      } finally {
        leave(stake);
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
      const { generation, arrival, last } = arrive(this, stake);
      if (last) return arrival;
      const waiting = new AsyncWait(env, i32a, index, timeout, signal, () => kTimedOut);
      try {
        for (;;) {
          const state = Atomics.load(i32a, index);
          const now = standing(i32a, index, generation, state);
          if (now === 1) return arrival;
          if (now === -1) throw brokenError();
          let pending;
          try {
            pending = waiting.next(state);
            if (pending !== undefined) waiting.settled(await pending);
          } catch (error) {
            // Timed out or aborted: breaks the generation, unless it is over.
            if (error === kTimedOut || waiting.aborted) {
              if (breakGeneration(i32a, index, generation)) throw error === kTimedOut ? timeoutError(timeout) : error;
              continue; // over meanwhile: its outcome is this party's
            }
            throw error;
          }
        }
      } finally {
        waiting.end();
        leave(stake);
      }
    }

    /**
     * Breaks the current generation (its waiting parties get
     * ERR_BARRIER_BROKEN) and starts a fresh one, not broken.
     */
    reset() {
      stakeOf(this);
      const { i32a, index } = this;
      const seen = Atomics.load(i32a, index);
      const generation = generationOf(seen);
      breakGeneration(i32a, index, generation);
      const broken = Atomics.load(i32a, index);
      if (generationOf(broken) !== generation) return; // completed (or reset) meanwhile
      const next = nextState(broken);
      Atomics.and(i32a, index + 1, ~endedBit(generationOf(next)));
      if (Atomics.compareExchange(i32a, index, broken, next) === broken) notify(i32a, index, Infinity);
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
