'use strict';
// Semaphore: permits in a SharedArrayBuffer that threads take and give
// back n at a time (Java's Semaphore, C++20's counting_semaphore,
// async-mutex's weighted Semaphore). `acquireSync()` blocks (workers),
// `acquire()` never does (the main thread); robust: permits a thread holds
// when it ends come back.
//
// Three Int32s from `index` (src/stake.rs):
//
//   i32a[index]      permits   free now, never below 0: taken by a CAS from
//                              p to p - n when p >= n, given back by an add
//   i32a[index + 1]  waiters   threads between announcing a wait and leaving
//                              it; a release that sees it above 0 wakes all
//   i32a[index + 2]  total     the permits the semaphore was made with (so
//                              that a request for more fails at once)
//
// No wake-up is lost: a waiter adds itself to `waiters`, then reads
// `permits` and waits on the value it read; a release adds to `permits`,
// then reads `waiters`. Either the release sees the waiter, or the waiter
// sees the permits (its wait finds the value moved on). A release wakes
// every waiter: each looks again and takes what it wants if it is there
// (a request of n waits for n free at once). tests/loom_semaphore.rs
// model-checks these steps.
//
// What each instance holds is its *stake*, Int32s of a SharedArrayBuffer
// of its own: the permits it holds and how many of its waits count in
// `waiters`, each written right after the atomic step that changed what it
// counts, with no call between the two (a worker is terminated only at a
// call or a loop's back edge); the total as it read it; and a wake-up a
// release owes (see give). The env watches it (the binding's stakeWatch):
// when the thread ends, its teardown takes its waits out of `waiters`,
// gives back the permits it still holds and wakes the waiters.

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
  makeReleaser,
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
const { newLine, join, leave, park, unpark, abandonPark, wakeFirst, goesOn, goOn, mayPass, GO, TIMED_OUT } = require('./line.js');
const { createKind, waitStart, waitEnd, endedAs, tracing, traced } = require('./diagnostics.js');

const kMaxPermits = 0x7fffffff;
// The binding's stake kind of a Semaphore (src/napi/stakes.rs).
const kSemaphoreStake = 1;
// The stake's Int32s: permits held, waits counted in `waiters` (the two
// the teardown reads); and the semaphore's total as the instance read it
// when it was made (for argument checks only).
const kHeld = 0;
const kAnnounced = 1;
const kTotal = 2;
// And 1 while a release's wake-up is owed (see give).
const kOwed = 3;

const notASemaphore = (value) =>
  new TypeError(`The "this" value must be a Semaphore (use Semaphore.from() for a posted one). Received ${describe(value)}`);
const notHeldError = (n, held) =>
  codedError(`Tried to release ${n} permits of a Semaphore while this instance holds ${held}`, 'ERR_SEMAPHORE_NOT_HELD');
/** The error for an `n` of acquire or release that is not an integer from 0 to `total`. */
function badPermits(n, total) {
  validateCount(n, 'n', kMaxPermits);
  return new RangeError(`The "n" argument${n === 1 ? ' (default 1)' : ''} must be at most the semaphore's permits (${total}). Received ${n}`);
}
const timeoutError = (ms) => codedError(`Timed out after ${ms} ms waiting for the Semaphore`, 'ERR_SEMAPHORE_TIMEOUT');

/**
 * Creates the Semaphore class over the package's `{ wait, waitAsync,
 * notify }` and the binding's `stakeWatch`.
 */
