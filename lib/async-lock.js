'use strict';
// AsyncLock: the mutex of the V8 blog post "Atomics.wait, Atomics.notify,
// Atomics.waitAsync" (lock / unlock / executeLocked on one Int32 slot of a
// SharedArrayBuffer), with the three-state protocol of Ulrich Drepper's
// "Futexes Are Tricky" (mutex3), so that an uncontended lock/unlock is one
// Atomics.compareExchange each and makes no native call; and robust: the
// word names the thread that holds it, so that when that thread ends
// holding it, its teardown frees it (src/robust.rs, src/napi/env.rs
// `release_held`) and the next holder learns that it was abandoned.
//
// The state word, i32a[index] (src/robust.rs; `me` is this thread's owner
// id << 1: its worker_threads threadId + 1, claimed through the binding's
// lockOwner, the same for every lock and every copy of the package):
//
//   value     name       meaning                           who moves it
//   --------  ---------  --------------------------------  ----------------------------------------
//   0         UNLOCKED   free                              lock/tryLock: CAS 0→me (fast path);
//                                                          a waiter: CAS 0→me|1 (claim)
//   1         ABANDONED  free; its holder's thread ended   the ending thread's teardown: held→1,
//                        holding it; threads may be        then notify(1) if it said WAITERS;
//                        queued                            any taker: CAS 1→me|1, and learns it
//   me        held       held by this thread, nobody       unlock: CAS me→0, no notify;
//                        queued                            a thread that must wait: CAS me→me|1
//   me|1      contended  held, threads may be queued       unlock: me|1→0, then notify(1), one
//                                                          native call (releaseLock); waiters wait
//                                                          on the value me|1
//
// No wake-up is lost: a thread queues only through wait/waitAsync with the
// expected value owner|1, after seeing or storing that value itself, so the
// holder's unlock (or its teardown) sees the WAITERS bit and notifies; and a
// waiter takes a free word as me|1, never me, so the queue it may leave
// behind is still announced by the word. That costs one spare notify at
// most, never a lost one. tests/loom_robust.rs model-checks these steps.
//
// It waits and wakes only through the package's own wait / waitAsync /
// notify and the binding's releaseLock (handed to the factory), never
// through the global Atomics ones, so every thread agrees on one waiter
// queue, on every runtime (Node 14 lacks Atomics.waitAsync; native waiters
// would not see ours).

const { performance } = require('perf_hooks');
const { threadId } = require('worker_threads');
const { describe } = require('./describe');
const {
  int32Slot,
  fromPosted,
  ours,
  reflectDefineProperty,
  symbolDispose,
  symbolAsyncDispose,
  validateTimeout,
  validateOptions,
  abortReason,
} = require('./core');

// A release function's own `then` (see makeReleaser).
const kNoThen = { __proto__: null, value: undefined };

const UNLOCKED = 0;
const ABANDONED = 1;
const WAITERS = 1;
// The top bit of a held word: a waiter has waited kFairAfter ms or more, so
// the next release hands the lock over (src/robust.rs): it leaves HANDED,
// which only a waiter that release woke may take, or any waiter that has
// seen it for kGrace ms (should the woken one never come).
const FAIR = 1 << 31;
const HANDED = FAIR | 1;
const kFairAfter = 0.5;
const kGrace = 2;
// The owner bits of a word.
const OWNER = 0x7ffffffe;
// The post's statics, kept for code that reads them; the word no longer
// holds them (see above).
const LOCKED = 1;
const CONTENDED = 2;

/** Whether a word says the lock is free (UNLOCKED or ABANDONED). */
const isFree = (word) => word === UNLOCKED || word === ABANDONED;
/** Whether nobody holds the lock (free, or HANDED to a waiter about to take it). */
const isUnheld = (word) => isFree(word) || word === HANDED;

// The binding's releaseLock answers below this (the old value minus 2^32)
// when it freed the word but could not deliver the wake-up: a thread of the
// addon delivers it later; and below kOwed (minus 2^33) when none could,
// and the caller must pass it on.
const kLater = -(2 ** 31);
const kOwed = -(2 ** 32) - 2 ** 31;

// How many times a blocking lock() re-reads a held word before it queues.
// A critical section of a few hundred nanoseconds ends while we look, and
// taking the lock then costs neither a wait nor the holder's notify.
const kSpins = 100;

