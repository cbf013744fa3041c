'use strict';
// RwLock: many readers or one writer, in a SharedArrayBuffer (parking_lot's
// RwLock, Java's ReentrantReadWriteLock, Web Locks' shared and exclusive
// modes). `readSync()` and `writeSync()` block (workers), `read()` and
// `write()` never do (the main thread); robust: what a thread holds when it
// ends, it gives back.
//
// Two Int32s from `index` (src/stake.rs):
//
//   i32a[index]      state     ABANDONED (1 << 31): the last writer's thread
//                              ended holding the lock, and no writer has
//                              released it since; WRITER (1 << 30): a writer
//                              holds the lock; bits 20-29: writers waiting
//                              (up to 1023 count themselves here); bits 0-19:
//                              readers holding it
//   i32a[index + 1]  waiters   threads between announcing a wait and leaving
//                              it; a change of `state` that may let one go
//                              wakes them all when it sees this above 0
//
//   read:     CAS state + 1, while neither WRITER nor a waiting writer is in
//             it (in the blocking forms, but for the instance's own waiting
//             writes, and past all of them for an instance that holds a
//             read already: a thread cannot block on itself)
//   write:    CAS state + WRITER (minus its own waiting writer, if it
//             counted one), while no reader and no writer holds it; a
//             writer that finds ABANDONED counts it in its share, and so
//             takes it out when it releases
//   wait:     a writer first counts itself among the writers waiting, which
//             holds new readers off (writers do not starve; readers wait
//             while writers keep coming), then both wait on the state seen
//   release:  a reader subtracts 1, and wakes the waiters if it was the last
//             reader; a writer subtracts WRITER and wakes them; a writer
//             that stops waiting (timeout, abort) takes itself out of the
//             writers waiting and wakes them (readers it held off may go)
//
// No wake-up is lost, as in the Semaphore: a waiter adds itself to
// `waiters`, then reads `state` and waits on the value it read; a change of
// `state` that may let a waiter go is made before its maker reads
// `waiters`. Either that sees the waiter (and wakes it), or the waiter sees
// the change. And everything a waiter waits for is in the one word it waits
// on: a change between its read and its wait ends the wait at once.
// tests/loom_rwlock.rs model-checks these steps.
//
// What each instance holds is its *stake*: its share of `state` (its
// reads, WRITER if it writes, 1 << 20 for each of its waits that counts
// among the writers waiting), how many of its waits count in `waiters`,
// and a wake-up it owes, each written right next to the atomic step that
// changed what it counts, with no call between the two (a worker is
// terminated only at a call or a loop's back edge). When the thread ends,
// its teardown subtracts the share from `state` (marking it ABANDONED in
// the same step if the share holds WRITER), takes its waits out of
// `waiters` and wakes the waiters (src/stake.rs release_dead_share).

const { describe } = require('./describe.js');
const {
  codedError,
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
  validateOptions,
  abortReason,
  slotOptions,
  kLabel,
  monotonicNow,
} = require('./core.js');
const { newLine, join, leave, park, unpark, abandonPark, wakeFirst, goesOn, goOn, mayPass, GO, TIMED_OUT } = require('./line.js');
const { createKind, waitStart, waitEnd, abandoned, endedAs, tracing, traced } = require('./diagnostics.js');

const READER = 1;
const READERS = 0xfffff;
const WAITING_WRITER = 1 << 20;
const WAITING_WRITERS = 0x3ff << 20;
const WRITER = 1 << 30;
const ABANDONED = 1 << 31; // (the sign bit: -2^31)

// The binding's stake kind of an RwLock (src/napi/stakes.rs).
const kRwLockStake = 4;
// The stake's Int32s: the instance's share of `state`, its waits counted in
// `waiters` (the two the teardown reads), and 1 while a release's wake-up
// is owed (see the comment above uncountWaitingWriter).
const kShare = 0;
const kAnnounced = 1;
const kOwed = 2;

const timeoutError = (ms, write) =>
  codedError(`Timed out after ${ms} ms waiting to ${write ? 'write' : 'read'}-lock the RwLock`, 'ERR_RWLOCK_TIMEOUT');
const deadlockError = (write, holds) =>
  codedError(
    `This RwLock instance already holds ${holds}: a blocking ${write ? 'write' : 'read'} lock would wait forever`,
    'ERR_RWLOCK_DEADLOCK'
  );
