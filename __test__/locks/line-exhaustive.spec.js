'use strict';
// An exhaustive small-state test of one AsyncLock instance's line of async
// takes (lib/line.js) next to the word protocol (lib/owned-word.js), in one
// thread. Every sequence, up to a bounded length, of these steps:
//
//   ask / ask!       the lowest idle task (of three) calls acquire(), at
//                    priority 0 / 1; its take can abort (even takes: a
//                    signal) or time out (odd takes: a timeout)
//   tryLock / now    tryLock(), acquire({ timeout: 0 })
//   release          the holder of the instance lets the lock go (its
//                    release function; unlock() after tryLock())
//   abort n          take n's signal aborts
//   expire n         the clock reaches take n's deadline (and those of the
//                    takes that asked before it)
//   other tryLock    a second instance over the same word (another holder:
//   other ask        what another thread would be) takes it, or waits for
//   other release    it, and lets it go
//   tick             the microtasks run (a wait woken on the word settles
//                    later, in the event loop)
//   drain            the event loop turns until nothing moves any more
//
// Nothing else runs between two steps: a release followed by an abort is
// one tick's work. Each sequence runs on a fresh lock, its prefix replayed
// (a depth-first search over what each state offers), and ends with the
// holders releasing until nothing is left. Checked after each step, at each
// quiet point and at the end, what a user relies on:
//
//   - one holder at most;
//   - equal priorities served in the order they asked; a higher priority
//     before the lower ones waiting when it asked (save one that was going
//     for the word, or handed the lock, already);
//   - a take that aborted or timed out rejects with its signal's reason or
//     ERR_ASYNC_LOCK_TIMEOUT and never holds the lock after that (unless it
//     was handed the lock before);
//   - tryLock() and acquire({ timeout: 0 }) take a free lock nobody waits
//     for, and only that;
//   - a release function hands a lock held alone to the first of the line
//     (the word stays held, no native call); unlock() frees it (the first
//     then goes for it); a release of a word that says WAITERS frees it and
//     wakes one (one native call);
//   - at rest: no take waits while nobody holds the lock; the word says
//     held exactly when somebody holds it, and WAITERS when somebody waits
//     on it; only the first of the line waits on it; isLocked() agrees;
//   - at the end: a free word, isLocked() false, nothing queued (registry,
//     pending), and no native call at all when only the instance's own
//     takes were involved (and no unlock() left the line's first to take
//     the word itself).
//
// Time is the sequence's: this file loads its own copy of lib/line.js and
// lib/async-lock.js over a clock that moves on "expire" only, and timers
// that fire then. (A take that waits on the word waits with the package's
// waitAsync, whose timeout, in real time, never comes.)

const assert = require('assert');
const runtime = require('../../lib/describe');
const core = require('../../lib/core');
const api = require('../..');
const binding = require('../../binding');
const { makeAbortController } = require('../fixtures/async-lock-helpers');

const { waitersForTesting } = api;

// ---------------------------------------------------------------------------
// The lock under test: lib/async-lock.js and lib/line.js on the sequence's
// clock, over the package's own wait / waitAsync / notify / releaseLock,
// counted.
// ---------------------------------------------------------------------------

// The current sequence's clock (ms), and the timers lib/line.js set.
const clock = { now: 0, timers: [] };

function setManualTimer(fn, ms, ...args) {
  const timer = { fn, args, at: clock.now + ms, cleared: false, fired: false };
  clock.timers.push(timer);
  return timer;
}

function clearManualTimer(timer) {
  if (clock.timers.includes(timer)) timer.cleared = true;
}

/** Moves the clock to `at`, firing the timers due by then, in their order; returns them. */
function advanceClock(at) {
  clock.now = at;
  const due = clock.timers.filter((t) => !t.cleared && !t.fired && t.at <= at).sort((a, b) => a.at - b.at);
  for (const timer of due) {
    timer.fired = true;
    timer.fn(...timer.args);
  }
  return due;
}