// Whether an instance holds the lock: `{ held }`, one per instance, kept
// in a private field (see createAsyncLock's `stateOf`): Object.freeze
// leaves it writable (an own property would make the write after a
// successful compareExchange throw and leave the lock taken by nobody),
// postMessage does not copy it, and neither a copy nor a Proxy can pass
// for an instance. It holds an object, so that each method reads it once,
// at its start, before the word changes: from then on it is a plain
// property write, no call (near the stack limit any call can throw). A
// WeakMap did the same for 83 more instructions per look-up.

function timeoutError(ms) {
  const error = new Error(`Timed out after ${ms} ms waiting for the AsyncLock`);
  error.code = 'ERR_ASYNC_LOCK_TIMEOUT';
  return error;
}

function deadlockError() {
  const error = new Error('This AsyncLock is already held by this thread: lock() would wait forever');
  error.code = 'ERR_ASYNC_LOCK_DEADLOCK';
  return error;
}

function notHeldError() {
  // The post's message, so code that matched on it keeps working.
  const error = new Error('Tried to unlock while not holding the mutex');
  error.code = 'ERR_ASYNC_LOCK_NOT_HELD';
  return error;
}

/**
 * Creates the AsyncLock class over `{ wait, waitAsync, notify }`, with the
 * semantics of Atomics.wait / waitAsync / notify, and `releaseLock`, the
 * binding's "free the word and notify" (src/napi/mod.rs `release_lock`):
 * the package's own, or wrappers of them in tests.
 */