const notHeldError = (write) =>
  codedError(
    write ? 'Tried to release the write lock of an RwLock this instance does not hold' : 'Tried to release a read of an RwLock this instance does not hold',
    'ERR_RWLOCK_NOT_HELD'
  );
const notAnRwLock = (value) =>
  new TypeError(`The "this" value must be an RwLock (use RwLock.from() for a posted one). Received ${describe(value)}`);
// What a take asks for (lib/diagnostics.js).
const kRead = Object.freeze({ mode: 'read' });
const kWrite = Object.freeze({ mode: 'write' });

const tooManyReadersError = () =>
  codedError(`The RwLock has ${READERS} readers already, the most it counts`, 'ERR_RWLOCK_TOO_MANY_READERS', RangeError);

/**
 * Creates the RwLock class over the package's `{ wait, waitAsync, notify }`
 * and the binding's `stakeWatch`.
 */
function createRwLock({ wait, waitAsync, notify, stakeWatch }) {
  // Every change that may let a waiter go wakes them all, so no wake-up is
  // meant for one: a wait that gives up after one has nothing to pass on.
  const env = waitEnv({ waitAsync, notify }, { leave: () => {} });
  // What the instances' waits are reported as (lib/diagnostics.js).
  const kind = createKind('RwLock');
  let stakeIfRwLock;
  let lineOf;

  // Pays the wake-up a release of `rwlock` owes: stakeOf's rare step,
  // apart. stakeOf is inlined twice into an uncontended readSync() +
  // releaseRead(); with this call written out (29 bytes of bytecode more
  // each) their caller had ~60 bytes left of TurboFan's
  // --max-inlined-bytecode-size-cumulative (920), and past it takeRead is
  // called: 535 instructions instead of 504 (see lib/async-lock.js
  // runFree for how to check).
  const payOwedOf = (rwlock, stake) => payOwed(notify, rwlock.i32a, rwlock.index, stake, kOwed);

  /**
   * The stake of an RwLock of this factory, with a wake-up a release of
   * the instance owes paid first (see the releases' comment); a TypeError for anything else.
   */
  function stakeOf(rwlock) {
    const stake = stakeIfRwLock(rwlock);
    if (stake === undefined) throw notAnRwLock(rwlock);
    if (stake[kOwed] !== 0) payOwedOf(rwlock, stake);
    return stake;
  }

  const writeBlockers = WRITER | READERS;

  /**
   * Whether `seen` keeps a read of this instance out: a writer, or a
   * waiting writer. The blocking forms (`recursive`) take two passes, both
   * so that a thread does not block on itself: an instance that holds a
   * read takes another past waiting writers (which wait for its first),
   * and a read goes past the instance's own waiting writes (a write() of
   * this thread cannot go first while it blocks). The async and try forms
   * take neither: one instance may serve many overlapping callers, who
   * would keep writers out for good, and an async read behind its own
   * thread's write just waits its turn.
   */
  function readBlocked(seen, stake, recursive) {
    if ((seen & WRITER) !== 0) return true;
    if (!recursive) return (seen & WAITING_WRITERS) !== 0;
    const share = stake[kShare];
    if ((share & READERS) !== 0) return false;
    return (seen & WAITING_WRITERS) !== (share & WAITING_WRITERS);
  }

  /**
   * Takes a read if nothing keeps it out, counting it in `stake`; returns
   * whether it did. The CAS and the stake's store have no call or back edge
   * between them (see above).
   */
  function takeRead(i32a, index, stake, recursive) {
    let seen = Atomics.compareExchange(i32a, index, 0, READER);
    if (seen === 0) {
      stake[kShare] += READER;
      return true;
    }
    while (!readBlocked(seen, stake, recursive)) {
      if ((seen & READERS) === READERS) throw tooManyReadersError();
      const was = Atomics.compareExchange(i32a, index, seen, seen + READER);
      if (was === seen) {
        stake[kShare] += READER;
        return true;
      }
      seen = was;
    }
    return false;
  }

  /**
   * Takes the write lock if nobody holds the lock, counting it in `stake`
   * (and, if `waiting`, taking back this wait's count among the writers
   * waiting in the same CAS); returns whether it did.
   */
  function takeWrite(i32a, index, stake, waiting) {
    const delta = waiting ? WRITER - WAITING_WRITER : WRITER;
    let seen = Atomics.load(i32a, index);
    while ((seen & writeBlockers) === 0) {
      const was = Atomics.compareExchange(i32a, index, seen, seen + delta);
      if (was === seen) {
        stake[kShare] += delta + (seen & ABANDONED); // (wraps, as the word)
        return true;
      }
      seen = was;
    }
    return false;
  }

  /**
   * Counts a writer's wait among the writers waiting (holding new readers
   * off), unless 1023 are counted already (then it waits uncounted, holding
   * nobody off); returns whether it did.
   */
  function countWaitingWriter(i32a, index, stake) {
    let seen = Atomics.load(i32a, index);
    while ((seen & WAITING_WRITERS) !== WAITING_WRITERS) {
      const was = Atomics.compareExchange(i32a, index, seen, seen + WAITING_WRITER);
      if (was === seen) {
        stake[kShare] += WAITING_WRITER;
        return true;
      }
      seen = was;
    }
    return false;
  }

  // Each change below that may let waiters go is followed, with no call
  // between the two (a worker is stopped only at a call or a loop's back
  // edge, and only a call runs out of stack), by a look at `waiters` and,
  // if there are any, the owed flag set in the stake before the notify
  // (payOwed clears it once the notify returned): should that call throw,
  // the instance's next call pays it (stakeOf), the binding when the
  // instance is collected first, or the thread's teardown, which wakes the
  // waiters whenever there are any.

  /** A writer that stops waiting: no longer counted, it lets the readers it held off go. */
  function uncountWaitingWriter(i32a, index, stake) {
    Atomics.sub(i32a, index, WAITING_WRITER);
    stake[kShare] -= WAITING_WRITER;
    if (Atomics.load(i32a, index + 1) > 0) {
      stake[kOwed] = 1;
      payOwed(notify, i32a, index, stake, kOwed);
    }
  }

  /** Gives back a read `stake` holds; ERR_RWLOCK_NOT_HELD, doing nothing, if it holds none. */
  function giveRead(i32a, index, stake) {
    if ((stake[kShare] & READERS) === 0) throw notHeldError(false);
    const was = Atomics.sub(i32a, index, READER);
    stake[kShare] -= READER;
    // (Only the last reader out may let anyone go.)
    if ((was & READERS) === READER && Atomics.load(i32a, index + 1) > 0) {
      stake[kOwed] = 1;
      payOwed(notify, i32a, index, stake, kOwed);
    }
  }

  /**
   * Gives back the write lock `stake` holds; ERR_RWLOCK_NOT_HELD, doing
   * nothing, if it does not. With it goes a dead writer's mark the take
   * found, unless `keepMark` (a hold given back before its taker could be
   * told of the mark: it stays for the next writer).
   */
  function giveWrite(i32a, index, stake, keepMark) {
    if ((stake[kShare] & WRITER) === 0) throw notHeldError(true);
    const mine = WRITER | (stake[kShare] & ABANDONED);
    Atomics.sub(i32a, index, keepMark ? WRITER : mine);
    stake[kShare] -= mine;
    if (Atomics.load(i32a, index + 1) > 0) {
      stake[kOwed] = 1;
      payOwed(notify, i32a, index, stake, kOwed);
    }
  }

  // A take of the blocking forms (a read recursive) and of the async ones.
  const takeSync = (i32a, index, stake, write) => (write ? takeWrite(i32a, index, stake, false) : takeRead(i32a, index, stake, true));
  const takeAsync = (i32a, index, stake, write) => (write ? takeWrite(i32a, index, stake, false) : takeRead(i32a, index, stake, false));
  /** Whether `seen` keeps the lock out (a take of the blocking forms if `recursive`). */
  const blocked = (seen, stake, write, recursive) => (write ? (seen & writeBlockers) !== 0 : readBlocked(seen, stake, recursive));
  const blockedSync = (seen, stake, write) => blocked(seen, stake, write, true);
  const give = (i32a, index, stake, write, keepMark) => (write ? giveWrite(i32a, index, stake, keepMark) : giveRead(i32a, index, stake));

  // Taking over a dead writer's mark: a write take whose share holds
  // ABANDONED (`stake[kShare] < 0`: it found the mark of a writer whose
  // thread ended holding the lock, and clears it when it releases) reports
  // it (lib/diagnostics.js): once per mark, by the writer that clears it.
  // Readers meanwhile see the mark (`abandoned`) but do not report it. Each
  // write take reports after it took, in a try: should that throw (out of
  // stack), the report is lost, not the take.

  /**
   * The blocking part of readSync() and writeSync(), on a lock its take
   * did not get: waits for it (lockWait), reported as a wait of `rwlock`
   * (lib/diagnostics.js) unless `ms` is 0 (a try that spins).
   */
  function lockSlow(rwlock, i32a, index, stake, write, ms) {
    if (ms === 0) return spinTake(takeSync, i32a, index, stake, write);
    // Before the spin, the count among the writers waiting and the
    // announced wait: should this throw, nothing is counted.
    const token = waitStart(rwlock, kind, write ? kWrite : kRead, true, ms !== Infinity);
    let outcome = 'error';
    try {
      const took = lockWait(i32a, index, stake, write, ms);
      outcome = !took ? 'timeout' : write && stake[kShare] < 0 ? 'abandoned' : 'taken';
      if (outcome === 'abandoned') {
        try {
          abandoned(rwlock, kind); // ("Taking over a dead writer's mark", above)
        } catch (_) {}
      }
      return took;
    } finally {
      if (token !== undefined) waitEnd(token, outcome);
    }
  }

  /**
   * lockSlow's wait: spin a little, then (a writer: count itself among the
   * writers waiting) wait (core's announcedWait) and take if nothing keeps
   * it out; false once `ms` (> 0) have passed.
   */
  function lockWait(i32a, index, stake, write, ms) {
    if (spinTake(takeSync, i32a, index, stake, write)) return true;
    const deadline = ms === Infinity ? Infinity : monotonicNow() + ms;
    const counted = write && countWaitingWriter(i32a, index, stake);
    let took = false;
    try {
      for (;;) {
        if (!announcedWait(wait, i32a, index, stake, kAnnounced, deadline, blockedSync, stake, write)) return false;
        took = write ? takeWrite(i32a, index, stake, counted) : takeRead(i32a, index, stake, true);
        if (took) return true;
      }
    } finally {
      if (counted && !took) uncountWaitingWriter(i32a, index, stake);
    }
  }

  /**
   * The blocking lock of readSync/writeSync (and their guards): whether it
   * took it. Throws ERR_RWLOCK_DEADLOCK where this very instance holds what
   * the lock would wait for (as AsyncLock's lock(), with or without a
   * timeout).
   */
  function lockSync(rwlock, write, timeout) {
    const ms = timeout === undefined ? Infinity : validateTimeout(timeout, 'timeout');
    const stake = stakeOf(rwlock);
    const { i32a, index } = rwlock;
    if (!takeSync(i32a, index, stake, write)) return lockSyncSlow(rwlock, i32a, index, stake, write, ms);
    if (write && stake[kShare] < 0) {
      try {
        abandoned(rwlock, kind); // ("Taking over a dead writer's mark", above)
      } catch (_) {}
    }
    return true;
  }

  /** lockSync() where the lock was not free: ERR_RWLOCK_DEADLOCK, or lockSlow. */
  function lockSyncSlow(rwlock, i32a, index, stake, write, ms) {
    if ((stake[kShare] & WRITER) !== 0) throw deadlockError(write, 'the write lock');
    if (write && (stake[kShare] & READERS) !== 0) throw deadlockError(write, 'a read');
    return lockSlow(rwlock, i32a, index, stake, write, ms);
  }

  /** The release function of a hold taken through `rwlock`. */
  function releaserOf(rwlock, stake, write) {
    let before = 0; // the stake's share when the release started
    return makeReleaser(
      () => {
        before = stake[kShare];
        give(rwlock.i32a, rwlock.index, stake, write);
      },
      // A release that threw gave nothing back unless the share went down.
      () => stake[kShare] === before,
      // (Stable while the hold lasts: only a writer's thread that ends
      // holding the lock sets the mark, only a writer's release clears it.)
      { mode: write ? 'write' : 'read', abandoned: (Atomics.load(rwlock.i32a, rwlock.index) & ABANDONED) !== 0 }
    );
  }

  /**
   * readGuard()/writeGuard(): the blocking lock, then its release function;
   * ERR_RWLOCK_TIMEOUT if `timeout` ms pass first.
   */
  function guardOf(rwlock, write, timeout) {
    if (!lockSync(rwlock, write, timeout)) throw timeoutError(timeout, write);
    const stake = stakeIfRwLock(rwlock);
    try {
      return releaserOf(rwlock, stake, write);
    } catch (error) {
      give(rwlock.i32a, rwlock.index, stake, write, true); // no release function: nobody else could release it (nor was told)
      throw error;
    }
  }

  /**
   * read()/write() (f undefined: resolves with a release function) and
   * runShared()/runExclusive() (runs f holding the lock, releases it
   * however f ends), in one async frame, as the Semaphore's acquireIn
   * (core's AsyncWait says why).
   */
  async function lockIn(rwlock, write, options, f, run) {
    const stake = stakeOf(rwlock);
    if (run && typeof f !== 'function') {
      throw new TypeError(`The "f" argument must be a function. Received ${describe(f)}`);
    }
    const { timeout, signal, priority } = validateOptions(options);
    if (signal !== undefined && signal.aborted) throw abortReason(signal);
    const { i32a, index } = rwlock;
    const line = lineOf(rwlock);
    // First come, first served among the instance's async takes, reads and
    // writes alike (lib/line.js): one that finds others waiting joins the
    // line, and only its first contends for the lock.
    if (!(mayPass(line, priority) && takeAsync(i32a, index, stake, write))) {
      if (timeout === 0) throw timeoutError(0, write);
      // Before it joins the line: should this throw, nothing is queued.
      const since = monotonicNow();
      const token = waitStart(rwlock, kind, write ? kWrite : kRead, false, timeout !== Infinity, since);
      let ended = 'error'; // how the wait ended (lib/diagnostics.js)
      let entry = null;
      let parked = false; // awaiting its turn in the line
      let waiting = null;
      let counted = false; // this frame counts among the writers waiting
      let announced = false; // this frame counts in `waiters`
      let took = false;
      try {
        entry = join(line, write, priority, since);
        if (!goesOn(line, entry)) {
          parked = true;
          const outcome = await ours(park(entry, entry.since + timeout, signal));
          parked = false;
          unpark(entry);
          if (outcome === TIMED_OUT) {
            ended = 'timeout';
            throw timeoutError(timeout, write);
          }
          if (outcome !== GO || (signal !== undefined && signal.aborted)) throw abortReason(signal);
        }
        goOn(entry); // (when it was not woken so)
        const remaining = timeout === Infinity ? Infinity : entry.since + timeout - monotonicNow();
        if (remaining <= 0) {
          ended = 'timeout';
          throw timeoutError(timeout, write);
        }
        waiting = new AsyncWait(env, i32a, index, remaining, signal, () => timeoutError(timeout, write));
        counted = write && countWaitingWriter(i32a, index, stake);
        for (;;) {
          Atomics.add(i32a, index + 1, 1);
          stake[kAnnounced]++;
          announced = true;
          const seen = Atomics.load(i32a, index);
          if (blocked(seen, stake, write, false)) {
            const pending = waiting.next(seen);
            if (pending !== undefined) waiting.settled(await pending);
          }
          Atomics.sub(i32a, index + 1, 1);
          stake[kAnnounced]--;
          announced = false;
          took = write ? takeWrite(i32a, index, stake, counted) : takeRead(i32a, index, stake, false);
          if (took) break;
        }
        ended = write && stake[kShare] < 0 ? 'abandoned' : 'taken';
        if (ended === 'abandoned') {
          try {
            abandoned(rwlock, kind); // ("Taking over a dead writer's mark", above)
          } catch (_) {}
        }
      } finally {
        if (announced) {
          Atomics.sub(i32a, index + 1, 1);
          stake[kAnnounced]--;
        }
        try {
          if (counted && !took) uncountWaitingWriter(i32a, index, stake);
        } finally {
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
    } else if (write && stake[kShare] < 0) {
      try {
        abandoned(rwlock, kind); // ("Taking over a dead writer's mark", above)
      } catch (_) {}
    }
    if (!run) {
      try {
        return releaserOf(rwlock, stake, write);
      } catch (error) {
        give(i32a, index, stake, write, true); // no release function: nobody else could release it (nor was told)
        throw error;
      }
    }
    try {
      const result = f();
      // Possibly a promise or thenable: hold the lock until it settles.
      if (result !== null && (typeof result === 'object' || typeof result === 'function')) return await result;
      return result;
    } finally {
      const before = stake[kShare];
      try {
        give(i32a, index, stake, write);
      } catch (error) {
        if (stake[kShare] !== before) throw error; // released; its wake-up is owed (see the releases' comment)
        // Still held: out of stack before anything changed (f returned near
        // the limit). Once more from the bottom of the stack.
        await undefined;
        give(i32a, index, stake, write);
      }
    }
  }

  /**
   * A lock for many readers or one writer in two Int32 slots of a
   * SharedArrayBuffer, taken by worker_threads and the main thread: every
   * thread builds its own instance over the same slots (`RwLock.from`).
   */
  class RwLock {
    #stake; // Int32Array(3): the share of `state`, waits announced, a wake-up owed (see above)
    #line = newLine(); // the instance's async takes that wait their turn (lib/line.js)

    /**
     * `new RwLock()` (a fresh 8-byte SharedArrayBuffer), `new RwLock(sab)`,
     * `new RwLock(sab, index)` or `new RwLock(int32Array, index)` (two
     * Int32s from `index`). Writes nothing, as AsyncLock: two zero Int32s
     * are a free RwLock, so every thread may build its own instance over
     * the same slots, as it may with `RwLock.from(posted)`.
     *
     * @param {SharedArrayBuffer | Int32Array} [sab]
     * @param {number} [index=0]
     */
    constructor(sab, index, options) {
      requireStakeWatch(stakeWatch, 'RwLock');
      let name;
      [sab, index, name] = slotOptions(sab, index, options);
      const slot = int32Slot(sab, index, 0, RwLock.BYTES, 2);
      /** The SharedArrayBuffer. */
      this.sab = slot.sab;
      /** The Int32Array the lock lives in. */
      this.i32a = slot.i32a;
      /** The index of its first Int32 (the state) in `i32a`. */
      this.index = slot.index;
      /** The name given at construction (or by the posted instance), for query() and util.inspect; only if given. */
      if (name !== undefined) this.name = name;
      // Should this thread end holding the lock, its teardown releases it.
      this.#stake = watchStake(stakeWatch, this.i32a, this.index, kRwLockStake, 3, this, kLabel.RwLock, name);
    }

    /**
     * An RwLock over the slots of one posted to this thread (`{ sab, i32a,
     * index }`, the structured clone of an instance), or of a hand-made
     * `{ sab, index }` / `{ i32a, index }`. The new instance holds nothing.
     */
    static from(value, options) {
      return new RwLock(...fromPosted(value, 'an RwLock', options));
    }

    /** How many reads are held now, by every thread (a snapshot). */
    get readers() {
      stakeOf(this);
      return Atomics.load(this.i32a, this.index) & READERS;
    }

    /** Whether a writer holds the lock now (a snapshot). */
    get writeLocked() {
      stakeOf(this);
      return (Atomics.load(this.i32a, this.index) & WRITER) !== 0;
    }

    /** How many reads this instance holds. */
    get readsHeld() {
      return stakeOf(this)[kShare] & READERS;
    }

    /** Whether this instance holds the write lock. */
    get writeHeld() {
      return (stakeOf(this)[kShare] & WRITER) !== 0;
    }

    /**
     * Whether the last writer's thread ended holding the write lock (its
     * teardown gave it back), and no writer has released it since: what
     * the lock guards may be half-written. A snapshot, stable while this
     * thread holds a read or the write lock; the writer that takes the
     * lock next clears it when it releases (so repair first).
     */
    get abandoned() {
      stakeOf(this);
      return (Atomics.load(this.i32a, this.index) & ABANDONED) !== 0;
    }

    /** Takes a read if nothing keeps it out, without waiting; returns whether it did. */
    tryRead() {
      const stake = stakeOf(this);
      return takeRead(this.i32a, this.index, stake, false);
    }

    /** Takes the write lock if nobody holds the lock, without waiting; returns whether it did. */
    tryWrite() {
      const stake = stakeOf(this);
      if (!takeWrite(this.i32a, this.index, stake, false)) return false;
      if (stake[kShare] < 0) {
        try {
          abandoned(this, kind); // ("Taking over a dead writer's mark", above)
        } catch (_) {}
      }
      return true;
    }

    /**
     * Takes a read, blocking this thread until no writer holds or waits
     * (workers, and Node's main thread, which may block); false if
     * `timeout` ms pass first.
     *
     * @param {number} [timeout=Infinity]
     * @returns {boolean}
     */
    readSync(timeout) {
      return lockSync(this, false, timeout);
    }

    /**
     * Takes the write lock, blocking this thread until nobody holds the
     * lock; false if `timeout` ms pass first. While it waits, new readers
     * wait behind it.
     *
     * @param {number} [timeout=Infinity]
     * @returns {boolean}
     */
    writeSync(timeout) {
      return lockSync(this, true, timeout);
    }

    /**
     * `readSync(timeout)` that returns a release function (for `using`), or
     * throws ERR_RWLOCK_TIMEOUT.
     *
     * @param {number} [timeout=Infinity]
     * @returns {() => void}
     */
    readGuard(timeout) {
      return guardOf(this, false, timeout);
    }

    /**
     * `writeSync(timeout)` that returns a release function (for `using`),
     * or throws ERR_RWLOCK_TIMEOUT.
     *
     * @param {number} [timeout=Infinity]
     * @returns {() => void}
     */
    writeGuard(timeout) {
      return guardOf(this, true, timeout);
    }

    /**
     * Takes a read without blocking: resolves with a release function
     * (idempotent; `[Symbol.dispose]` where the runtime has it; `mode`
     * 'read'). Rejects with ERR_RWLOCK_TIMEOUT after `options.timeout` ms,
     * or with `options.signal`'s reason, leaving nothing queued and nothing
     * taken.
     *
     * @param {{ timeout?: number, signal?: AbortSignal }} [options]
     * @returns {Promise<() => void>}
     */
    read(options) {
      if (kind.acquire && tracing(kind, 'acquire')) return traced(kind, 'acquire', this, 'read', kRead, lockIn, this, false, options, undefined, false);
      return lockIn(this, false, options, undefined, false);
    }

    /**
     * Takes the write lock without blocking: resolves with a release
     * function (`mode` 'write'). Options and errors as read(); while it
     * waits, new readers wait behind it.
     *
     * @param {{ timeout?: number, signal?: AbortSignal }} [options]
     * @returns {Promise<() => void>}
     */
    write(options) {
      if (kind.acquire && tracing(kind, 'acquire')) return traced(kind, 'acquire', this, 'write', kWrite, lockIn, this, true, options, undefined, false);
      return lockIn(this, true, options, undefined, false);
    }

    /**
     * Runs `f` holding a read, without blocking; resolves with f's result
     * (f may be async) and releases the read however f ends. Options and
     * errors as read().
     *
     * @template T
     * @param {() => T | PromiseLike<T>} f
     * @param {{ timeout?: number, signal?: AbortSignal }} [options]
     * @returns {Promise<T>}
     */
    runShared(f, options) {
      if (kind.run && tracing(kind, 'run')) return traced(kind, 'run', this, 'runShared', kRead, lockIn, this, false, options, f, true);
      return lockIn(this, false, options, f, true);
    }

    /**
     * Runs `f` holding the write lock, without blocking; as runShared().
     *
     * @template T
     * @param {() => T | PromiseLike<T>} f
     * @param {{ timeout?: number, signal?: AbortSignal }} [options]
     * @returns {Promise<T>}
     */
    runExclusive(f, options) {
      if (kind.run && tracing(kind, 'run')) return traced(kind, 'run', this, 'runExclusive', kWrite, lockIn, this, true, options, f, true);
      return lockIn(this, true, options, f, true);
    }

    /**
     * Gives back one read this instance holds, waking the waiters if it was
     * the last. Throws ERR_RWLOCK_NOT_HELD, releasing nothing, if it holds
     * none: a hold goes back through the instance that took it.
     */
    releaseRead() {
      const stake = stakeOf(this);
      giveRead(this.i32a, this.index, stake);
    }

    /** Gives back the write lock this instance holds; ERR_RWLOCK_NOT_HELD if it does not. */
    releaseWrite() {
      const stake = stakeOf(this);
      giveWrite(this.i32a, this.index, stake);
    }

    // Read `#stake` and `#line` for the functions above; taken off the class below.
    static stakeIfRwLock(rwlock) {
      try {
        return rwlock.#stake;
      } catch (_) {
        return undefined;
      }
    }

    static lineOf(rwlock) {
      return rwlock.#line; // (of an instance stakeOf took)
    }
  }
  stakeIfRwLock = RwLock.stakeIfRwLock;
  lineOf = RwLock.lineOf;
  delete RwLock.stakeIfRwLock;
  delete RwLock.lineOf;

  /** The bytes of SharedArrayBuffer an RwLock takes (two Int32s). */
  RwLock.BYTES = 8;

  return RwLock;
}

module.exports = { createRwLock };
