'use strict';
// Deadlock detection and lock-order checks (both opt-in), and the
// registration of each take that waits, which query() lists: the
// JavaScript side of the binding's table of who holds and who waits
// (src/diag.rs, src/deadlock.rs).
//
// - Every take that has to wait says so before it blocks or parks, and
//   again when it ends (waitBegin / waitEnd, called by lib/diagnostics.js's
//   hook): the slow path only. With detection on, the binding answers a
//   wait that would close a cycle with the cycle instead, and waitBegin
//   throws ERR_DEADLOCK (a blocking take throws it, an async one rejects).
// - While detection or lock-order checks are on, each take also tells the
//   binding where it was taken (its stack; with lock-order checks, the
//   binding pairs it with what the thread holds besides, and answers the
//   first inverse pair of any two, which becomes a process warning). For
//   that, the classes' take methods are wrapped, in this thread, once
//   either is on: off, the takes run exactly as they are, at no cost. An
//   async take's context (AsyncLocalStorage) keeps the keys of the holds
//   it runs under (executeLocked, runShared, runExclusive), so that the
//   detector knows which of a thread's holds an async wait keeps: another
//   task of the thread may release the others; and, for lock-order checks
//   only, those its task took outside a scope (see holdTaken).
//
// Switched on by ATOMICS_WAITASYNC_DEBUG (a list: `deadlocks`,
// `lock-order`), read by each thread as it loads the package (index.js
// makes the tracking then where it is set), or by detectDeadlocks() /
// checkLockOrder(), for every thread of the process.

const { codedError, kLabel, kKindOfLabel, monotonicNow, threadId } = require('./core.js');
const { describe, isPromise } = require('./describe.js');

const DETECT = 1;
const ORDER = 2;


/** A name for the primitive a cycle link or an inversion names. */
function nameOf(p) {
  const kind = kKindOfLabel[p.label] || 'primitive';
  return p.name !== undefined ? `${kind} ${JSON.stringify(p.name)}` : `${kind} #${p.buffer}[${p.index}]`;
}

// The classes whose waits ask for permits, and RwLock's (kLabel's low byte).
const kPermitLabels = [kLabel.Semaphore, kLabel.MutexSemaphore, kLabel.SignalSemaphore].map((label) => label & 0xff);
const kRwLockLabel = kLabel.RwLock & 0xff;

/** What a wait of class `label` asked for, as query() says it. */
function askedText(label, what) {
  if (kPermitLabels.includes(label)) return `${what} permit${what === 1 ? '' : 's'} of`;
  if (label === kRwLockLabel) return what === 2 ? 'the write lock of' : 'a read of';
  return '';
}

/** The ERR_DEADLOCK error for the cycle `links` (src/napi/diag.rs). */
function deadlockError(links) {
  const lines = ['Deadlock: this wait would never end; the threads of the cycle:'];
  const holds = [];
  const cycle = links.map((link) => {
    const what = askedText(link.waitsFor.label, link.what);
    const by = link.heldBy !== undefined ? `held by thread ${link.heldBy}` : `behind the writer waiting in thread ${link.behind}`;
    lines.push(`  thread ${link.threadId} waits (${link.blocking ? 'blocking' : 'async'}) for ${what ? `${what} ` : ''}${nameOf(link.waitsFor)}, ${by}`);
    if (link.heldBy !== undefined) {
      holds.push(`${nameOf(link.waitsFor)} was taken by thread ${link.heldBy}${link.stack !== undefined ? `\n${link.stack}` : ' (where: not recorded)'}`);
    }
    return {
      threadId: link.threadId,
      blocking: link.blocking,
      waitsFor: { kind: kKindOfLabel[link.waitsFor.label], name: link.waitsFor.name, buffer: link.waitsFor.buffer, index: link.waitsFor.index },
      heldBy: link.heldBy,
      behind: link.behind,
      stack: link.stack,
    };
  });
  const error = codedError([...lines, ...holds].join('\n'), 'ERR_DEADLOCK');
  error.cycle = cycle;
  return error;
}