function createSemaphore({ wait, waitAsync, notify, stakeWatch }) {
  // Every release wakes every waiter, so no wake-up is meant for one: a
  // wait that gives up after one has nothing to pass on.
  const env = waitEnv({ waitAsync, notify }, { leave: () => {} });
  // What the instances' waits are reported as (lib/diagnostics.js).
  const kind = createKind('Semaphore');
  let stakeIfSemaphore;
  let lineOf;

  /** The stake of a Semaphore of this factory; a TypeError for anything else. */
  function stakeOf(semaphore) {
    const stake = stakeIfSemaphore(semaphore);
    if (stake === undefined) throw notASemaphore(semaphore);
    return stake;
  }

  // Pays the wake-up a release of `semaphore` owes (give): validatePermits's
  // rare step, apart. validatePermits is inlined twice into an uncontended
  // acquireSync(1) + release(1); with this call written out (29 bytes of
  // bytecode more each) their caller had ~20 bytes left of TurboFan's
  // --max-inlined-bytecode-size-cumulative (920), and past it one of them
  // is called: 577 instructions instead of 515 (see lib/async-lock.js
  // runFree for how to check).
  const payOwedOf = (semaphore, stake) => payOwed(notify, semaphore.i32a, semaphore.index, stake, kOwed);

  /**
   * `n` of acquire and release: an integer from 0 to the semaphore's total
   * (as the instance read it when it was made: `stake[kTotal]`). Pays a
   * wake-up a release of this instance owes first (give).
   */
  function validatePermits(semaphore, stake, n) {
    if (stake[kOwed] !== 0) payOwedOf(semaphore, stake);
    if (n === undefined) {
      if (stake[kTotal] >= 1) return 1;
      n = 1;
    }
    // (The common call, first: a plain check instead of validateCount's.)
    if (typeof n === 'number' && n >= 0 && n <= stake[kTotal] && (n | 0) === n) return n;
    throw badPermits(n, stake[kTotal]);
  }

  /**
   * Takes `n` permits if that many are free, counting them in `stake`;
   * returns whether it did. The CAS and the stake's store have no call or
   * back edge between them (see above).
   */
  function take(i32a, index, stake, n) {
    // First from every permit free (as when nobody holds any): a take with
    // one atomic step where that is so, and a load of the word where not.
    const total = stake[kTotal];
    let seen = Atomics.compareExchange(i32a, index, total, total - n);
    if (seen === total) {
      stake[kHeld] += n;
      return true;
    }
    while (seen >= n) {
      const was = Atomics.compareExchange(i32a, index, seen, seen - n);
      if (was === seen) {
        stake[kHeld] += n;
        return true;
      }
      seen = was;
    }
    return false;
  }

  /**
   * Gives back `n` of the permits `stake` holds and wakes the waiters, if
   * any (core's deliver: now, or from a timer if the addon's notify
   * failed). Throws ERR_SEMAPHORE_NOT_HELD, doing nothing, if the stake
   * holds fewer. Once the permits are back, a throw (out of stack, at
   * deliver's call) leaves the wake-up owed in the stake: paid by this
   * instance's next call (payOwed), by the binding when the instance is
   * collected first, or by the thread's teardown, which wakes the waiters
   * whenever there are any.
   */
  function give(i32a, index, stake, n) {
    // (giveBack and the wake-up, written out: two calls here cost the
    // uncontended release 9 % of its instructions.)
    if (n > stake[kHeld]) throw notHeldError(n, stake[kHeld]);
    Atomics.add(i32a, index, n);
    stake[kHeld] -= n;
    if (Atomics.load(i32a, index + 1) > 0) {
      stake[kOwed] = 1;
      payOwed(notify, i32a, index, stake, kOwed);
    }
  }

  /** give's first half (a release function's): `n` permits out of the stake, back into the word. */
  function giveBack(i32a, index, stake, n) {
    if (n > stake[kHeld]) throw notHeldError(n, stake[kHeld]);
    Atomics.add(i32a, index, n);
    stake[kHeld] -= n;
  }

  const fewerThan = (seen, n) => seen < n;

  /** What a traced call asks for (its `n` as given: checked by the call itself). */
  const permitsAsked = (n) => ({ permits: n === undefined ? 1 : n });

  /**
   * The blocking part of acquireSync(), on permits its take did not find:
   * waits for them (waitForPermits), reported as a wait of `semaphore`
   * (lib/diagnostics.js) unless `ms` is 0 (a try that spins).
   */
  function acquireSlow(semaphore, i32a, index, stake, n, ms) {
    if (ms === 0) return spinTake(take, i32a, index, stake, n);
    // Before the spin and the announced wait: should this throw, nothing is counted.
    const token = waitStart(semaphore, kind, { permits: n }, true, ms !== Infinity);
    let outcome = 'error';
    try {
      const took = waitForPermits(i32a, index, stake, n, ms);
      outcome = took ? 'taken' : 'timeout';
      return took;
    } finally {
      if (token !== undefined) waitEnd(token, outcome);
    }
  }

  /**
   * acquireSlow's wait: spin a little, then wait (core's announcedWait)
   * and take if enough are free; false once `ms` (> 0) have passed.
   */
  function waitForPermits(i32a, index, stake, n, ms) {
    if (spinTake(take, i32a, index, stake, n)) return true;
    const deadline = ms === Infinity ? Infinity : monotonicNow() + ms;
    for (;;) {
      if (!announcedWait(wait, i32a, index, stake, kAnnounced, deadline, fewerThan, n)) return false;
      if (take(i32a, index, stake, n)) return true;
    }
  }

  /**
   * The release function of `n` permits taken through `semaphore` (which
   * it keeps alive: a collected instance's stake stays watched while it
   * holds permits). Called again after it ran out of stack, it tries again
   * what is left: the give-back, once only, and the wake-up. One that
   * found the instance holding fewer (ERR_SEMAPHORE_NOT_HELD) is spent,
   * so that a call again cannot give back a later hold's permits.
   */
  function releaserOf(semaphore, stake, n) {
    let given = false;
    let spent = false;
    return makeReleaser(
      () => {
        if (!given) {
          if (n > stake[kHeld]) {
            spent = true;
            throw notHeldError(n, stake[kHeld]);
          }
          giveBack(semaphore.i32a, semaphore.index, stake, n);
          given = true;
        }
        // give's wake-up, written out: owed in the stake before any call.
        if (Atomics.load(semaphore.i32a, semaphore.index + 1) > 0) {
          stake[kOwed] = 1;
          payOwed(notify, semaphore.i32a, semaphore.index, stake, kOwed);
        }
      },
      () => !spent, // (asked after a throw)
      { permits: n }
    );
  }

  /**
   * acquire (f undefined: resolves with a release function) and
   * runExclusive (runs f holding the permits, gives them back however f
   * ends), in one async frame, as AsyncLock's lockedAsync (core's
   * AsyncWait says why).
   */
  async function acquireIn(semaphore, n, options, f, run) {
    const stake = stakeOf(semaphore);
    if (run && typeof f !== 'function') {
      throw new TypeError(`The "f" argument must be a function. Received ${describe(f)}`);
    }
    n = validatePermits(semaphore, stake, n);
    const { timeout, signal, priority } = validateOptions(options);
    if (signal !== undefined && signal.aborted) throw abortReason(signal);
    const { i32a, index } = semaphore;
    const line = lineOf(semaphore);
    // First come, first served among the instance's async takes (lib/line.js):
    // one that finds others waiting joins the line, and only its first
    // contends for the permits (a heavy request holds lighter ones behind
    // it off, so that it runs eventually).
    if (!(mayPass(line, priority) && take(i32a, index, stake, n))) {
      if (timeout === 0) throw timeoutError(0);
      // Before it joins the line: should this throw, nothing is queued.
      const since = monotonicNow();
      const token = waitStart(semaphore, kind, { permits: n }, false, timeout !== Infinity, since);
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
          Atomics.add(i32a, index + 1, 1);
          stake[kAnnounced]++;
          announced = true;
          const seen = Atomics.load(i32a, index);
          if (seen < n) {
            const pending = waiting.next(seen);
            if (pending !== undefined) waiting.settled(await pending);
          }
          Atomics.sub(i32a, index + 1, 1);
          stake[kAnnounced]--;
          announced = false;
          if (take(i32a, index, stake, n)) break;
        }
        ended = 'taken';
      } finally {
        if (announced) {
          Atomics.sub(i32a, index + 1, 1);
          stake[kAnnounced]--;
        }
        try {
          if (waiting !== null) waiting.end();
        } finally {
          try {
            // (A failed await of its turn may have left it parked.)
            if (entry !== null) {
              if (parked) abandonPark(entry);
              leave(entry);
              wakeFirst(line, true);
            }
          } finally {
            if (token !== undefined) waitEnd(token, ended !== 'error' ? ended : endedAs(waiting, signal));
          }
        }
      }
    }
    if (!run) {
      try {
        return releaserOf(semaphore, stake, n);
      } catch (_) {
        // Out of stack (a take at once, deep in a caller's stack): once
        // more from the bottom of the stack, after an await (of a
        // non-promise: it calls nothing). A give-back here could fail too.
        await undefined;
        return releaserOf(semaphore, stake, n);
      }
    }
    try {
      const result = f();
      // Possibly a promise or thenable: hold the permits until it settles.
      if (result !== null && (typeof result === 'object' || typeof result === 'function')) return await result;
      return result;
    } finally {
      const before = stake[kHeld];
      try {
        give(i32a, index, stake, n);
      } catch (error) {
        if (stake[kHeld] !== before) throw error; // given back; its wake-up is owed (see give)
        // Still held: out of stack before anything changed (f returned near
        // the limit). Once more from the bottom of the stack.
        await undefined;
        give(i32a, index, stake, n);
      }
    }
  }

  /**
   * Permits in three Int32 slots of a SharedArrayBuffer, taken and given
   * back n at a time, by worker_threads and the main thread: every thread
   * builds its own instance over the same slots (`Semaphore.from`).
   */
  class Semaphore {
    #stake; // Int32Array(4): permits held, waits announced, the total, a wake-up owed (see above)
    #line = newLine(); // the instance's async takes that wait their turn (lib/line.js)

    /**
     * `new Semaphore(permits)` (a fresh 12-byte SharedArrayBuffer), `new
     * Semaphore(permits, sab)`, `new Semaphore(permits, sab, index)` or
     * `new Semaphore(permits, int32Array, index)` (three Int32s from
     * `index`): writes `permits` free of `permits`. A thread that is handed
     * a semaphore attaches with `Semaphore.from(posted)`, which writes
     * nothing.
     *
     * @param {number} permits an integer from 0 to 2^31 - 1
     * @param {SharedArrayBuffer | Int32Array} [sab]
     * @param {number} [index=0]
     */
    constructor(permits, sab, index, options) {
      requireStakeWatch(stakeWatch, 'Semaphore');
      let name;
      [sab, index, name] = slotOptions(sab, index, options);
      if (permits !== kAttach) validateCount(permits, 'permits', kMaxPermits);
      const slot = int32Slot(sab, index, 0, Semaphore.BYTES, 3);
      /** The SharedArrayBuffer. */
      this.sab = slot.sab;
      /** The Int32Array the semaphore lives in. */
      this.i32a = slot.i32a;
      /** The index of its first Int32 (the free permits) in `i32a`. */
      this.index = slot.index;
      /** The name given at construction (or by the posted instance), for query() and util.inspect; only if given. */
      if (name !== undefined) this.name = name;
      if (permits !== kAttach) {
        Atomics.store(this.i32a, this.index + 2, permits);
        Atomics.store(this.i32a, this.index + 1, 0);
        Atomics.store(this.i32a, this.index, permits);
      }
      // Should this thread end holding permits, its teardown gives them back.
      const stake = watchStake(stakeWatch, this.i32a, this.index, kSemaphoreStake, 4, this, kLabel.Semaphore, name);
      stake[kTotal] = Atomics.load(this.i32a, this.index + 2);
      this.#stake = stake;
    }

    /**
     * A Semaphore over the slots of one posted to this thread (`{ sab,
     * i32a, index }`, the structured clone of an instance), or of a
     * hand-made `{ sab, index }` / `{ i32a, index }`. Writes nothing; the
     * new instance holds no permits.
     */
    static from(value, options) {
      return new Semaphore(kAttach, ...fromPosted(value, 'a Semaphore', options));
    }

    /** The permits free now (a snapshot). */
    get available() {
      stakeOf(this);
      return Atomics.load(this.i32a, this.index);
    }

    /** The permits the semaphore was made with. */
    get permits() {
      return stakeOf(this)[kTotal];
    }

    /** The permits this instance holds now. */
    get held() {
      return stakeOf(this)[kHeld];
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
      n = validatePermits(this, stake, n);
      return take(this.i32a, this.index, stake, n);
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
      n = validatePermits(this, stake, n);
      const ms = timeout === undefined ? Infinity : validateTimeout(timeout, 'timeout');
      const { i32a, index } = this;
      return take(i32a, index, stake, n) || acquireSlow(this, i32a, index, stake, n, ms);
    }

    /**
     * `acquireSync(n, timeout)` that returns a release function (for
     * `using`), or throws ERR_SEMAPHORE_TIMEOUT.
     *
     * @param {number} [n=1]
     * @param {number} [timeout=Infinity]
     * @returns {() => void}
     */
    acquireGuard(n, timeout) {
      const stake = stakeOf(this);
      n = validatePermits(this, stake, n);
      if (!this.acquireSync(n, timeout)) throw timeoutError(timeout);
      return releaserOf(this, stake, n);
    }

    /**
     * Takes `n` permits (default 1) without blocking: resolves with a
     * release function (idempotent; `[Symbol.dispose]` where the runtime
     * has it; `permits` says how many it gives back). Rejects with
     * ERR_SEMAPHORE_TIMEOUT after `options.timeout` ms, or with
     * `options.signal`'s reason, leaving nothing queued and nothing taken.
     *
     * @param {number} [n=1]
     * @param {{ timeout?: number, signal?: AbortSignal }} [options]
     * @returns {Promise<() => void>}
     */
    acquire(n, options) {
      // Traced (lib/diagnostics.js) when anyone listens: one check else.
      if (kind.acquire && tracing(kind, 'acquire')) return traced(kind, 'acquire', this, 'acquire', permitsAsked(n), acquireIn, this, n, options, undefined, false);
      return acquireIn(this, n, options, undefined, false);
    }

    /**
     * Runs `f` holding `n` permits (default 1), without blocking; resolves
     * with f's result (f may be async) and gives the permits back however f
     * ends. Options and errors as acquire().
     *
     * @template T
     * @param {() => T | PromiseLike<T>} f
     * @param {number} [n=1]
     * @param {{ timeout?: number, signal?: AbortSignal }} [options]
     * @returns {Promise<T>}
     */
    runExclusive(f, n, options) {
      if (kind.run && tracing(kind, 'run')) return traced(kind, 'run', this, 'runExclusive', permitsAsked(n), acquireIn, this, n, options, f, true);
      return acquireIn(this, n, options, f, true);
    }

    /**
     * Gives back `n` permits (default 1) this instance holds and wakes the
     * waiters. Throws ERR_SEMAPHORE_NOT_HELD, giving back nothing, if it
     * holds fewer: permits go back through the instance that took them.
     *
     * @param {number} [n=1]
     */
    release(n) {
      const stake = stakeOf(this);
      n = validatePermits(this, stake, n);
      give(this.i32a, this.index, stake, n);
    }

    // Read `#stake` and `#line` for the functions above; taken off the class below.
    static stakeIfSemaphore(semaphore) {
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
  stakeIfSemaphore = Semaphore.stakeIfSemaphore;
  lineOf = Semaphore.lineOf;
  delete Semaphore.stakeIfSemaphore;
  delete Semaphore.lineOf;

  /** The bytes of SharedArrayBuffer a semaphore takes (three Int32s). */
  Semaphore.BYTES = 12;

  return Semaphore;
}

module.exports = { createSemaphore };