/**
 * createAsyncLock from a fresh copy of lib/async-lock.js and lib/line.js
 * (which take the timers of lib/describe.js and the clock of lib/core.js
 * at load), loaded with ours; the module cache is left as it was.
 */
function createAsyncLockOnTheSequenceClock() {
  const paths = [require.resolve('../../lib/line'), require.resolve('../../lib/async-lock')];
  const cached = paths.map((p) => require.cache[p]);
  const { setTimer: realSet, clearTimer: realClear } = runtime;
  const realNow = core.monotonicNow;
  try {
    for (const p of paths) delete require.cache[p];
    runtime.setTimer = setManualTimer;
    runtime.clearTimer = clearManualTimer;
    core.monotonicNow = () => clock.now;
    return require('../../lib/async-lock').createAsyncLock;
  } finally {
    runtime.setTimer = realSet;
    runtime.clearTimer = realClear;
    core.monotonicNow = realNow;
    paths.forEach((p, i) => {
      if (cached[i] === undefined) delete require.cache[p];
      else require.cache[p] = cached[i];
    });
  }
}

const calls = { wait: 0, waitAsync: 0, notify: 0 };
let unsettledWaits = 0; // the lock's waitAsync promises not settled yet
const AsyncLock = createAsyncLockOnTheSequenceClock()({
  lockOwner: binding.lockOwner,
  lockWatch: binding.lockWatch,
  wait(...args) {
    calls.wait++;
    return api.wait(...args);
  },
  waitAsync(...args) {
    calls.waitAsync++;
    const result = api.waitAsync(...args);
    if (result.async) {
      unsettledWaits++;
      result.value.then(() => unsettledWaits--);
    }
    return result;
  },
  notify(...args) {
    calls.notify++;
    return api.notify(...args);
  },
  releaseLock(...args) {
    calls.notify++; // (frees the word and notifies)
    return binding.releaseLock(...args);
  },
});

const nativeCalls = () => calls.wait + calls.waitAsync + calls.notify;

// A word nobody holds: free, abandoned, or handed over (src/robust.rs).
const HANDED = (1 << 31) | 1;
const isUnheld = (word) => word === 0 || word === 1 || word === HANDED;

// The unit of the timeouts of the takes that can time out: on the
// sequence's clock, which reaches them on "expire" only; in real time (a
// wait on the word), never.
const kTimeout = 10 * 60 * 1000;

const turn = () => new Promise((resolve) => setImmediate(resolve));

// ---------------------------------------------------------------------------
// One sequence: the steps, and the model of what a user saw.
// ---------------------------------------------------------------------------

const TASKS = 3; // the instance's tasks, each with one take at a time

class Sequence {
  constructor(config, stats) {
    this.config = config;
    this.stats = stats;
    clock.now = 0;
    clock.timers = [];
    this.lock = new AsyncLock();
    this.other = config.other ? new AsyncLock(this.lock.sab, 0) : null;
    this.i32a = this.lock.i32a;
    this.takes = []; // every take, in the order they were asked
    this.tasks = new Array(TASKS).fill(null); // each task's take, while it waits or holds
    this.otherTake = null; // the second instance's take, while it waits or holds
    this.steps = [];
    this.failures = [];
    this.settlements = 0; // takes seen to settle (a drain waits until they stop)
    this.usedOther = false;
    this.unlockedToTheLine = false; // (its first took the word itself: as WAITERS, one notify later)
    this.callsAtStart = nativeCalls();
    this.pendingAtStart = waitersForTesting(this.i32a, 0).pending;
  }

  fail(message) {
    this.failures.push(message);
  }

  word() {
    return Atomics.load(this.i32a, 0);
  }

  pending() {
    return this.takes.filter((t) => t.state === 'pending');
  }

  holders() {
    return this.takes.filter((t) => t.state === 'held');
  }

  /** The instance's takes in its line (or going for the word) that have not given up. */
  waiting() {
    return this.takes.filter((t) => t.own && t.kind === 'acquire' && t.state === 'pending' && !t.gaveUp);
  }