// The channel a deadlock found is published on (where the runtime has
// diagnostics_channel): looked up at the first, as few programs have one.
let deadlockChannel;

/**
 * Publishes `{ error, waitsOn }` on `atomics-waitasync:deadlock`, in the
 * thread whose wait closed the cycle, before that wait throws (or, a
 * re-take, waits on: `waitsOn`). Never throws: the take goes as it would.
 */
function publishDeadlock(error, waitsOn) {
  try {
    if (deadlockChannel === undefined) {
      const dc = require('diagnostics_channel');
      deadlockChannel = typeof dc.channel === 'function' ? dc.channel('atomics-waitasync:deadlock') : null;
    }
    if (deadlockChannel !== null && deadlockChannel.hasSubscribers) deadlockChannel.publish({ error, waitsOn });
  } catch (_) {
    // (no diagnostics_channel here, or out of stack)
    if (deadlockChannel === undefined) deadlockChannel = null;
  }
}

/** The stack of the take's caller (the wrapper's caller), as text; undefined if it cannot be had. */
function callerStack() {
  try {
    const holder = {};
    Error.captureStackTrace(holder, callerStack);
    // The first line is "Error"; the next is the wrapper's frame.
    const lines = String(holder.stack).split('\n');
    return lines.slice(2).join('\n');
  } catch (_) {
    return undefined; // (a program's Error.prepareStackTrace threw: not recorded)
  }
}

/**
 * The tracking of this thread over the binding's diag functions (each
 * undefined in a binary older than this file: nothing is tracked then).
 */
