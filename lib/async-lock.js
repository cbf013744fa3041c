'use strict';
// AsyncLock: the mutex of the V8 blog post "Atomics.wait, Atomics.notify,
// Atomics.waitAsync" (lock / unlock / executeLocked on one Int32 slot of a
// SharedArrayBuffer), with the three-state protocol of Ulrich Drepper's
// "Futexes Are Tricky" (mutex3), so that an uncontended lock/unlock is one
// Atomics.compareExchange each and makes no native call; and robust: the
// word names the thread that holds it, so that when that thread ends
// holding it, its teardown frees it (src/robust.rs, src/napi/held.rs
// `release_all`) and the next holder learns that it was abandoned.
//
// The word protocol (which values mean what, who moves them, why no
// wake-up is lost) is lib/owned-word.js's; this file is the API over it.
//
// It waits and wakes only through the package's own wait / waitAsync /
// notify and the binding's releaseLock (handed to the factory), never
// through the global Atomics ones, so every thread agrees on one waiter
// queue, on every runtime (Node 14 lacks Atomics.waitAsync; native waiters
// would not see ours).

const { describe } = require('./describe.js');
const {
  codedError,
  AsyncWait,
  makeReleaser,
  int32Slot,
  fromPosted,
  ours,
  validateTimeout,
  validateOptions,
  kNoOptions,
  abortReason,
  slotOptions,
  kLabel,
  monotonicNow,
  threadId,
} = require('./core.js');
const { createKind, waitStart, waitEnd, endedAs, tracing, runTraced, loadList, traced } = require('./diagnostics.js');
const {
  createOwnedWord,
  kLock,
  holderOf,
  isFree,
  isUnheld,
  deadlockError,
  notHeldError,
  UNLOCKED,
  ABANDONED,
  WAITERS,
  HANDED,
  kGrace,
} = require('./owned-word.js');
const { join, leave, park, unpark, abandonPark, wake, wakeFirst, mayPass, goesOn, goOn, WAITING, GO, GRANTED, TIMED_OUT } = require('./line.js');

// The post's statics, kept for code that reads them; the word no longer
// holds them (lib/owned-word.js).
const LOCKED = 1;
const CONTENDED = 2;

// Whether an instance holds the lock: `{ held, abandoned }`, the line of
// its async takes (lib/line.js: `first`, `last`), what its waits are
// reported as (`instance`, `kind`: lib/diagnostics.js) and where its word
// is, once a wait was listed (`where`: lib/tracking.js), one per instance, kept
// in a private field (see createAsyncLock's `stateOf`): Object.freeze
// leaves it writable (an own property would make the write after a
// successful compareExchange throw and leave the lock taken by nobody),
// postMessage does not copy it, and neither a copy nor a Proxy can pass
// for an instance. It holds an object, so that each method reads it once,
// at its start, before the word changes: from then on it is a plain
// property write, no call (near the stack limit any call can throw). A
// WeakMap did the same for 83 more instructions per look-up.

const timeoutError = (ms) => codedError(`Timed out after ${ms} ms waiting for the AsyncLock`, 'ERR_ASYNC_LOCK_TIMEOUT');

// What a waitForUnlock() waits for (lib/diagnostics.js; a take asks for kLock).
const kUnlocked = Object.freeze({ unlocked: true });

/**
 * Creates the AsyncLock class over `{ wait, waitAsync, notify }`, with the
 * semantics of Atomics.wait / waitAsync / notify, and the binding's
 * `releaseLock` ("free the word and notify"), `lockOwner` (this thread's
 * owner id) and `lockWatch` (its teardown frees the words it holds), in
 * src/napi/locks.rs and held.rs: the package's own, or wrappers of them in tests.
 */