  /** Whether the lock is in flight to a take not seen to hold it yet: the word held, no holder seen. */
  inFlight() {
    return !isUnheld(this.word()) && this.holders().length === 0;
  }

  /** The steps this state offers (asks by the lowest idle task: the tasks are alike). */
  choices() {
    const { config, steps } = this;
    const last = steps[steps.length - 1];
    const out = [];
    if (this.tasks.includes(null)) {
      out.push('ask');
      if (config.priorities) out.push('ask!');
      if (config.fast) out.push('tryLock', 'now');
    }
    for (const take of this.holders()) out.push(take.own ? 'release' : 'other release');
    for (const take of this.pending()) {
      if (take.gaveUp) continue;
      if (take.controller !== null) out.push(`abort ${take.n}`);
      // (Its timer is armed while it is parked, or woken and has not run since.)
      else if (take.timer !== null && !take.timer.cleared && !take.timer.fired) out.push(`expire ${take.n}`);
    }
    if (config.other && this.otherTake === null) out.push('other tryLock', 'other ask');
    if (steps.length > 0 && last !== 'drain') {
      out.push('drain');
      if (config.ticks && last !== 'tick') out.push('tick');
    }
    return out;
  }

  newTake(fields) {
    const take = Object.assign(
      {
        n: this.takes.length,
        own: true,
        task: null,
        kind: 'acquire',
        priority: 0,
        state: 'pending', // then held and released, rejected, or refused
        controller: null,
        reason: null,
        timer: null,
        gaveUp: false,
        grantedBeforeGiveUp: false,
        ownHolderAtAsk: this.holders().some((t) => t.own),
        passedBy: 0,
        release: null,
      },
      fields
    );
    this.takes.push(take);
    return take;
  }

  /** An async take: its settlement is watched. */
  watch(take, promise) {
    promise.then(
      (release) => {
        this.settlements++;
        take.release = release;
        this.granted(take);
      },
      (error) => {
        this.settlements++;
        this.rejected(take, error);
      }
    );
  }

  /** `take` is seen to hold the lock: who else holds it, whom it went before. */
  granted(take) {
    if (take.state !== 'pending') this.fail(`take ${take.n} got the lock in state ${take.state}`);
    if (take.gaveUp) {
      if (take.grantedBeforeGiveUp) this.stats.grantsBeforeGiveUp++;
      else this.fail(`take ${take.n} got the lock after it ${take.controller ? 'aborted' : 'timed out'}`);
    }
    take.state = 'held';
    const holders = this.holders();
    if (holders.length > 1) this.fail(`${holders.length} hold the lock at once: takes ${holders.map((t) => t.n)}`);
    if (!take.own) return;
    for (const earlier of this.waiting()) {
      if (earlier === take) continue;
      if (earlier.priority === take.priority && earlier.n < take.n) {
        this.fail(`take ${take.n} went before take ${earlier.n}, which asked before it at the same priority`);
      } else if (earlier.priority > take.priority) {
        // Once, by a take that asked before it and may have been going for
        // the word (or handed the lock) when it asked: the instance held
        // nothing then.
        if (take.n < earlier.n && !earlier.ownHolderAtAsk && earlier.passedBy === 0) {
          earlier.passedBy++;
          this.stats.passedByOneGoingForTheWord++;
        } else {
          this.fail(`take ${take.n} (priority ${take.priority}) went before take ${earlier.n} (priority ${earlier.priority}), which was waiting`);
        }
      }
    }
  }

  rejected(take, error) {
    if (take.state !== 'pending') this.fail(`take ${take.n} rejected in state ${take.state}`);
    take.state = 'rejected';
    if (take.controller !== null && take.gaveUp) {
      if (error !== take.reason) this.fail(`take ${take.n} aborted and rejected with ${error && error.stack}, not its signal's reason`);
    } else if (take.kind === 'now' || take.gaveUp) {
      if (!error || error.code !== 'ERR_ASYNC_LOCK_TIMEOUT') this.fail(`take ${take.n} timed out with ${error && error.stack}`);
    } else {
      this.fail(`take ${take.n} rejected without giving up: ${error && error.stack}`);
    }
    this.idle(take);
  }

