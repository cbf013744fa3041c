'use strict';
// An owned word: one Int32 of a SharedArrayBuffer that a thread takes and
// releases, naming the thread that holds it, so that when that thread ends
// holding it, its teardown frees it (src/robust.rs, src/napi/held.rs
// `release_all`) and the next holder learns that it was abandoned. The
// word protocol of AsyncLock (lib/async-lock.js), and of any primitive of
// the family whose hold is one thread's: the three-state protocol of
// Ulrich Drepper's "Futexes Are Tricky" (mutex3), so that an uncontended
// take and release is one Atomics.compareExchange each and makes no native
// call, with a fair hand-off after parking_lot's.
//
// The state word, i32a[index] (src/robust.rs; `me` is this thread's owner
// id << 1: its worker_threads threadId + 1, claimed through the binding's
// lockOwner, the same for every lock and every copy of the package):
//
//   value     name       meaning                           who moves it
//   --------  ---------  --------------------------------  ----------------------------------------
//   0         UNLOCKED   free                              take: CAS 0->me (fast path);
//                                                          a waiter: CAS 0->me|1 (claim)
//   1         ABANDONED  free; its holder's thread ended   the ending thread's teardown: held->1,
//                        holding it; threads may be        then notify(1) if it said WAITERS;
//                        queued                            any taker: CAS 1->me|1, and learns it
//   me        held       held by this thread, nobody       unlock: CAS me->0, no notify;
//                        queued                            a thread that must wait: CAS me->me|1
//   me|1      contended  held, threads may be queued       unlock: me|1->0, then notify(1), one
//                                                          native call (releaseLock); waiters wait
//                                                          on the value me|1
//   me|1|FAIR fair       contended, and a waiter has       unlock: ->HANDED, then notify(1)
//                        waited kFairAfter ms or more      (releaseLock); that waiter: CAS
//                                                          me|1->me|1|FAIR
//   FAIR|1    HANDED     free, but only for the waiter     it, or one that has seen it HANDED for
//                        the unlock woke (hand-over)       kGrace ms: CAS ->me|1; others wait on it,
//                                                          kGrace ms at most; woke nobody: ->0
//
// No wake-up is lost: a thread queues only through wait/waitAsync with the
// expected value owner|1 (FAIR or not), after seeing or storing that value
// itself, so the holder's unlock (or its teardown) sees the WAITERS bit and
// notifies; or on HANDED, for kGrace ms at most; and a waiter takes a free
// word as me|1, never me, so the queue it may leave behind is still
// announced by the word. That costs one spare notify at most, never a lost
// one. tests/loom_robust.rs model-checks these steps.
//
// What a thread's hold is, `mine`: `{ held, abandoned, instance, kind }`,
// one per instance of the primitive, which marks it as it takes and
// releases the word; `instance` and `kind` are what its waits and
// abandoned takes are reported as (lib/diagnostics.js).

const { codedError, deliver, spinTake, waitEnv, monotonicNow, threadId } = require('./core.js');
const { waitStart, waitEnd, abandoned } = require('./diagnostics.js');

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

// What a take of the word asks for (lib/diagnostics.js).
const kLock = Object.freeze({ lock: true });

const deadlockError = () =>
  codedError('This AsyncLock is already held by this thread: lock() would wait forever', 'ERR_ASYNC_LOCK_DEADLOCK');
// The post's message, so code that matched on it keeps working.
const notHeldError = () => codedError('Tried to unlock while not holding the mutex', 'ERR_ASYNC_LOCK_NOT_HELD');

/**
 * The owned-word protocol over the package's `{ wait, waitAsync, notify }`
 * and the binding's `releaseLock` (free the word and notify, one call) and
 * `lockOwner` (this thread's owner id), or wrappers of them in tests.
 */