function createTracking({ diagWait, diagWaitEnd, diagTook, diagFlags, diagPage, diagKey }) {
  const enabled = typeof diagWait === 'function' && typeof diagFlags === 'function';
  // The process's flags, as this thread last saw them.
  let flags = 0;
  // The classes whose takes are wrapped once a flag is on; and whether
  // they are.
  const classes = [];
  let wrapped = false;
  let contexts = null; // an AsyncLocalStorage, while wrapped (where the runtime has one)

  /**
   * A take of `instance` (class `label`, kLabel's) starts to wait, for
   * `what` (permits; 1 read or 2 write; 1), blocking or not, with a
   * timeout or not, since `since` (monotonicNow()'s; undefined: now),
   * `cache` (optional) an object of the instance's where its word's
   * address is kept (else in a WeakMap):
   * its id, for waitEnd. Throws ERR_DEADLOCK if, with
   * detection on, it would close a cycle: then it is not registered. A
   * re-take (see retake) is never failed, nor is any wait of a cycle with
   * a take with a timeout in it (that ends it): it is registered, and the
   * cycle is a warning. Once registered, nothing here throws.
   */
  function waitBegin(instance, label, what, blocking, timed, since, cache) {
    if (!enabled) return 0;
    if (flags === 0 && retaking === null && header !== null && header[0] === 0 && free.length !== 0) {
      const where = cache !== undefined ? cache.where : keys.get(instance);
      if (where !== undefined) return written(where, label, what, blocking, timed, since);
    }
    return waitBeginSlow(instance, label, what, blocking, timed, since, cache);
  }

  // This thread's pages of waits (src/diag.rs's module docs give their
  // layout): while both flags are off, a wait is written into a free slot
  // of them, not told to the binding by a call: a few stores (a call cost
  // ~3,000 instructions, 16 % of a take that waits). The binding reads
  // them when it looks. The first is made at the first wait.
  const SLOT_INTS = 16;
  const PAGE_SHIFT = 6;
  const PAGE_SLOTS = 1 << PAGE_SHIFT; // (a slot's page: slot >> PAGE_SHIFT; its place there: slotAt)
  const MAX_PAGES = 1024; // (64,512 waits at once; more are told by calls)
  let paging = typeof diagPage === 'function' && typeof diagKey === 'function';
  let header = null; // the first page's Int32s: [0] is the process's flags, which the binding keeps
  const pageInts = [];
  const pageDoubles = [];
  const free = []; // the free slots (page * PAGE_SLOTS + slot), taken from the end
  let generation = 0; // the last a slot was given (1 to 2 ** 31 - 1, round and round)
  const keys = new WeakMap(); // instance -> { key, base }: its word's address and its buffer's
  let timeOrigin = 0; // Date.now() less monotonicNow(), at the first page
  // (A wait whose end is lost, out of stack in waitEnd, stays listed until
  // the thread ends: a thread's next blocking wait may have started inside
  // the first's, in a subscriber of its wait:start, so it cannot tell.)

  /** waitBegin, other than a wait written into a page with everything at hand. */
  function waitBeginSlow(instance, label, what, blocking, timed, since, cache) {
    if (paging) {
      try {
        if (header === null || (free.length === 0 && pageInts.length < MAX_PAGES)) addPage();
        if (header !== null && header[0] !== flags) sawFlags(header[0]);
        if (header !== null && flags === 0 && free.length !== 0) {
          let where = cache !== undefined ? cache.where : keys.get(instance);
          if (where === undefined) {
            const key = diagKey(instance.i32a, instance.index);
            where = { key, base: key - instance.i32a.byteOffset - 4 * instance.index };
            if (cache !== undefined) cache.where = where;
            else keys.set(instance, where);
          }
          const id = written(where, label, what, blocking, timed, since);
          // (Consumed only now: should the above throw, waitCalled sees it.)
          if (retaking !== null && retaking.i32a === instance.i32a && retaking.index === instance.index) retaking = null;
          return id;
        }
      } catch {
        // (out of stack, say: told by a call, as with a flag on)
      }
    }
    return waitCalled(instance, label, what, blocking, timed);
  }

  /** Where slot `slot` starts in its page's Int32s. */
  const slotAt = (slot) => (slot & (PAGE_SLOTS - 1)) * SLOT_INTS;

  /** A new page of waits, told to the binding; `paging` off if it shows nothing of this thread. */
  function addPage() {
    const ints = new Int32Array(new SharedArrayBuffer(PAGE_SLOTS * SLOT_INTS * 4));
    if (!diagPage(ints, threadId)) {
      paging = false;
      return;
    }
    const page = pageInts.length;
    pageInts.push(ints);
    pageDoubles.push(new Float64Array(ints.buffer));
    if (header === null) {
      timeOrigin = Date.now() - monotonicNow();
      header = ints;
    }
    for (let slot = PAGE_SLOTS - 1; slot >= 1; slot--) free.push(page * PAGE_SLOTS + slot);
  }

  /**
   * Writes a wait into a free slot (its fields, then its generation, which
   * makes it seen); its id for waitEnd: the slot's, below 0. `since` is
   * monotonicNow()'s, or undefined (now). Plain stores: Atomics.store
   * is a call in V8 11 (~115 instructions each, 1.3 % of a take that
   * waits). They reach memory in order on x64; on a weakly ordered CPU
   * (arm64) a look at the very moment a wait starts may pair its
   * generation with the fields before (src/diag.rs: a snapshot shows it
   * so; a cycle is confirmed over 4 ms of looks).
   */
  function written(where, label, what, blocking, timed, since) {
    const at0 = since === undefined ? Date.now() : timeOrigin + since; // (before the pop: may throw)
    const slot = free.pop();
    const page = slot >> PAGE_SHIFT;
    const at = slotAt(slot);
    const ints = pageInts[page];
    const doubles = pageDoubles[page];
    ints[at + 1] = label | (blocking ? 256 : 0) | (timed ? 1024 : 0);
    ints[at + 2] = what;
    doubles[(at >> 1) + 2] = where.key;
    doubles[(at >> 1) + 3] = where.base;
    doubles[(at >> 1) + 4] = at0;
    generation = generation === 0x7fffffff ? 1 : generation + 1;
    ints[at] = generation;
    return -1 - slot;
  }

  /** waitBegin by a call to the binding (which can check the wait, and answer). */
  function waitCalled(instance, label, what, blocking, timed) {
    const mustWait = retaking !== null && retaking.i32a === instance.i32a && retaking.index === instance.index;
    if (mustWait) retaking = null; // (this wait's alone: not one its subscribers start)
    const ctx = !blocking && contexts !== null ? liveKeys(contexts.getStore(), true) : undefined;
    const info = label | (blocking ? 256 : 0) | (mustWait ? 512 : 0) | (timed ? 1024 : 0);
    let answer;
    try {
      answer = diagWait(instance.i32a, instance.index, info, what, Date.now(), threadId, ctx);
    } catch (error) {
      if (mustWait) return 0; // (a re-take goes on, unregistered)
      throw error;
    }
    if (typeof answer !== 'number') {
      if (Array.isArray(answer)) {
        const error = deadlockError(answer);
        publishDeadlock(error, false);
        throw error;
      }
      try {
        warnDeadlock(answer.cycle, blocking, mustWait);
      } catch (_) {
        // (out of stack, or a program's emitWarning: the take waits all the same)
      }
      answer = answer.wait;
    }
    const seen = answer % 4;
    if (seen !== flags) {
      try {
        sawFlags(seen);
      } catch (_) {
        // (seen again at the next wait)
      }
    }
    return (answer - seen) / 4;
  }

  // The lock a Condition's wait is taking again (see retake), until its
  // wait starts.
  let retaking = null;

  /**
   * Runs `take()`, a Condition's re-take of `lock` (its wait returns only
   * holding the lock again, whatever happened): its wait, if it has one,
   * never fails with ERR_DEADLOCK. A cycle it closes is a warning instead
   * (see warnDeadlock), and it waits on. The binding also drops the lock
   * from what its async context keeps: the Condition let go of it. Its
   * wait starts before take() first awaits, in every class, and before
   * anything else can run (subscribers of the wait's channels included:
   * their own takes are not re-takes).
   */
  function retake(lock, take) {
    if (!enabled) return take();
    const outer = retaking; // (a re-take started inside this one's start, by a subscriber)
    retaking = lock;
    try {
      return take();
    } finally {
      retaking = outer;
    }
  }

  // The cycles with a timed take warned of in this thread (a take retried
  // on its timeout would warn of the same again and again), by the words
  // of their waits; at most 1,024.
  const warned = new Set();

  /**
   * A re-take, or a wait of a cycle with a timed take in it, closed the
   * cycle `links`: what
   * ERR_DEADLOCK would say, as a process warning (DeadlockWarning,
   * ATOMICS_WAITASYNC_DEADLOCK), once per cycle, and on the deadlock
   * channel. Before a blocking take, written to stderr at once, as Node
   * writes a warning: the thread may never run the tick that would emit it.
   */
  function warnDeadlock(links, blocking, retake) {
    const error = deadlockError(links);
    publishDeadlock(error, true);
    if (!retake) {
      const seen = links.map((link) => `${link.threadId}:${link.waitsFor.buffer}:${link.waitsFor.index}`).sort().join(' ');
      if (warned.has(seen)) return;
      if (warned.size < 1024) warned.add(seen);
    }
    const why = retake
      ? "A Condition's wait, taking its lock again, is in a deadlock; it waits on (it returns only holding the lock)."
      : 'A take with a timeout is in a deadlock; it ends it at its timeout, and this wait waits on.';
    const message = `${why} ${error.message}`;
    if (!blocking) {
      process.emitWarning(message, { type: 'DeadlockWarning', code: 'ATOMICS_WAITASYNC_DEADLOCK' });
      return;
    }
    try {
      require('fs').writeSync(2, `(node:${process.pid}) [ATOMICS_WAITASYNC_DEADLOCK] DeadlockWarning: ${message}\n`);
    } catch (_) {
      // (stderr closed: the take waits all the same)
    }
  }

  /**
   * The keys of the holds an async context runs under that are still
   * held (a context outlives its scope: a timer set inside executeLocked
   * runs in it after the lock is released); only those of scopes if
   * `scoped`. Undefined for none.
   */
  function liveKeys(holds, scoped) {
    if (holds === undefined) return undefined;
    const keys = [];
    for (const hold of holds) if (hold.live && (hold.scoped || !scoped)) keys.push(hold.key);
    return keys.length > 0 ? keys : undefined;
  }

  /** The wait `id` (from waitBegin) has ended. */
  function waitEnd(id) {
    if (id < 0) {
      // (Once per wait: every caller ends its token once, from a finally.)
      const slot = -1 - id;
      pageInts[slot >> PAGE_SHIFT][slotAt(slot)] = 0;
      free.push(slot);
    } else if (id > 0) {
      diagWaitEnd(id);
    }
  }

  /**
   * The flags changed (here or in another thread): the takes are wrapped
   * while one is on, and put back when none is (each thread learns of a
   * change by another at its next wait).
   */
  function sawFlags(seen) {
    flags = seen;
    if (flags !== 0 && !wrapped) wrapAll();
    else if (flags === 0 && wrapped) unwrapAll();
  }

  /** Sets `flag` on or off for the process. */
  function set(flag, on) {
    if (!enabled) {
      throw new Error('atomics-waitasync: the loaded binary has no diagFlags: deadlock detection needs a binary of this version (npx atomics-waitasync-build)');
    }
    if (on !== undefined && typeof on !== 'boolean') {
      throw new TypeError(`The "enabled" argument must be a boolean. Received ${describe(on)}`);
    }
    const now = diagFlags();
    sawFlags(diagFlags(on === false ? now & ~flag : now | flag));
  }

  /**
   * Tells the binding that `instance` is taken here, at `stack` (undefined
   * if it could not be captured), `how`: 'blocking' (the thread stops
   * until it has it), 'try' (it never waits), or 'async' (asked for:
   * recorded before it is had, as lockdep records an attempt). The take's
   * key. For lock-order checks the take is paired with what its task
   * holds: a blocking take with everything its thread holds; an async
   * take with the holds of its async context (see holdTaken); a try with
   * nothing (it cannot deadlock).
   */
  function took(instance, stack, how) {
    let within;
    if (how === 'try') within = [];
    else if (how === 'async') within = (contexts === null ? undefined : liveKeys(contexts.getStore(), false)) || [];
    const answer = diagTook(instance.i32a, instance.index, stack, threadId, within);
    if (typeof answer === 'number') return answer;
    for (const inversion of answer.inversions) warnInversion(inversion);
    return answer.key;
  }

  // The latest hold of each key taken in this thread outside a scope:
  // when it is taken again, the one before was let go of (or, shared, is
  // no longer told apart: fewer holds kept, never more).
  const latest = new Map();

  /**
   * A new hold of `key`, live: the one before is not. `scoped`: held for
   * f of executeLocked and the like, which knows when it ends; else a
   * take's, whose release is not seen (it ends when the key is taken
   * again here), and which only lock-order checks count.
   */
  function newHold(key, scoped) {
    const hold = { key, live: true, scoped };
    if (!scoped) {
      // (A scope's hold ends with its scope, whoever takes the key meanwhile.)
      const before = latest.get(key);
      if (before !== undefined) before.live = false;
      latest.set(key, hold);
    }
    return hold;
  }

  /**
   * The task that made a take outside executeLocked and the like (a
   * release function, a blocking lock()) holds `key` from now on, for
   * lock-order checks: its async context says so, for the rest of the
   * task and what it starts, until that key is taken again in this
   * thread. (Not for deadlock detection: what the task starts may be
   * what releases it.)
   */
  function holdTaken(key) {
    if (contexts === null || typeof key !== 'number') return;
    const hold = newHold(key, false);
    const outer = contexts.getStore();
    contexts.enterWith(outer === undefined ? [hold] : [...outer.filter((h) => h.live), hold]);
  }

  /** The lock-order warning for `inversion` (src/napi/diag.rs took). */
  function warnInversion({ now, before, names }) {
    const [first, second] = names.map(nameOf);
    const message =
      `Lock order: thread ${now.threadId} took ${second} while holding ${first}; ` +
      `thread ${before.threadId} took them in the inverse order before. Two threads doing both at once deadlock.`;
    const detail = [
      `thread ${now.threadId} took ${first} at:\n${now.firstStack || '    (not recorded)'}`,
      `then ${second} at:\n${now.secondStack || '    (not recorded)'}`,
      `thread ${before.threadId} took ${second} at:\n${before.firstStack || '    (not recorded)'}`,
      `then ${first} at:\n${before.secondStack || '    (not recorded)'}`,
    ].join('\n');
    process.emitWarning(message, { type: 'LockOrderWarning', code: 'ATOMICS_WAITASYNC_LOCK_ORDER', detail });
  }

  // -- The wrappers ---------------------------------------------------------
  //
  // A wrapper only looks: what the take returns, it returns, the same value
  // or the same promise, at the same time. What it adds (the stack, the
  // binding's record of it, the hold in the task's context) is
  // best-effort: near the stack limit, or under a program's
  // Error.prepareStackTrace that throws, a hold goes unrecorded (reports
  // then say "where: not recorded"), never untaken or unreturned. Once
  // the flags are off, a wrapper still referenced elsewhere passes straight
  // through.

  /** A take that returns false when it did not take (or a release function when it did). */
  function wrapSync(proto, method, how) {
    const take = proto[method];
    wrap(proto, method, take, {
      [method](...args) {
        if (!wrapped) return take.apply(this, args);
        const stack = callerStack();
        const result = take.apply(this, args);
        if (result !== false) {
          try {
            holdTaken(took(this, stack, how));
          } catch (_) {
            // (not recorded: see above)
          }
        }
        return result;
      },
    }[method]);
  }

  /**
   * An async take that resolves once taken: recorded as it is asked for
   * (its promise is the caller's alone: looking at it would mark a
   * rejection handled).
   */
  function wrapAsync(proto, method) {
    const take = proto[method];
    wrap(proto, method, take, {
      [method](...args) {
        if (!wrapped) return take.apply(this, args);
        const stack = callerStack();
        let key;
        try {
          key = took(this, stack, 'async');
        } catch (_) {
          // (not recorded)
        }
        const promise = take.apply(this, args);
        try {
          holdTaken(key); // (after the take's wait started: not a hold that wait keeps)
        } catch (_) {
          // (not recorded)
        }
        return promise;
      },
    }[method]);
  }

  /**
   * A take that runs its first argument, f, holding what it took: f runs
   * in an async context that says so, as `{ key, live }`, live until f's
   * promise settles (the hold is released right after), or f returns
   * anything else (a thenable of a library included: looking at it again
   * could be seen).
   */
  function wrapScoped(proto, method) {
    const take = proto[method];
    // (Awaited as the take awaits it: nothing else is looked up.)
    const endAfter = async (promise, hold) => {
      try {
        await promise;
      } catch (_) {
        // (the take's to report)
      }
      hold.live = false;
    };
    wrap(proto, method, take, {
      [method](f, ...rest) {
        if (!wrapped || typeof f !== 'function') return take.call(this, f, ...rest);
        const instance = this;
        const stack = callerStack();
        return take.call(this, function (...args) {
          let key;
          try {
            key = took(instance, stack, 'async');
          } catch (_) {
            // (not recorded: f runs all the same)
          }
          if (contexts === null || typeof key !== 'number') return f.apply(this, args);
          const hold = newHold(key, true);
          const outer = contexts.getStore();
          let result;
          try {
            result = contexts.run(outer === undefined ? [hold] : [...outer, hold], () => f.apply(this, args));
          } catch (error) {
            hold.live = false;
            throw error;
          }
          // (A promise of the runtime's: the take awaits it anyway.)
          if (isPromise(result)) {
            try {
              endAfter(result, hold);
            } catch (_) {
              hold.live = false; // (out of stack: kept by nobody, rather than for good)
            }
          } else {
            hold.live = false;
          }
          return result;
        }, ...rest);
      },
    }[method]);
  }

  // What wrapAll put in place, to put back: [proto, method, original, wrapper].
  const replaced = [];

  /** Puts `wrapper` in place of `proto[method]`, `original`. */
  function wrap(proto, method, original, wrapper) {
    replaced.push([proto, method, original, wrapper]);
    proto[method] = wrapper;
  }

  // Each class's takes, by how they are wrapped.
  const kTakes = {
    AsyncLock: { blocking: ['lock'], tries: ['tryLock'], async: ['acquire'], scoped: ['executeLocked'] },
    Semaphore: { blocking: ['acquireSync'], tries: ['tryAcquire'], async: ['acquire'], scoped: ['runExclusive'] },
    RwLock: {
      blocking: ['readSync', 'writeSync', 'readGuard', 'writeGuard'],
      tries: ['tryRead', 'tryWrite'],
      async: ['read', 'write'],
      scoped: ['runShared', 'runExclusive'],
    },
  };

  /**
   * Puts every take back as it was: nothing is on any more. (A method the
   * program replaced since is left as the program put it; the wrapper
   * under it passes straight through.)
   */
  function unwrapAll() {
    wrapped = false;
    while (replaced.length > 0) {
      const [proto, method, original, wrapper] = replaced.pop();
      if (proto[method] === wrapper) proto[method] = original;
    }
  }

  function wrapAll() {
    wrapped = true;
    try {
      const { AsyncLocalStorage } = require('async_hooks');
      if (contexts === null && typeof AsyncLocalStorage === 'function') contexts = new AsyncLocalStorage();
    } catch {
      // (a runtime without it: async waits keep none of their thread's holds)
    }
    for (const Class of classes) wrapClass(Class);
  }

  function wrapClass(Class) {
    const takes = kTakes[Class.name];
    if (takes === undefined) return;
    for (const method of takes.blocking) wrapSync(Class.prototype, method, 'blocking');
    for (const method of takes.tries) wrapSync(Class.prototype, method, 'try');
    for (const method of takes.async) wrapAsync(Class.prototype, method);
    for (const method of takes.scoped) wrapScoped(Class.prototype, method);
  }

  let started = false;

  /**
   * Classes to wrap (at once, if a flag is on); the first call sets the
   * flags as ATOMICS_WAITASYNC_DEBUG says.
   */
  function start(list) {
    for (const Class of list) {
      classes.push(Class);
      if (wrapped) wrapClass(Class);
    }
    if (!enabled || started) return;
    started = true;
    const asked = String(process.env.ATOMICS_WAITASYNC_DEBUG || '').split(',').map((s) => s.trim());
    let want = 0;
    if (asked.includes('deadlocks')) want |= DETECT;
    if (asked.includes('lock-order')) want |= ORDER;
    const now = diagFlags();
    sawFlags(want === 0 ? now : diagFlags(now | want));
  }

  return {
    waitBegin,
    waitEnd,
    retake,
    start,
    /** Deadlock detection on (default) or off, for every thread of the process. */
    detectDeadlocks: (enabled = true) => set(DETECT, enabled),
    /** Lock-order checks on (default) or off, for every thread of the process. */
    checkLockOrder: (enabled = true) => set(ORDER, enabled),
  };
}

module.exports = { createTracking };