  idle(take) {
    if (take.own) this.tasks[take.task] = null;
    else this.otherTake = null;
  }

  /** Runs one step; only `tick` and `drain` (which return a promise) let anything else run. */
  step(label) {
    this.steps.push(label);
    const [verb, arg] = label.startsWith('other ') ? [label] : label.split(' ');
    const { lock, other, stats } = this;
    switch (verb) {
      case 'ask':
      case 'ask!': {
        const task = this.tasks.indexOf(null);
        const priority = verb === 'ask!' ? 1 : 0;
        const controller = this.takes.length % 2 === 0 ? makeAbortController() : null;
        const take = this.newTake({ task, priority, controller });
        this.tasks[task] = take;
        const timersBefore = clock.timers.length;
        // Each take its own deadline, in the order they asked, at least
        // kTimeout after any other: what is left of it after an "expire"
        // (a wait on the word's, in real time) never comes either.
        const timeout = kTimeout * (take.n + 1);
        this.watch(take, lock.acquire(controller ? { signal: controller.signal, priority } : { timeout, priority }));
        if (clock.timers.length > timersBefore) take.timer = clock.timers[clock.timers.length - 1]; // (parked)
        break;
      }
      case 'tryLock':
      case 'now': {
        const task = this.tasks.indexOf(null);
        const free = isUnheld(this.word());
        const lineEmpty = !this.takes.some((t) => t.own && t.kind === 'acquire' && t.state === 'pending');
        const lineWaits = this.waiting().length > 0;
        // (Either answer is right while a take that aborted going for the
        // word is still in the line: it leaves when its wait settles.)
        const expect = free && lineEmpty ? true : !free || lineWaits ? false : undefined;
        const take = this.newTake({ task, kind: verb });
        this.tasks[task] = take;
        let took;
        if (verb === 'now') {
          this.watch(take, lock.acquire({ timeout: 0 }));
          took = free && !isUnheld(this.word()); // taken before acquire() returned, or refused
          take.took = took;
        } else {
          took = lock.tryLock();
          if (took) {
            take.release = () => lock.unlock();
            this.granted(take);
          } else {
            take.state = 'refused';
            this.idle(take);
          }
        }
        if (took) stats.fastTaken++;
        else stats.fastRefused++;
        if (expect !== undefined && took !== expect) {
          this.fail(`${verb} ${took ? 'took' : 'refused'} the lock with the word ${this.word()} and takes waiting: ${lineWaits}`);
        }
        break;
      }
      case 'release':
      case 'other release': {
        const take = verb === 'release' ? this.holders().find((t) => t.own) : this.otherTake;
        const toTheLine = take.own && this.waiting().length > 0;
        const handOn = toTheLine && take.kind !== 'tryLock'; // (unlock() does not hand over)
        if (toTheLine && !handOn) {
          this.unlockedToTheLine = true;
          stats.unlocksToTheLine++;
        }
        take.state = 'released';
        this.idle(take);
        const before = this.word();
        const callsBefore = nativeCalls();
        const notifiesBefore = calls.notify;
        take.release();
        this.released(before, this.word(), nativeCalls() - callsBefore, calls.notify - notifiesBefore, handOn);
        break;
      }
      case 'abort': {
        // Handed the lock already if it is in flight (the word held, no
        // holder seen): it then holds it, else it rejects.
        const take = this.takes[Number(arg)];
        take.gaveUp = true;
        take.grantedBeforeGiveUp = this.inFlight();
        const callsBefore = nativeCalls();
        take.reason = new Error(`take ${take.n} aborted`);
        take.controller.abort(take.reason);
        // (A wait on the word is flushed out: a native call.)
        if (nativeCalls() > callsBefore) stats.abortsOnTheWord++;
        else stats.abortsInTheLine++;
        break;
      }
      case 'expire': {
        const inFlight = this.inFlight();
        for (const timer of advanceClock(this.takes[Number(arg)].timer.at)) {
          const take = this.takes.find((t) => t.timer === timer);
          take.gaveUp = true;
          take.grantedBeforeGiveUp = inFlight;
          stats.timeoutsInTheLine++;
        }
        break;
      }
      case 'other tryLock': {
        this.usedOther = true;
        const free = isUnheld(this.word());
        const take = this.newTake({ own: false, kind: 'tryLock' });
        const took = other.tryLock();
        if (took !== free) this.fail(`the other instance's tryLock() answered ${took} with the word ${this.word()}`);
        if (took) {
          this.otherTake = take;
          take.release = () => other.unlock();
          this.granted(take);
        } else {
          take.state = 'refused';
        }
        break;
      }
      case 'other ask': {
        this.usedOther = true;
        const controller = makeAbortController();
        const take = this.newTake({ own: false, controller });
        this.otherTake = take;
        const waitsBefore = calls.waitAsync;
        this.watch(take, other.acquire({ signal: controller.signal }));
        if (calls.waitAsync > waitsBefore) stats.otherWaitsOnTheWord++;
        break;
      }
      case 'tick':
        return this.ticks().then(() => this.check());
      case 'drain':
        return this.drain().then(() => this.checkAtRest());
      default:
        throw new Error(`no step ${label}`);
    }
    this.check();
    return undefined;
  }