function createOwnedWord({ wait, waitAsync, notify, releaseLock, lockOwner }) {
  // This thread's owner id << 1 (see above): asked of the binding when the
  // first word is made, the same for every word of the thread after.
  let me = 0;
  // The async waits on owned words (lib/core.js AsyncWait, through this
  // env): `env.queued.n` counts those this thread has queued now. While any is, a HANDED word
  // may be meant for one of them, which cannot run while this thread spins
  // or blocks: this thread's tryLock and lock() take a HANDED word then,
  // and its releases do not hand over.
  const env = waitEnv({ waitAsync, notify }, {
    passOn,
    // Woken, but not by our own flush (it threw): the wake-up was a
    // release's, meant for a thread that wants the lock. (After a flush, a
    // hand-over to us goes on the same way.)
    leave: (i32a, index, woken, flushed) => {
      if (woken && (!flushed || Atomics.load(i32a, index) === HANDED)) passOn(i32a, index, 1);
    },
  });

  /**
   * Takes the lock if it is free (UNLOCKED -> me, or ABANDONED -> me|1),
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
      // Reported (lib/diagnostics.js) in the middle of the take: should
      // that throw (out of stack), the report is lost, not the take.
      try {
        abandoned(mine.instance, mine.kind);
      } catch (_) {}
      return true;
    }
    if (seen !== HANDED || env.queued.n === 0 ||
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
      if (seen === HANDED && !w.woken && env.queued.n === 0) {
        const now = monotonicNow();
        if (w.handedAt === 0) w.handedAt = now;
        if (now - w.handedAt < kGrace) return HANDED;
      } else if (seen !== HANDED) {
        w.handedAt = 0; // a later hand-over gets its own grace period
      }
      if (isFree(seen) || seen === HANDED) {
        if (Atomics.compareExchange(i32a, index, seen, me | WAITERS) === seen) {
          mine.held = true;
          mine.abandoned = seen === ABANDONED;
          if (seen === ABANDONED) {
            try {
              abandoned(mine.instance, mine.kind); // (as in takeFree)
            } catch (_) {}
          }
          return 0;
        }
        continue;
      }
      let want = seen | WAITERS;
      if (w.since !== 0 && (seen & FAIR) === 0 && monotonicNow() - w.since >= kFairAfter) want |= FAIR;
      if (want === seen || Atomics.compareExchange(i32a, index, seen, want) === seen) return want;
    }
  }

  /** How long a wait on `expected` may last, within `remaining` ms. */
  const waitFor = (expected, remaining) => (expected === HANDED && remaining > kGrace ? kGrace : remaining);

  /**
   * A wake-up this thread owes the word's waiters (core's deliver: now, or
   * from a timer). A release's hand-over (HANDED) that finds nobody else to
   * take it is free for anyone (and a waiter that came meanwhile is told).
   */
  function passOn(i32a, index, count) {
    if (deliver(notify, i32a, index, count) === 0 &&
        Atomics.compareExchange(i32a, index, HANDED, UNLOCKED) === HANDED) {
      deliver(notify, i32a, index, 1);
    }
  }

  /** takeFree, after a look that the word is free (so that a spin mostly reads). */
  const takeSeenFree = (i32a, index, mine) => isFree(Atomics.load(i32a, index)) && takeFree(i32a, index, mine);

  /**
   * The blocking part of lock(), on a word its fast path did not take:
   * takes it if it is free after all (ABANDONED, say), else waits for it
   * (lockWait), reported as a wait (lib/diagnostics.js) unless `ms` is 0
   * (a try that spins). Marks `mine` the holder when it takes the lock.
   */
  function lockSlow(i32a, index, ms, mine) {
    if (ms === 0) return spinTake(takeSeenFree, i32a, index, mine);
    if (takeSeenFree(i32a, index, mine)) return true;
    // Before the spin and the WAITERS bit: should this throw, nothing is marked.
    const token = waitStart(mine.instance, mine.kind, kLock, true, ms !== Infinity, undefined, mine);
    let outcome = 'error';
    try {
      const took = lockWait(i32a, index, ms, mine);
      outcome = !took ? 'timeout' : mine.abandoned ? 'abandoned' : 'taken';
      return took;
    } finally {
      if (token !== undefined) waitEnd(token, outcome);
    }
  }

  /**
   * lockSlow's wait: spin a little (core's spinTake: a critical section of
   * a few microseconds ends meanwhile, and taking the lock then costs
   * neither a wait nor the holder's notify), then mark the word contended
   * and wait on it until a claim finds it free; false once `ms` (> 0) have
   * passed.
   */
  function lockWait(i32a, index, ms, mine) {
    if (spinTake(takeSeenFree, i32a, index, mine)) return true;
    const deadline = ms === Infinity ? Infinity : monotonicNow() + ms;
    const w = waitState();
    for (;;) {
      const expected = claim(i32a, index, mine, w);
      if (expected === 0) return true;
      // Held by this very thread (another instance): no wait could end.
      if (ms === Infinity && (expected & OWNER) === me) throw deadlockError();
      let remaining = Infinity;
      if (deadline !== Infinity) {
        remaining = deadline - monotonicNow();
        if (remaining <= 0) return false; // the word keeps WAITERS: one spare notify later
      }
      if (w.since === 0) w.since = monotonicNow();
      w.woken = wait(i32a, index, expected, waitFor(expected, remaining)) === 'ok';
    }
  }

  /**
   * Releases the word, held by this thread through `mine` (AsyncLock#unlock).
   * Near the stack limit any step can throw (a property load, an Atomics
   * call, a call): a throw leaves either the lock still held by this
   * instance (the caller can retry) or released with its wake-up passed
   * on, never a free word with a waiter asleep on it. Up to the
   * compareExchange nothing has changed; kept small, so that it is inlined
   * into executeLocked's fast path (one `throw` for both errors: 11 bytes
   * of TurboFan's budget, lib/async-lock.js runFree).
   */
  function unlockHeld(i32a, index, mine) {
    if (mine.held) {
      const state = Atomics.compareExchange(i32a, index, me, UNLOCKED);
      if ((state & ~FAIR) === (me | WAITERS)) {
        unlockContended(i32a, index, mine, state);
        return;
      }
      mine.held = false;
      if (state === me) return;
    }
    throw notHeldError(); // not held, or the word was reset by forceUnlock() meanwhile
  }

  /**
   * unlockHeld, on a word found contended (me|1): frees it and wakes one
   * waiter (releaseWord).
   */
  function unlockContended(i32a, index, mine, held) {
    // This thread's own async waiters cannot take a hand-over before it
    // yields: none then (FAIR off the word first; only a waiter's FAIR or
    // WAITERS could change it, and both are set).
    if (env.queued.n > 0 && (held & FAIR) !== 0 &&
        Atomics.compareExchange(i32a, index, held, held & ~FAIR) === held) {
      held &= ~FAIR;
    }
    // (A waiter may have set FAIR meanwhile: still ours.)
    if ((releaseWord(i32a, index, mine, false, held) & ~FAIR) !== (held & ~FAIR)) {
      throw notHeldError(); // the word was reset by forceUnlock() meanwhile
    }
  }

  /**
   * Frees the word and wakes one waiter (`all` false: unlock() of a word
   * seen contended, me|1 -> 0) or every waiter (`all` true: forceUnlock(), -> 0),
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

  /** Takes an UNLOCKED word (the fast path; ABANDONED and HANDED go through takeFree). */
  function takeUnlocked(i32a, index, mine) {
    if (Atomics.compareExchange(i32a, index, UNLOCKED, me) !== UNLOCKED) return false;
    mine.held = true;
    mine.abandoned = false;
    return true;
  }

  /** Whether this thread holds the word uncontended (`me`: nobody queued on it, no hand-over asked). */
  const heldAlone = (i32a, index) => Atomics.load(i32a, index) === me;

  /** Makes sure this thread has its owner id (before its first word). */
  function claimOwner() {
    if (me === 0) me = lockOwner(threadId) * 2;
  }

  return { env, passOn, claimOwner, takeUnlocked, takeFree, heldAlone, claim, waitState, lockSlow, unlockHeld, releaseWord };
}

/** The threadId a word names as its holder, or null if nobody holds it. */
const holderOf = (word) => (isUnheld(word) ? null : ((word & OWNER) >>> 1) - 1);

module.exports = {
  createOwnedWord,
  kLock,
  deadlockError,
  notHeldError,
  holderOf,
  isFree,
  isUnheld,
  UNLOCKED,
  ABANDONED,
  WAITERS,
  HANDED,
  kGrace,
};