function createAsyncLock({ wait, waitAsync, notify, releaseLock, lockOwner, lockWatch }) {
  // This thread's owner id << 1 (see above): asked of the binding when the
  // first lock is made, the same for every lock of the thread after.
  let me = 0;
  // How many async waits (lockedAsync) of this thread are queued now. While
  // any is, a HANDED word may be meant for one of them, which cannot run
  // while this thread spins or blocks: this thread's tryLock and lock()
  // take a HANDED word then, and its releases do not hand over.
  let asyncWaiting = 0;

  // The private `#state` of an AsyncLock of this factory, or undefined
  // (set below, from inside the class body).
  let stateIfLock;

  /** The held state of an AsyncLock of this factory; a TypeError for anything else. */
  function stateOf(lock) {
    const state = stateIfLock(lock);
    if (state === undefined) {
      throw new TypeError(`The "this" value must be an AsyncLock. Received ${describe(lock)}`);
    }
    return state;
  }

  /**
   * Takes the lock if it is free (UNLOCKED → me, or ABANDONED → me|1),
   * marking `mine` its holder; returns whether it did.
   */
  function takeFree(i32a, index, mine) {
    if (Atomics.compareExchange(i32a, index, UNLOCKED, me) === UNLOCKED) {
      mine.held = true;
      mine.abandoned = false;
      return true;
    }
    const seen = Atomics.compareExchange(i32a, index, ABANDONED, me | WAITERS);
    if (seen === ABANDONED) {
      mine.held = true;
      mine.abandoned = true;
      return true;
    }
    if (seen !== HANDED || asyncWaiting === 0 ||
        Atomics.compareExchange(i32a, index, HANDED, me | WAITERS) !== HANDED) {
      return false;
    }
    mine.held = true;
    mine.abandoned = false;
    return true;
  }

  /**
   * How a waiting thread's wait has gone so far, for claim: `woken`, its
   * last wait ended in a wake-up; `since`, when it first waited (0 before);
   * `handedAt`, when it first saw the word HANDED to another (0 if not).
   */
  function waitState() {
    return { woken: false, since: 0, handedAt: 0 };
  }

  /**
   * One look at a held or free word by a thread that waits for it (or is
   * about to): takes it if free, as me|1 (others may be queued), marking
   * `mine` its holder, and returns 0; else makes sure the word says
   * WAITERS, and FAIR once this thread has waited kFairAfter ms, and
   * returns the value to wait on (never 0). A HANDED word is taken only by
   * a thread that a wake-up just ended the wait of (the one the release
   * woke, or one it passed its wake-up on to), or by one that has seen it
   * HANDED for kGrace ms; others wait on it, kGrace ms at most.
   */
  function claim(i32a, index, mine, w) {
    for (;;) {
      const seen = Atomics.load(i32a, index);
      if (seen === HANDED && !w.woken && asyncWaiting === 0) {
        const now = performance.now();
        if (w.handedAt === 0) w.handedAt = now;
        if (now - w.handedAt < kGrace) return HANDED;
      } else if (seen !== HANDED) {
        w.handedAt = 0; // a later hand-over gets its own grace period
      }
      if (isFree(seen) || seen === HANDED) {
        if (Atomics.compareExchange(i32a, index, seen, me | WAITERS) === seen) {
          mine.held = true;
          mine.abandoned = seen === ABANDONED;
          return 0;
        }
        continue;
      }
      let want = seen | WAITERS;
      if (w.since !== 0 && (seen & FAIR) === 0 && performance.now() - w.since >= kFairAfter) want |= FAIR;
      if (want === seen || Atomics.compareExchange(i32a, index, seen, want) === seen) return want;
    }
  }

  /** How long a wait on `expected` may last, within `remaining` ms. */
  const waitFor = (expected, remaining) => (expected === HANDED && remaining > kGrace ? kGrace : remaining);

  /**
   * Delivers the wake-up of an unlock (count 1) or forceUnlock (Infinity)
   * whose notify failed other than out of stack, with the lock released:
   * tried again from a timer, backing off to once a second, until a notify
   * returns (whether it found the waiter or not). Until then the waiter
   * sleeps, but not for good. For its first ten tries (about a second) the
   * timer keeps this thread alive (the waiter may be another thread's,
   * whose wait does not keep this one's event loop going: a worker that
   * exits right after its unlock would take the wake-up with it); after
   * that it does not, so that a notify that always fails cannot keep a
   * process alive for good (and a thread that then exits loses it).
   */
  function notifyLater(i32a, index, count, delay) {
    const timer = setTimeout(() => {
      try {
        notify(i32a, index, count);
      } catch (_) {
        notifyLater(i32a, index, count, Math.min(1000, delay * 2 + 1));
      }
    }, delay);
    if (delay >= 512 && timer !== null && typeof timer === 'object' && typeof timer.unref === 'function') timer.unref();
  }

  /**
   * A wake-up this thread owes the word's waiters: notified now, or, if
   * that fails (a panic in the addon; not the stack: callers are at the
   * bottom of theirs or have already failed for another reason), from a
   * timer (notifyLater). Throws only if even the timer cannot be set.
   */
  function passOn(i32a, index, count) {
    try {
      // A release's hand-over (HANDED) that finds nobody else to take it
      // is free for anyone (and a waiter that came meanwhile is told).
      if (notify(i32a, index, count) === 0 &&
          Atomics.compareExchange(i32a, index, HANDED, UNLOCKED) === HANDED) {
        notify(i32a, index, 1);
      }
    } catch (_) {
      notifyLater(i32a, index, count, 0);
    }
  }

  /**
   * A release function (idempotent, like async-mutex's), disposable where
   * the runtime can. Its own `then` is undefined: acquire() resolves with
   * it, and resolving with a function looks up its `then`, which must not
   * reach a Function.prototype.then or Object.prototype.then.
   */
  function makeReleaser(lock) {
    let released = false;
    const mine = stateOf(lock);
    const abandoned = mine.abandoned;
    const release = () => {
      if (released) return;
      try {
        unlockHeld(lock, mine);
      } catch (error) {
        // Out of stack, the lock is still held: a retry unlocks. Any other
        // failure released it (its wake-up is on its way): spent, so that a
        // retry cannot free a later hold of this instance.
        if (!mine.held) released = true;
        throw error;
      }
      released = true;
    };
    reflectDefineProperty(release, 'then', kNoThen);
    // Whether this hold was inherited from a thread that ended holding it.
    reflectDefineProperty(release, 'abandoned', { __proto__: null, value: abandoned, enumerable: true });
    // Defined, not assigned: an assignment would run a setter that a
    // program put on Function.prototype or Object.prototype. (The
    // attributes an assignment gives.)
    if (symbolDispose) {
      reflectDefineProperty(release, symbolDispose, {
        __proto__: null,
        value: release,
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    if (symbolAsyncDispose) {
      reflectDefineProperty(release, symbolAsyncDispose, {
        __proto__: null,
        value: async () => {
          release();
        },
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    return release;
  }

  /**
   * The blocking part of lock(): spin a little, then mark the word
   * contended and wait on it until a claim finds it free. Marks `mine` the
   * holder when it takes the lock.
   */
  function lockSlow(i32a, index, ms, mine) {
    for (let i = 0; i < kSpins; i++) {
      if (isFree(Atomics.load(i32a, index)) && takeFree(i32a, index, mine)) return true;
    }
    if (ms === 0) return false;
    const deadline = ms === Infinity ? Infinity : performance.now() + ms;
    const w = waitState();
    for (;;) {
      const expected = claim(i32a, index, mine, w);
      if (expected === 0) return true;
      // Held by this very thread (another instance): no wait could end.
      if (ms === Infinity && (expected & OWNER) === me) throw deadlockError();
      let remaining = Infinity;
      if (deadline !== Infinity) {
        remaining = deadline - performance.now();
        if (remaining <= 0) return false; // the word keeps WAITERS: one spare notify later
      }
      if (w.since === 0) w.since = performance.now();
      w.woken = wait(i32a, index, expected, waitFor(expected, remaining)) === 'ok';
    }
  }

  // What lockedAsync does once it may go on.
  const kExecute = 0; // executeLocked: run f holding the lock
  const kAcquire = 1; // acquire: resolve with a release function
  const kWaitForUnlock = 2; // waitForUnlock: see the lock free, do not take it

  /**
   * executeLocked, acquire and waitForUnlock, in one async frame from the
   * call to the end. Its only awaits are on waitAsync promises and on f's
   * result, never on a promise of another frame of the lock's: where
   * %Promise% could not be found, every await calls the program's
   * %Promise.prototype.then%, which may throw, and an await of an inner
   * frame that failed so left that frame running on, to take the lock
   * after the caller's promise had rejected, for nobody. Here a failed await
   * is this frame's own exception, and its `finally` releases the lock
   * whenever `holding` says it took it. Rejects with a timeout or the
   * signal's reason only once nothing of it is left queued.
   */
  async function lockedAsync(lock, op, f, options) {
    if (op === kExecute && typeof f !== 'function') {
      throw new TypeError(`The "f" argument must be a function. Received ${describe(f)}`);
    }
    const { timeout, signal } = validateOptions(options);
    if (signal && signal.aborted) throw abortReason(signal);
    const { i32a, index } = lock;
    const mine = stateOf(lock);
    let holding = false; // this frame took the lock and has not handed it on
    try {
      let free;
      if (op === kWaitForUnlock) {
        free = isUnheld(Atomics.load(i32a, index));
      } else {
        // Free: taken here, so f runs before the first await.
        free = holding = takeFree(i32a, index, mine);
      }
      if (!free) {
        if (timeout === 0) throw timeoutError(0);
        const deadline = timeout === Infinity ? Infinity : performance.now() + timeout;
        let queued = false; // one waitAsync of ours is pending
        let aborted = false;
        let flushed = false; // the abort's notify returned
        let onAbort = null;
        if (signal) {
          onAbort = () => {
            aborted = true;
            // No waitAsync can be cancelled, so flush ours out of the queue
            // by waking every waiter of the word: the others see it held or
            // free again and re-queue or take the lock (a spurious wake-up, never
            // a lost one; and a wake-up we took from an unlock is passed on
            // the same way). We reject once ours has settled, leaving
            // nothing behind. Should this notify throw (near the stack
            // limit), ours stays queued until an unlock wakes it: the loop
            // below then passes that wake-up on.
            try {
              if (queued) notify(i32a, index, Infinity);
              flushed = true;
            } catch (_) {
              // (an exception here would be the signal's uncaught one)
            }
          };
          signal.addEventListener('abort', onAbort);
        }
        try {
          let woken = false; // our last wait ended in a wake-up ('ok')
          const w = waitState();
          for (;;) {
            if (aborted) {
              // Woken, but not by our own flush (it threw): the wake-up was
              // an unlock's, meant for a thread that wants the lock. (After
              // a flush, a hand-over to us goes on the same way.)
              if (woken && (!flushed || Atomics.load(i32a, index) === HANDED)) passOn(i32a, index, 1);
              throw abortReason(signal);
            }
            let expected;
            if (op === kWaitForUnlock) {
              const state = Atomics.load(i32a, index);
              if (isFree(state) || state === HANDED) {
                // A wake-up we took was meant for a thread that wants the
                // lock: pass it on, as we leave without taking it.
                if (woken) passOn(i32a, index, 1);
                break;
              }
              // Held: make sure the word says WAITERS before waiting on it.
              expected = state | WAITERS;
              if (state !== expected && Atomics.compareExchange(i32a, index, state, expected) !== state) continue;
            } else {
              w.woken = woken;
              expected = claim(i32a, index, mine, w);
              if (expected === 0) {
                holding = true;
                break;
              }
            }
            let remaining = Infinity;
            if (deadline !== Infinity) {
              remaining = deadline - performance.now();
              if (remaining <= 0) throw timeoutError(timeout); // the word keeps WAITERS: one spare notify later
            }
            if (w.since === 0) w.since = performance.now();
            const result = waitAsync(i32a, index, expected, waitFor(expected, remaining));
            woken = false; // 'not-equal': the word changed, look again
            if (result.async) {
              queued = true;
              asyncWaiting++;
              let outcome;
              try {
                outcome = await ours(result.value);
              } catch (error) {
                // Only where %Promise% was not found (a `then` that threw),
                // or out of stack: ours may still be queued with nobody to
                // see its wake-up. Flush it out (as an abort does), give up.
                queued = false;
                asyncWaiting--;
                passOn(i32a, index, Infinity);
                throw error;
              }
              queued = false;
              asyncWaiting--;
              woken = outcome === 'ok';
            }
          }
        } finally {
          // (Should this throw after a take, the outer finally gives the lock back.)
          if (onAbort) signal.removeEventListener('abort', onAbort);
        }
      }
      if (op === kWaitForUnlock) return undefined;
      if (op === kAcquire) {
        const release = makeReleaser(lock);
        holding = false; // the release function's now
        return release;
      }
      const result = f();
      // Possibly a promise or thenable: hold the lock until it settles.
      if (result !== null && (typeof result === 'object' || typeof result === 'function')) return await result;
      return result;
    } finally {
      if (holding) {
        try {
          unlockHeld(lock, mine); // an unlock error (misuse: f unlocked) wins over f's outcome
        } catch (error) {
          if (!mine.held) throw error;
          // Still held: unlock() threw out of stack (f returned near the
          // limit; any other failure leaves it released). Once more from
          // the bottom of the stack, after an await (of a non-promise: it
          // calls nothing).
          await undefined;
          unlockHeld(lock, mine);
        }
      }
    }
  }

  /**
   * unlock() of `lock`, whose held state is `mine` (see AsyncLock#unlock).
   * Near the stack limit any step can throw (a property load, an Atomics
   * call, a call): a throw leaves either the lock still held by this
   * instance (the caller can retry) or released with its wake-up passed
   * on, never a free word with a waiter asleep on it. Up to the
   * compareExchange nothing has changed; kept small, so that it is inlined
   * into executeLocked's fast path.
   */
  function unlockHeld(lock, mine) {
    if (!mine.held) throw notHeldError();
    const state = Atomics.compareExchange(lock.i32a, lock.index, me, UNLOCKED);
    if ((state & ~FAIR) === (me | WAITERS)) {
      unlockContended(lock, mine, state);
      return;
    }
    mine.held = false;
    if (state !== me) throw notHeldError(); // the word was reset by forceUnlock() meanwhile
  }

  /**
   * unlockHeld, on a word found contended (me|1): frees it and wakes one
   * waiter (releaseWord).
   */
  function unlockContended(lock, mine, held) {
    // This thread's own async waiters cannot take a hand-over before it
    // yields: none then (FAIR off the word first; only a waiter's FAIR or
    // WAITERS could change it, and both are set).
    if (asyncWaiting > 0 && (held & FAIR) !== 0 &&
        Atomics.compareExchange(lock.i32a, lock.index, held, held & ~FAIR) === held) {
      held &= ~FAIR;
    }
    // (A waiter may have set FAIR meanwhile: still ours.)
    if ((releaseWord(lock.i32a, lock.index, mine, false, held) & ~FAIR) !== (held & ~FAIR)) {
      throw notHeldError(); // the word was reset by forceUnlock() meanwhile
    }
  }

  /**
   * Frees the word and wakes one waiter (`all` false: unlock() of a word
   * seen contended, me|1 → 0) or every waiter (`all` true: forceUnlock(), → 0),
   * both in the binding's releaseLock, one native call, and returns what
   * the word held. A throw from releaseLock (out of stack, at its entry)
   * has changed nothing: the lock is still held and the caller can retry.
   * In JS, the notify after the exchange could throw near the stack
   * limit, and so could any step meant to undo the exchange: the word
   * left free with its waiter asleep.
   *
   * If its notify failed twice (a panic in the addon, which would come
   * again on a retry, and which executeLocked's caller could not retry at
   * all), the word is free all the same, and this throws: a thread of the
   * addon retries the wake-up, or, where it could not start one, it is
   * passed on from here (now, or from a timer). (Known gap in that last
   * case only: should this also run out of stack before the timer is set,
   * the wake-up is lost.)
   */
  function releaseWord(i32a, index, mine, all, expected) {
    const held = releaseLock(i32a, index, all, all ? 0 : expected);
    mine.held = false;
    if (held < kLater) {
      if (held < kOwed) passOn(i32a, index, all ? Infinity : 1);
      throw new Error('atomics-waitasync: internal error (panic in the addon): the lock was released; its wake-up is retried');
    }
    return held;
  }

  /**
   * executeLocked on a lock seen free (its fast path): takes it, runs f and
   * releases it however f ends, as lockedAsync does, in one frame. The
   * take is this frame's first step: should the frame fail to start (out
   * of stack), the call throws having taken nothing. Should another thread
   * take the lock first, it waits as lockedAsync does, which it becomes.
   */
  async function runFree(lock, mine, f) {
    if (Atomics.compareExchange(lock.i32a, lock.index, UNLOCKED, me) !== UNLOCKED) {
      // (Rare.) Waits as the general path does, in lockedAsync's frame,
      // awaited as the lock awaits its waitAsync promises (ours: no
      // `then` of the program's is called where %Promise% was found).
      const waiting = lockedAsync(lock, kExecute, f, undefined); // runs f and releases, whatever comes of this frame
      try {
        ours(waiting);
      } catch (_) {
        // Out of stack: again from the bottom of the stack, after an await
        // (awaited as it is, its `then` looked up, it would go through a
        // program's Promise.prototype.then). Should that fail too, it is
        // awaited as it is: this frame must not reject while f still runs.
        await undefined;
        try {
          ours(waiting);
        } catch (_) {}
      }
      return await waiting;
    }
    mine.held = true;
    mine.abandoned = false;
    let result;
    let failed = false; // f threw or rejected, with `result` its error
    try {
      result = f();
      if (result !== null && (typeof result === 'object' || typeof result === 'function')) result = await result;
    } catch (error) {
      failed = true;
      result = error;
    }
    // Released however f ended (a try/finally costs 12 instructions more).
    // An unlock that threw with the lock released wins over f's outcome.
    try {
      unlockHeld(lock, mine);
    } catch (unlockError) {
      if (!mine.held) throw unlockError;
      await undefined; // as in lockedAsync
      unlockHeld(lock, mine);
    }
    if (failed) throw result;
    return result;
  }

  /**
   * A mutex in one Int32 slot of a SharedArrayBuffer, for worker_threads and
   * the main thread: `lock()` blocks, `executeLocked(f)` / `acquire()` never
   * block. Every thread builds its own instance over the same slot.
   */
  class AsyncLock {
    #state; // { held }: whether this instance holds the lock (see stateOf)

    /**
     * `new AsyncLock(sab)`: the lock is `new Int32Array(sab)[AsyncLock.INDEX]`.
     * `new AsyncLock(int32Array, index)` or `new AsyncLock(sab, index)`: any
     * slot, so many locks can share one buffer. `new AsyncLock()`: a fresh
     * 4-byte SharedArrayBuffer. The slot must start at 0 (UNLOCKED).
     *
     * @param {SharedArrayBuffer | Int32Array} [sab]
     * @param {number} [index=AsyncLock.INDEX]
     */
    constructor(sab, index) {
      if (typeof releaseLock !== 'function') {
        // A binary older than this file (its contended unlock would fail
        // with the lock held): no lock, rather than one that cannot be
        // released. waitAsync, wait and notify still work.
        throw new Error('atomics-waitasync: the loaded binary has no releaseLock: AsyncLock needs a binary of this version (npx atomics-waitasync-build)');
      }
      if (typeof lockWatch !== 'function') {
        // A binary older than this file: no lock that stays held for good
        // when its holder's thread ends.
        throw new Error('atomics-waitasync: the loaded binary has no lockWatch: AsyncLock needs a binary of this version (npx atomics-waitasync-build)');
      }
      const slot = int32Slot(sab, index, AsyncLock.INDEX, 4);
      sab = slot.sab;
      const i32a = slot.i32a;
      index = slot.index;
      /** The SharedArrayBuffer (as in the post). */
      this.sab = sab;
      /** The Int32Array the state word lives in (as in the post). */
      this.i32a = i32a;
      /** The state word's index in `i32a`. */
      this.index = index;
      this.#state = { held: false, abandoned: false };
      if (me === 0) me = lockOwner(threadId) * 2;
      // Should this thread end holding the lock, its teardown frees it.
      lockWatch(i32a, index, this);
    }

    /**
     * Rebuilds a lock in another thread from an AsyncLock posted to it (the
     * structured clone of an instance is a plain `{ sab, i32a, index }`), or
     * from any `{ i32a, index }` / `{ sab, index }` object. The new instance
     * shares the slot and does not hold the lock.
     *
     *   worker.postMessage({ lock });           // main thread
     *   const lock = AsyncLock.from(msg.lock);  // worker
     */
    static from(value) {
      return new AsyncLock(...fromPosted(value, 'an AsyncLock'));
    }

    /**
     * Takes the lock, blocking this thread while another holds it (workers,
     * and Node's main thread, which may block). With `timeout` (ms), gives
     * up after it and returns false. Not reentrant: throws
     * ERR_ASYNC_LOCK_DEADLOCK if this instance already holds the lock.
     *
     * @param {number} [timeout=Infinity]
     * @returns {boolean} whether it took the lock
     */
    lock(timeout) {
      const ms = timeout === undefined ? Infinity : validateTimeout(timeout, 'timeout');
      const mine = stateOf(this);
      if (mine.held) throw deadlockError();
      const i32a = this.i32a;
      const index = this.index;
      if (Atomics.compareExchange(i32a, index, UNLOCKED, me) === UNLOCKED) {
        mine.held = true;
        mine.abandoned = false;
        return true;
      }
      return lockSlow(i32a, index, ms, mine);
    }

    /** Takes the lock if it is free, without waiting; returns whether it did. */
    tryLock() {
      const mine = stateOf(this);
      return takeFree(this.i32a, this.index, mine);
    }

    /**
     * Releases the lock; wakes one waiter only when the word says someone
     * may wait (2). Throws ERR_ASYNC_LOCK_NOT_HELD, with the post's message,
     * when this instance does not hold it (it never frees another thread's
     * lock).
     */
    unlock() {
      unlockHeld(this, stateOf(this));
    }

    /** `unlock()` under async-mutex's name (through the instance: a subclass's unlock). */
    release() {
      stateOf(this); // a copy has no unlock(): the TypeError that says why
      this.unlock();
    }

    /** Whether any thread holds the lock now (a snapshot). */
    isLocked() {
      return !isUnheld(Atomics.load(this.i32a, this.index));
    }

    /**
     * The `threadId` (worker_threads) of the thread that holds the lock now,
     * or null if it is free (a snapshot, for debugging).
     *
     * @returns {number | null}
     */
    holder() {
      stateOf(this);
      const word = Atomics.load(this.i32a, this.index);
      return isFree(word) || word === HANDED ? null : ((word & OWNER) >>> 1) - 1;
    }

    /**
     * True while this instance holds the lock and took it from a thread
     * that ended holding it (terminated, process.exit(), an uncaught
     * exception, its script ending): what the lock guards may be half
     * updated. Only the first holder after that thread learns it; false
     * once it unlocks.
     *
     * @returns {boolean}
     */
    get abandoned() {
      const mine = stateOf(this);
      return mine.held && mine.abandoned;
    }

    /**
     * Runs `f` holding the lock, without ever blocking the thread; resolves
     * with f's result (f may be async) and always releases the lock first,
     * also when f throws or rejects, then rejects with f's error. If the lock
     * is free, f runs at once (before executeLocked returns), as in the post.
     * Bad arguments reject (TypeError/RangeError). It throws only when the
     * call itself cannot start, out of stack, and then has done nothing.
     * `options.timeout` (ms) and `options.signal` bound the wait for the
     * lock: ERR_ASYNC_LOCK_TIMEOUT, or the signal's reason; f does not run.
     *
     * @template T
     * @param {() => T | PromiseLike<T>} f
     * @param {{ timeout?: number, signal?: AbortSignal }} [options]
     * @returns {Promise<T>}
     */
    executeLocked(f, options) {
      // The common call, on a lock seen free: runFree takes it and runs f,
      // without lockedAsync's options and waiting; anything else, a bad
      // `this` included, takes the general path. The word is read plainly
      // here (a hint, ~110 instructions fewer than Atomics.load): runFree's
      // compareExchange decides.
      if (options === undefined && typeof f === 'function') {
        const mine = stateIfLock(this);
        if (mine !== undefined && this.i32a[this.index] === UNLOCKED) return runFree(this, mine, f);
      }
      return lockedAsync(this, kExecute, f, options);
    }

    /** `executeLocked(f, options)` under async-mutex's name. */
    runExclusive(f, options) {
      // (Not an AsyncLock, a copy that has no executeLocked: rejects, as executeLocked does.)
      if (stateIfLock(this) === undefined) return lockedAsync(this, kExecute, f, options);
      return this.executeLocked(f, options);
    }

    /**
     * Waits for the lock without blocking and resolves with a release
     * function (idempotent; also `[Symbol.dispose]`/`[Symbol.asyncDispose]`
     * where the runtime has them, for `using`). Rejects with
     * ERR_ASYNC_LOCK_TIMEOUT after `options.timeout` ms, or with the reason
     * of `options.signal`.
     *
     * @param {{ timeout?: number, signal?: AbortSignal }} [options]
     * @returns {Promise<() => void>}
     */
    acquire(options) {
      return lockedAsync(this, kAcquire, undefined, options);
    }

    /**
     * Blocking `lock(timeout)` that returns a release function for `using`
     * (`using guard = lock.lockGuard()`), or throws ERR_ASYNC_LOCK_TIMEOUT.
     *
     * @param {number} [timeout=Infinity]
     * @returns {() => void}
     */
    lockGuard(timeout) {
      stateOf(this); // a copy has no lock(): the TypeError that says why
      if (!this.lock(timeout)) throw timeoutError(timeout);
      try {
        return makeReleaser(this);
      } catch (error) {
        this.unlock(); // no release function: nobody else could unlock it
        throw error;
      }
    }

    /**
     * Resolves, without taking the lock, once it is seen free. Same options
     * and errors as acquire().
     *
     * @param {{ timeout?: number, signal?: AbortSignal }} [options]
     * @returns {Promise<void>}
     */
    waitForUnlock(options) {
      return lockedAsync(this, kWaitForUnlock, undefined, options);
    }

    /**
     * Recovery only: frees the lock whoever holds it (e.g. a worker that was
     * terminated while holding it, which can never unlock) and wakes every
     * waiter, so that they compete for it again. Returns whether it was
     * locked. Calling it while a live thread holds the lock breaks mutual
     * exclusion.
     *
     * @returns {boolean}
     */
    forceUnlock() {
      const mine = stateOf(this);
      return !isUnheld(releaseWord(this.i32a, this.index, mine, true));
    }

    // Reads `#state` for the functions above, which are outside the class
    // body; taken off the class below.
    static stateIfLock(lock) {
      try {
        return lock.#state;
      } catch (error) {
        if (error instanceof TypeError) return undefined; // not an AsyncLock of this class
        throw error; // (anything else is not an answer)
      }
    }
  }
  stateIfLock = AsyncLock.stateIfLock;
  delete AsyncLock.stateIfLock;
  heldStates.set(AsyncLock, stateIfLock);

  // Static constants, as in the post (plus the contended state).
  AsyncLock.INDEX = 0;
  AsyncLock.UNLOCKED = UNLOCKED;
  AsyncLock.LOCKED = LOCKED;
  AsyncLock.CONTENDED = CONTENDED;
  /** The word of a free lock whose last holder's thread ended holding it. */
  AsyncLock.ABANDONED = ABANDONED;
  /** The bytes of SharedArrayBuffer a lock takes. */
  AsyncLock.BYTES = 4;

  return AsyncLock;
}

// What the other primitives of this package may know of an AsyncLock class
// of createAsyncLock: its function from an instance to the instance's
// `{ held, abandoned }` (undefined for anything else), see `stateOf`.
const heldStates = new WeakMap();

/** The held-state reader of an AsyncLock class made here (see heldStates). */
function heldStateReader(AsyncLockClass) {
  const reader = heldStates.get(AsyncLockClass);
  if (reader === undefined) throw new TypeError('not an AsyncLock class of this package');
  return reader;
}

module.exports = { createAsyncLock, heldStateReader, UNLOCKED, ABANDONED, WAITERS, LOCKED, CONTENDED };