  /**
   * A release, the word `before` and `after` it: one that says WAITERS
   * frees it and wakes one (one native call); one held alone hands it to
   * the first of the instance's line if a take waits there and it is a
   * release function's (`handOn`: the word stays held), else frees it, with
   * no native call either way.
   */
  released(before, after, nativeCallsMade, notifies, handOn) {
    const { stats } = this;
    if ((before & 1) === 1) {
      stats.contendedReleases++;
      if (notifies !== 1 || nativeCallsMade !== 1) {
        this.fail(`a release of a word that says WAITERS (${before}) made ${notifies} notifies of ${nativeCallsMade} native calls`);
      }
      if (!isUnheld(after)) this.fail(`a release of a word that says WAITERS left it held (${after})`);
    } else {
      if (nativeCallsMade !== 0) this.fail(`a release of a word held alone (${before}) made ${nativeCallsMade} native calls`);
      if (handOn) {
        stats.handOns++;
        if (after !== before) this.fail(`a release to a take waiting in the line left the word ${after} (was ${before})`);
      } else if (after !== 0) {
        this.fail(`a release with nobody waiting, or an unlock(), left the word ${after}`);
      }
    }
  }

  /** The microtasks, and nothing else (a chain of 64 covers every take's). */
  async ticks() {
    for (let i = 0; i < 64; i++) await undefined;
  }

  /** Turns of the event loop until, twice in a row, no take settled and no woken wait was left to settle. */
  async drain() {
    let quiet = 0;
    for (let turns = 0; quiet < 2; turns++) {
      if (turns === 1000) throw new Error(`${this.describe()}: the drain never came to rest`);
      const settlements = this.settlements;
      await turn();
      const atRest = settlements === this.settlements && unsettledWaits === waitersForTesting(this.i32a, 0).registry;
      quiet = atRest ? quiet + 1 : 0;
    }
  }

  /** After every step. */
  check() {
    if (this.failures.length > 0) throw new Error(`${this.describe()}: ${this.failures.join('; ')}`);
  }

  /** At rest, after a drain. */
  checkAtRest() {
    const word = this.word();
    const held = this.holders();
    const waiting = this.pending();
    const { registry } = waitersForTesting(this.i32a, 0);
    if (waiting.length > 0 && held.length === 0) {
      this.fail(`takes ${waiting.map((t) => t.n)} wait while nobody holds the lock (the word ${word})`);
    }
    if (held.length > 0 && isUnheld(word)) this.fail(`take ${held[0].n} holds the lock, and the word says free (${word})`);
    if (held.length === 0 && !isUnheld(word)) this.fail(`nobody holds the lock, and the word says held (${word})`);
    if (registry > 0 && (word & 1) === 0) this.fail(`${registry} wait on the word, which does not say WAITERS (${word})`);
    const ownOnTheWord = registry - (waiting.some((t) => !t.own) ? 1 : 0);
    if (ownOnTheWord > 1) this.fail(`${ownOnTheWord} takes of the instance wait on the word at once`);
    const locked = this.lock.isLocked();
    if (locked !== (!isUnheld(word) || waiting.some((t) => t.own))) this.fail(`isLocked() is ${locked}`);
    this.check();
  }