function createAsyncLock({ wait, waitAsync, notify, releaseLock, lockOwner, lockWatch }) {
  // What the instances' waits are reported as (lib/diagnostics.js), unless
  // another primitive over an instance says otherwise (async-mutex's Mutex).
  const kind = createKind('AsyncLock');
  const word = createOwnedWord({ wait, waitAsync, notify, releaseLock, lockOwner });
  const { env, passOn, takeUnlocked, takeFree, heldAlone, claim, waitState, lockSlow, unlockHeld, releaseWord } = word;
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
   * Releases the lock `mine` holds, first come, first served: to the first
   * async take of the instance's line if one waits (its own thread's
   * takes go before any later one), else as unlockHeld does.
   */
  function unlockMine(i32a, index, mine) {
    if (mine.first === null) {
      unlockHeld(i32a, index, mine);
      return;
    }
    handOn(i32a, index, mine, true);
  }

  /**
   * unlockMine with takes in the line. Its first, parked, is handed the
   * hold when the word says this thread holds it and nobody else is
   * queued on it or asked for a hand-over (`me`): the word stays as it is,
   * no native call. Else (or without `grant`: the blocking API's
   * releases, unlock() and lockGuard()'s, after which the thread may block
   * in lock(), which the first could not run through) the first goes on
   * to contend for the word, and the word is released as by unlockHeld (a
   * thread that waits gets its turn, or its hand-over when it waited long).
   */
  function handOn(i32a, index, mine, grant) {
    if (!mine.held) throw notHeldError();
    const first = mine.first;
    if (grant && first.outcome === WAITING && first.want !== kWaitForUnlock && heldAlone(i32a, index)) {
      mine.abandoned = false;
      wake(first, GRANTED, true); // (throws before anything changed, or not at all)
      return;
    }
    // The first goes on before the release: a wake that throws (out of
    // stack) has changed nothing, and one that returned cannot be lost
    // to a release that throws after freeing the word. Its frame runs
    // later: it finds the word free, or waits on it as any waiter does.
    wakeFirst(mine, true);
    unlockHeld(i32a, index, mine);
  }

  /**
   * The release function of a hold of `lock` (core's makeReleaser), with
   * `abandoned`: hands the lock to the first of the line, or with `grant`
   * false (lockGuard's, of the blocking API) lets it contend, as unlock().
   */
  function releaserOf(lock, grant) {
    const mine = stateOf(lock);
    // Reads `lock` when called, so that it keeps the instance alive: one
    // collected while it holds the word stays watched until its thread
    // ends (src/napi/held.rs), even once this frees the word.
    const release = grant
      ? () => unlockMine(lock.i32a, lock.index, mine)
      : () => (mine.first === null ? unlockHeld(lock.i32a, lock.index, mine) : handOn(lock.i32a, lock.index, mine, false));
    return makeReleaser(release, () => mine.held, { abandoned: mine.abandoned });
  }

  // What lockedAsync does once it may go on.
  const kExecute = 0; // executeLocked: run f holding the lock
  const kAcquire = 1; // acquire: resolve with a release function
  const kWaitForUnlock = 2; // waitForUnlock: see the lock free, do not take it

  /**
   * Whether a take that just joined the line (`entry`) goes on to contend
   * for the word now: the line's goesOn, while the instance does not hold
   * the lock (else its release hands it on).
   */
  const goesOnUnheld = (mine, entry) => !mine.held && goesOn(mine, entry);

  /**
   * executeLocked, acquire and waitForUnlock, in one async frame from the
   * call to the end: its only awaits are on waitAsync promises (core's
   * AsyncWait says why), on its turn in the line (lib/line.js) and on f's
   * result, and its `finally` releases the lock whenever `holding` says it
   * took it. Rejects with a timeout or the signal's reason only once
   * nothing of it is left queued.
   *
   * First come, first served among the instance's async takes: one that
   * finds others in the line joins it (by priority, then in turn), and only
   * the first of the line contends for the word; a release of the instance
   * hands the lock to the first (handOn).
   */
  async function lockedAsync(lock, op, f, options) {
    if (op === kExecute && typeof f !== 'function') {
      throw new TypeError(`The "f" argument must be a function. Received ${describe(f)}`);
    }
    // (No options, the common call: their defaults without validateOptions'
    // call, which, not inlined here, ran in the interpreter for the first
    // ~20,000 takes that waited: benchmark/instructions/lock-contended-same-thread.js.)
    const { timeout, signal, priority } = options === undefined ? kNoOptions : validateOptions(options);
    if (signal && signal.aborted) throw abortReason(signal);
    const mine = stateOf(lock);
    const { i32a, index } = lock;
    let holding = false; // this frame took the lock and has not handed it on
    let entry = null; // this frame's place in the line
    let parked = false; // awaiting its turn in the line
    try {
      let free = false;
      if (mayPass(mine, priority)) {
        if (op === kWaitForUnlock) {
          free = isUnheld(Atomics.load(i32a, index));
        } else {
          // Free: taken here, so f runs before the first await.
          free = holding = takeFree(i32a, index, mine);
        }
      }
      if (!free) {
        if (timeout === 0) throw timeoutError(0);
        const since = monotonicNow();
        const deadline = timeout === Infinity ? Infinity : since + timeout;
        // Before it joins the line: should this throw, nothing is queued.
        const token = waitStart(mine.instance, mine.kind, op === kWaitForUnlock ? kUnlocked : kLock, false, timeout !== Infinity, since, mine);
        let ended = 'error'; // how the wait ended (lib/diagnostics.js)
        let waiting = null;
        try {
          entry = join(mine, op, priority, since);
          if (!goesOnUnheld(mine, entry)) {
            parked = true;
            const outcome = await ours(park(entry, deadline, signal));
            parked = false;
            holding = outcome === GRANTED; // (before unpark, which may throw: finally then releases it)
            unpark(entry);
            if (!holding) {
              if (outcome === TIMED_OUT) {
                ended = 'timeout';
                throw timeoutError(timeout);
              }
              if (outcome !== GO || (signal !== undefined && signal.aborted)) throw abortReason(signal);
            }
          }
          if (!holding) {
            goOn(entry); // (when it was not woken so)
            const remaining = remainingOf(entry, timeout);
            if (remaining <= 0) {
              ended = 'timeout';
              throw timeoutError(timeout);
            }
            waiting = new AsyncWait(env, i32a, index, remaining, signal, () => timeoutError(timeout));
            waiting.since = entry.since; // (this thread's takes have waited since)
            try {
              const w = waitState();
              for (;;) {
                let expected;
                if (op === kWaitForUnlock) {
                  const state = Atomics.load(i32a, index);
                  if (isFree(state) || state === HANDED) {
                    // A wake-up we took was meant for a thread that wants the
                    // lock: pass it on, as we leave without taking it.
                    if (waiting.woken) passOn(i32a, index, 1);
                    break;
                  }
                  // Held: make sure the word says WAITERS before waiting on it.
                  expected = state | WAITERS;
                  if (state !== expected && Atomics.compareExchange(i32a, index, state, expected) !== state) continue;
                } else {
                  w.woken = waiting.woken;
                  w.since = waiting.since;
                  expected = claim(i32a, index, mine, w);
                  if (expected === 0) {
                    holding = true;
                    break;
                  }
                }
                // (A timeout leaves the word WAITERS: one spare notify later.)
                const pending = waiting.next(expected, expected === HANDED ? kGrace : undefined);
                if (pending !== undefined) waiting.settled(await pending);
              }
            } finally {
              // (Should this throw after a take, the outer finally gives the lock back.)
              waiting.end();
            }
          }
          ended = op === kWaitForUnlock ? 'unlocked' : mine.abandoned ? 'abandoned' : 'taken';
        } finally {
          if (token !== undefined) waitEnd(token, ended !== 'error' ? ended : endedAs(waiting, signal));
        }
      }
      if (entry !== null) {
        // Out of the line once it holds the lock (or, waitForUnlock, saw it
        // free): the next first contends for it, or waits for its release.
        leaveLine(mine, entry);
        entry = null;
      }
      if (op === kWaitForUnlock) return undefined;
      if (op === kAcquire) {
        const release = releaserOf(lock, true);
        holding = false; // the release function's now
        return release;
      }
      const result = f();
      // Possibly a promise or thenable: hold the lock until it settles.
      if (result !== null && (typeof result === 'object' || typeof result === 'function')) return await result;
      return result;
    } finally {
      if (entry !== null) {
        // A failed await of its turn (out of stack, or a program's `then`
        // where %Promise% could not be found) may have left it in the line,
        // or been handed the lock meanwhile: nobody else would release it.
        if (parked && abandonPark(entry)) holding = true;
        leaveLine(mine, entry);
      }
      if (holding) {
        try {
          unlockMine(lock.i32a, lock.index, mine); // an unlock error (misuse: f unlocked) wins over f's outcome
        } catch (error) {
          if (!mine.held) throw error;
          // Still held: unlock() threw out of stack (f returned near the
          // limit; any other failure leaves it released). Once more from
          // the bottom of the stack, after an await (of a non-promise: it
          // calls nothing).
          await undefined;
          unlockMine(lock.i32a, lock.index, mine);
        }
      }
    }
  }

  /** What is left of a take's `timeout` (ms) since it joined the line. */
  function remainingOf(entry, timeout) {
    return timeout === Infinity ? Infinity : entry.since + timeout - monotonicNow();
  }

  /**
   * Takes `entry` out of the line, and lets the next first go on to
   * contend for the word unless the instance holds the lock (its release
   * will hand it on).
   */
  function leaveLine(mine, entry) {
    leave(entry);
    wakeFirst(mine, !mine.held);
  }

  /**
   * executeLocked on a lock seen free (its fast path): takes it, runs f and
   * releases it however f ends, as lockedAsync does, in one frame. The
   * take is this frame's first step: should the frame fail to start (out
   * of stack), the call throws having taken nothing. Should another thread
   * take the lock first, it waits as lockedAsync does, which it becomes.
   *
   * Its size keeps the uncontended executeLocked at ~1,020 instructions
   * (V8 11.3, Node 20): TurboFan inlines it into the caller, with
   * executeLocked, takeUnlocked, unlockMine, unlockHeld and f, only while
   * its bytecode is at most --max-inlined-bytecode-size (460 bytes; it is
   * 407), and while all of them fit in the caller's
   * --max-inlined-bytecode-size-cumulative (920; unlockHeld, the last,
   * still fits at 850). Over the first, it is called: ~1,210; over the
   * second, unlockHeld or takeUnlocked is: ~1,060. (It was 460, at the
   * limit.) So what only a rare case runs is kept short: the release is
   * unlockMine's call, not written out; `catch` without a binding. Not
   * shorter by folding the rare branch's await into f's: 33 bytes fewer,
   * but 1,130 instructions. To check (and with either flag given lower
   * than its default, the margin):
   *   node --print-bytecode --print-bytecode-filter=runFree benchmark/instructions/lock-uncontended.js --ops 1 | grep 'Bytecode length'
   *   node --trace-turbo-inlining benchmark/instructions/lock-uncontended.js --ops 20000 | grep '^Inlining.*into.*loop'
   */
  async function runFree(lock, mine, f) {
    if (!takeUnlocked(lock.i32a, lock.index, mine)) {
      // (Rare.) Waits as the general path does, in lockedAsync's frame,
      // awaited as the lock awaits its waitAsync promises (ours: no
      // `then` of the program's is called where %Promise% was found).
      const waiting = lockedAsync(lock, kExecute, f, undefined); // runs f and releases, whatever comes of this frame
      try {
        ours(waiting);
      } catch {
        // Out of stack: again from the bottom of the stack, after an await
        // (awaited as it is, its `then` looked up, it would go through a
        // program's Promise.prototype.then). Should that fail too, it is
        // awaited as it is: this frame must not reject while f still runs.
        await undefined;
        try {
          ours(waiting);
        } catch {}
      }
      return await waiting;
    }
    let result;
    let failed = false; // f threw or rejected, with `result` its error
    try {
      result = f();
      if (result !== null && (typeof result === 'object' || typeof result === 'function')) result = await result;
    } catch (error) {
      failed = true;
      result = error;
    }
    // Released however f ended (a try/finally costs 12 instructions more),
    // to the first of the line if takes joined it meanwhile. An unlock that
    // threw with the lock released wins over f's outcome.
    try {
      unlockMine(lock.i32a, lock.index, mine); // (a call: written out, 33 bytes more of runFree, see above)
    } catch (unlockError) {
      if (!mine.held) throw unlockError;
      await undefined; // as in lockedAsync
      unlockMine(lock.i32a, lock.index, mine);
    }
    if (failed) throw result;
    return result;
  }

  /**
   * executeLocked(f, options) other than its fast path: traced if its
   * tracing channel may have subscribers (kind.run) and has
   * (lib/diagnostics.js), else as executeLocked runs (its fast path, or
   * the general one). Apart, so that executeLocked stays small enough to be
   * inlined with what it calls (TurboFan's budget, see runFree: an
   * uncontended executeLocked cost 5 % more with the traced call in it).
   */
  function executeTraced(lock, f, options) {
    if (runTraced(kind)) return traced(kind, 'run', lock, 'executeLocked', kLock, lockedAsync, lock, kExecute, f, options);
    if (options === undefined && typeof f === 'function') {
      const mine = stateIfLock(lock);
      if (mine !== undefined && mine.first === null && lock.i32a[lock.index] === UNLOCKED) return runFree(lock, mine, f);
    }
    return lockedAsync(lock, kExecute, f, options);
  }

  /**
   * A mutex in one Int32 slot of a SharedArrayBuffer, for worker_threads and
   * the main thread: `lock()` blocks, `executeLocked(f)` / `acquire()` never
   * block. Every thread builds its own instance over the same slot.
   */
  class AsyncLock {
    #state; // { held, ... }: whether this instance holds the lock, and more (see stateOf)

    /**
     * `new AsyncLock(sab)`: the lock is `new Int32Array(sab)[AsyncLock.INDEX]`.
     * `new AsyncLock(int32Array, index)` or `new AsyncLock(sab, index)`: any
     * slot, so many locks can share one buffer. `new AsyncLock()`: a fresh
     * 4-byte SharedArrayBuffer. The slot must start at 0 (UNLOCKED).
     *
     * @param {SharedArrayBuffer | Int32Array} [sab]
     * @param {number} [index=AsyncLock.INDEX]
     * @param {{ name?: string }} [options] (or in place of `sab`)
     */
    constructor(sab, index, options) {
      let name;
      [sab, index, name] = slotOptions(sab, index, options);
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
      /** The name given at construction (or by the posted instance), for query() and util.inspect; only if given. */
      if (name !== undefined) this.name = name;
      this.#state = { held: false, abandoned: false, first: null, last: null, going: null, instance: this, kind, where: undefined };
      word.claimOwner();
      // Should this thread end holding the lock, its teardown frees it.
      lockWatch(i32a, index, this, kLabel.AsyncLock, name, threadId);
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
    static from(value, options) {
      return new AsyncLock(...fromPosted(value, 'an AsyncLock', options));
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
      if (takeUnlocked(i32a, index, mine)) return true;
      return lockSlow(i32a, index, ms, mine);
    }

    /**
     * Takes the lock if it is free and no async take of this instance
     * waits for it (they come first), without waiting; returns whether it
     * did.
     */
    tryLock() {
      const mine = stateOf(this);
      return mine.first === null && takeFree(this.i32a, this.index, mine);
    }

    /**
     * Releases the lock; wakes one waiter only when the word says someone
     * may wait (2). Throws ERR_ASYNC_LOCK_NOT_HELD, with the post's message,
     * when this instance does not hold it (it never frees another thread's
     * lock).
     */
    unlock() {
      const mine = stateOf(this); // first: a bad `this` is told so before anything is read of it
      // (No hand-over to a parked take: the thread may block in lock() next.)
      if (mine.first === null) unlockHeld(this.i32a, this.index, mine);
      else handOn(this.i32a, this.index, mine, false);
    }

    /** `unlock()` under async-mutex's name (through the instance: a subclass's unlock). */
    release() {
      stateOf(this); // a copy has no unlock(): the TypeError that says why
      this.unlock();
    }

    /**
     * Whether any thread holds the lock now, or an async take of this
     * instance waits its turn (a snapshot).
     */
    isLocked() {
      const mine = stateIfLock(this);
      return !isUnheld(Atomics.load(this.i32a, this.index)) || (mine !== undefined && mine.first !== null);
    }

    /**
     * The `threadId` (worker_threads) of the thread that holds the lock now,
     * or null if it is free (a snapshot, for debugging).
     *
     * @returns {number | null}
     */
    holder() {
      stateOf(this);
      return holderOf(Atomics.load(this.i32a, this.index));
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
      // The common call, on a lock seen free, nobody listening to its
      // tracing channel (kind.quiet, lib/diagnostics.js runTraced: the
      // kind's run channel unheard since this thread last loaded a
      // built-in module; diagnostics_channel itself is not loaded while
      // the thread has not): runFree
      // takes it and runs f, without lockedAsync's options and waiting;
      // any other untraced call, a bad `this` included, goes to lockedAsync
      // at once, and one that may be traced to executeTraced. (Not all
      // through executeTraced, as before: a take that waits paid ~80
      // instructions more for that call, not inlined, and its second look
      // at the fast path, benchmark/instructions/lock-contended-same-thread.js.
      // This is 27 bytes more of executeLocked, 134, within the budget
      // runFree's comment explains: the uncontended executeLocked still
      // inlines what it calls, at ~1,016 instructions.) The word is read
      // plainly here (a hint, ~110 instructions fewer than Atomics.load):
      // runFree's compareExchange decides. The quiet check comes last (and
      // again before lockedAsync): first, it made V8 tier executeLocked up
      // on its own before the caller's loop, which then called it instead
      // of inlining it (lock-uncontended 1,021 instructions, from 948; 149
      // bytes, and 140 without hole checks); here, 178 bytes, the loop
      // inlines it all, at 953 (957 with it before stateIfLock's call).
      if (options === undefined && typeof f === 'function') {
        const mine = stateIfLock(this);
        if (mine !== undefined && mine.first === null && this.i32a[this.index] === UNLOCKED && kind.quiet === loadList.length) return runFree(this, mine, f);
      }
      return kind.quiet === loadList.length ? lockedAsync(this, kExecute, f, options) : executeTraced(this, f, options);
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
      // Traced as what the instance is reported as (async-mutex's Mutex's acquire is this).
      const mine = stateIfLock(this);
      if (mine !== undefined && mine.kind.acquire && tracing(mine.kind, 'acquire')) {
        return traced(mine.kind, 'acquire', mine.instance, 'acquire', kLock, lockedAsync, this, kAcquire, undefined, options);
      }
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
        return releaserOf(this, false);
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
      try {
        return !isUnheld(releaseWord(this.i32a, this.index, mine, true));
      } finally {
        wakeFirst(mine, true); // (its takes contend for the word again)
      }
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