  /** The holders release, drained, until nothing holds or waits; then everything must be as new. */
  async finish() {
    for (let rounds = 0; ; rounds++) {
      if (this.steps[this.steps.length - 1] !== 'drain') await this.step('drain');
      const holder = this.holders()[0];
      if (holder === undefined) break;
      if (rounds === 2 * TASKS + 2) throw new Error(`${this.describe()}: still held after ${rounds} releases`);
      this.step(holder.own ? 'release' : 'other release');
    }
    const left = this.pending();
    if (left.length > 0) this.fail(`takes ${left.map((t) => t.n)} never settled`);
    for (const take of this.takes) {
      if (take.kind === 'now' && take.state !== (take.took ? 'released' : 'rejected')) {
        this.fail(`acquire({ timeout: 0 }) (take ${take.n}) ${take.took ? 'took the lock and then' : 'was refused and then'} ${take.state}`);
      }
    }
    const { registry, pending } = waitersForTesting(this.i32a, 0);
    if (this.word() !== 0) this.fail(`the word is ${this.word()} at the end`);
    if (this.lock.isLocked()) this.fail('isLocked() at the end');
    if (this.other !== null && this.other.isLocked()) this.fail("the other instance's isLocked() at the end");
    if (registry !== 0 || pending !== this.pendingAtStart || unsettledWaits !== 0) {
      this.fail(`left queued at the end: ${registry} on the word, ${pending - this.pendingAtStart} pending`);
    }
    if (!this.usedOther && !this.unlockedToTheLine && nativeCalls() !== this.callsAtStart) {
      this.fail(`${nativeCalls() - this.callsAtStart} native calls with only the instance's own takes`);
    }
    if (this.lock.tryLock()) this.lock.unlock();
    else this.fail('tryLock() failed at the end');
    this.check();
  }

  describe() {
    return `[${this.steps.join(', ')}]`;
  }
}

const newStats = () => ({
  handOns: 0, // a release that handed the word, held on, to the first of the line
  contendedReleases: 0, // a release of a word that said WAITERS
  abortsInTheLine: 0,
  abortsOnTheWord: 0, // an abort that flushed the take's wait on the word out
  timeoutsInTheLine: 0,
  grantsBeforeGiveUp: 0, // an abort that came after the take was handed the lock
  passedByOneGoingForTheWord: 0, // a lower priority that went first, going for the word already
  otherWaitsOnTheWord: 0,
  fastTaken: 0,
  fastRefused: 0,
  unlocksToTheLine: 0, // an unlock() with takes in the line (no hand-over)
});

/**
 * Replays `labels` on `sequence`; resolves with the steps it offers then
 * (seen before anything else runs: a microtask would change them).
 */
async function replay(sequence, labels) {
  for (const label of labels) {
    if (!sequence.choices().includes(label)) throw new Error(`${sequence.describe()}: ${label} is not on offer`);
    const resting = sequence.step(label);
    if (resting !== undefined) await resting;
  }
  return sequence.choices();
}

/**
 * After a failure: whatever still holds or waits let go (released, aborted,
 * timed out, the word forced free), so that nothing is left queued.
 */
async function cleanUp(sequence) {
  for (let round = 0; round < 20 && (sequence.pending().length > 0 || sequence.holders().length > 0); round++) {
    for (const take of sequence.holders()) {
      take.state = 'released';
      try {
        take.release();
      } catch (_) {}
    }
    for (const take of sequence.pending()) {
      if (take.controller !== null && !take.controller.signal.aborted) take.controller.abort(new Error('clean-up'));
    }
    advanceClock(Infinity);
    sequence.lock.forceUnlock();
    for (let i = 0; i < 20; i++) await turn();
  }
}

/**
 * Runs `labels` on a fresh lock, then `finish()`, cleaning up after a
 * failure; resolves with the steps it offered after `labels`.
 */
async function runAndFinish(config, labels, stats) {
  const sequence = new Sequence(config, stats);
  try {
    const next = await replay(sequence, labels);
    await sequence.finish();
    return next;
  } catch (error) {
    await cleanUp(sequence);
    throw error;
  }
}

/**
 * Every sequence of up to `depth` steps that `config` offers, depth first,
 * each on a fresh lock (its prefix replayed), finished and checked; resolves
 * with how many it ran, and the stats.
 */
async function explore(config, depth) {
  const stats = newStats();
  let explored = 0;
  async function visit(prefix) {
    const next = await runAndFinish(config, prefix, stats);
    explored++;
    if (prefix.length < depth) for (const label of next) await visit([...prefix, label]);
  }
  await visit([]);
  return { explored, stats };
}

/** The failure of `labels` (null if none). */
async function failureOf(config, labels) {
  try {
    await runAndFinish(config, labels, newStats());
    return null;
  } catch (error) {
    return error.message;
  }
}

describe('the line of one AsyncLock instance, exhaustively over small states', function () {
  this.timeout(180000);

  it('acquire() at priorities 0 and 1, release, abort and timeout in the line: every sequence of up to 8 steps', async () => {
    const { explored, stats } = await explore({ priorities: true, ticks: true }, 8);
    assert.ok(explored > 80000, `${explored} sequences`);
    for (const name of ['handOns', 'abortsInTheLine', 'timeoutsInTheLine', 'grantsBeforeGiveUp', 'passedByOneGoingForTheWord']) {
      assert.ok(stats[name] > 0, `${name}: ${JSON.stringify(stats)}`);
    }
    assert.strictEqual(stats.contendedReleases, 0, 'nothing but the instance waits on the word');
  });

  it('acquire(), tryLock() and acquire({ timeout: 0 }) among them: every sequence of up to 7 steps', async () => {
    const { explored, stats } = await explore({ fast: true, ticks: true }, 7);
    assert.ok(explored > 60000, `${explored} sequences`);
    for (const name of ['handOns', 'unlocksToTheLine', 'fastTaken', 'fastRefused', 'abortsInTheLine', 'timeoutsInTheLine']) {
      assert.ok(stats[name] > 0, `${name}: ${JSON.stringify(stats)}`);
    }
  });

  it('with a second instance over the word that takes it and waits for it: every sequence of up to 7 steps', async () => {
    const { explored, stats } = await explore({ priorities: true, other: true, ticks: true }, 7);
    assert.ok(explored > 150000, `${explored} sequences`);
    for (const name of ['handOns', 'contendedReleases', 'abortsInTheLine', 'abortsOnTheWord', 'timeoutsInTheLine',
      'passedByOneGoingForTheWord', 'otherWaitsOnTheWord']) {
      assert.ok(stats[name] > 0, `${name}: ${JSON.stringify(stats)}`);
    }
  });

  it('all the steps together: every sequence of up to 5 steps', async () => {
    const { explored } = await explore({ priorities: true, fast: true, other: true, ticks: true }, 5);
    assert.ok(explored > 20000, `${explored} sequences`);
  });

  it('an abort between the release that woke a take to go for the word and its frame: the take rejects', async () => {
    // (It used to take the lock: its frame did not look at the signal again.)
    const message = await failureOf({ other: true }, ['ask', 'other ask', 'ask', 'drain', 'release', 'abort 2']);
    assert.strictEqual(message, null);
  });

  it('a take of a higher priority that joins in front of one going for the word waits parked: one take of the instance on the word', async () => {
    const message = await failureOf({ priorities: true, other: true }, ['other tryLock', 'ask', 'ask', 'ask!', 'abort 2', 'drain']);
    assert.strictEqual(message, null);
  });
});
