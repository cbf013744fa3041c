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
//   task of the thread may release the others.
//
// Switched on by ATOMICS_WAITASYNC_DEBUG (a list: `deadlocks`,
// `lock-order`), read by each thread as it loads the package, or by
// detectDeadlocks() / checkLockOrder(), for every thread of the process.

const { threadId } = require('worker_threads');
const { codedError, ours, kLabel, kKindOfLabel } = require('./core');
const { describe } = require('./describe');
const { isPromise } = require('util').types;

const DETECT = 1;
const ORDER = 2;


/** A name for the primitive a cycle link or an inversion names. */
function nameOf(p) {
  const kind = kKindOfLabel[p.label] || 'primitive';
  return p.name !== undefined ? `${kind} ${JSON.stringify(p.name)}` : `${kind} #${p.buffer}[${p.index}]`;
}

/** What a wait of class `label` asked for, as query() says it. */
function askedText(label, what) {
  if (label === 2 || label === 8 || label === 9) return `${what} permit${what === 1 ? '' : 's'} of`;
  if (label === 3) return what === 2 ? 'the write lock of' : 'a read of';
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

/** The stack of the caller's caller's caller, as text (the take's caller). */
function callerStack() {
  const holder = {};
  Error.captureStackTrace(holder, callerStack);
  // The first line is "Error"; the next is the wrapper's frame.
  const lines = String(holder.stack).split('\n');
  return lines.slice(2).join('\n');
}

/**
 * The tracking of this thread over the binding's diag functions (each
 * undefined in a binary older than this file: nothing is tracked then).
 */
function createTracking({ diagWait, diagWaitEnd, diagTook, diagFlags }) {
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
   * timeout or not: its id, for waitEnd. Throws ERR_DEADLOCK if, with
   * detection on, it would close a cycle: then it is not registered. (A
   * wait with a timeout ends by itself: it is in no cycle.)
   */
  function waitBegin(instance, label, what, blocking, timed) {
    if (!enabled) return 0;
    const ctx = !blocking && contexts !== null ? liveKeys(contexts.getStore()) : undefined;
    const info = label | (blocking ? 256 : 0) | (retaking > 0 ? 512 : 0) | (timed ? 1024 : 0);
    let answer = diagWait(instance.i32a, instance.index, info, what, Date.now(), threadId, ctx);
    if (typeof answer !== 'number') {
      if (Array.isArray(answer)) {
        const error = deadlockError(answer);
        publishDeadlock(error, false);
        throw error;
      }
      warnDeadlock(answer.cycle, blocking);
      answer = answer.wait;
    }
    const seen = answer % 4;
    if (seen !== flags) sawFlags(seen);
    return (answer - seen) / 4;
  }

  // While above 0, the takes of this thread are re-takes that must not
  // fail (see retake).
  let retaking = 0;

  /**
   * Runs `take()`, a Condition's re-take of its lock (its wait returns
   * only holding the lock again, whatever happened): its wait, if it has
   * one, never fails with ERR_DEADLOCK. A cycle it closes is a warning
   * instead (see warnDeadlock), and it waits on. The binding also drops
   * the lock from what its async context keeps: the Condition let go of
   * it. Its wait starts before take() first awaits, in every class.
   */
  function retake(take) {
    if (!enabled) return take();
    retaking += 1;
    try {
      return take();
    } finally {
      retaking -= 1;
    }
  }

  /**
   * A re-take closed the cycle `links`: what ERR_DEADLOCK would say, as a
   * process warning (DeadlockWarning, ATOMICS_WAITASYNC_DEADLOCK). Before
   * a blocking one, written to stderr at once, as Node writes a warning:
   * the thread may never run the tick that would emit it.
   */
  function warnDeadlock(links, blocking) {
    const error = deadlockError(links);
    publishDeadlock(error, true);
    const message = `A Condition's wait, taking its lock again, is in a deadlock; it waits on (it returns only holding the lock). ${error.message}`;
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
   * held: a context outlives its scope (a timer set inside executeLocked
   * runs in it after the lock is released).
   */
  function liveKeys(holds) {
    if (holds === undefined) return undefined;
    const keys = [];
    for (const hold of holds) if (hold.live) keys.push(hold.key);
    return keys;
  }

  /** The wait `id` (from waitBegin) has ended. */
  function waitEnd(id) {
    if (id > 0) diagWaitEnd(id);
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
   * Tells the binding that `instance` was taken here, at `stack`, by an
   * async take (`async`: acquire(), executeLocked …) or a blocking one; the
   * take's key. For lock-order checks the take is paired with what its
   * task holds: made inside executeLocked, runShared or runExclusive, the
   * holds of that scope; else, for a blocking take, everything its thread
   * holds (it stops the thread), and for an async one nothing (the
   * thread's holds are other tasks': pairing with them would report
   * orders no task took).
   */
  function took(instance, stack, async) {
    const store = contexts === null ? undefined : contexts.getStore();
    const within = store !== undefined ? liveKeys(store) : async ? [] : undefined;
    const answer = diagTook(instance.i32a, instance.index, stack, threadId, within);
    if (typeof answer === 'number') return answer;
    for (const inversion of answer.inversions) warnInversion(inversion);
    return answer.key;
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
  // binding's record of it) is best-effort: near the stack limit, or under
  // a Promise whose species or `then` throws, a hold goes unrecorded
  // (reports then say "where: not recorded"), never untaken or unreturned.

  /** A take that returns false when it did not take (or a release function when it did). */
  function wrapSync(proto, method) {
    const take = proto[method];
    wrap(proto, method, take, {
      [method](...args) {
        const stack = callerStack();
        const result = take.apply(this, args);
        if (result !== false) {
          try {
            took(this, stack, false);
          } catch (_) {
            // (not recorded: see above)
          }
        }
        return result;
      },
    }[method]);
  }

  /**
   * Records, once `promise` (an async take's) fulfils, that `instance` was
   * taken at `stack`. Chained when the take returns, so it runs before the
   * caller's own await goes on. Never rejects.
   */
  const observe = async (promise, instance, stack) => {
    try {
      await promise;
    } catch (_) {
      return; // (not taken)
    }
    try {
      took(instance, stack, true);
    } catch (_) {
      // (not recorded)
    }
  };

  /** An async take that resolves once taken. */
  function wrapAsync(proto, method) {
    const take = proto[method];
    wrap(proto, method, take, {
      [method](...args) {
        const stack = callerStack();
        const promise = take.apply(this, args);
        try {
          observe(promise, this, stack);
        } catch (_) {
          // (out of stack: not recorded)
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
        if (typeof f !== 'function') return take.call(this, f, ...rest);
        const instance = this;
        const stack = callerStack();
        return take.call(this, function (...args) {
          let key = 0;
          try {
            key = took(instance, stack, true);
          } catch (_) {
            // (not recorded: f runs all the same)
          }
          if (contexts === null || key === 0) return f.apply(this, args);
          const hold = { key, live: true };
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

  // What wrapAll put in place, to put back: [proto, method, original].
  const replaced = [];

  /** Puts `wrapper` in place of `proto[method]`, `original`. */
  function wrap(proto, method, original, wrapper) {
    replaced.push([proto, method, original]);
    proto[method] = wrapper;
  }

  // Each class's takes, by how they are wrapped.
  const kTakes = {
    AsyncLock: { sync: ['lock', 'tryLock'], async: ['acquire'], scoped: ['executeLocked'] },
    Semaphore: { sync: ['acquireSync', 'tryAcquire'], async: ['acquire'], scoped: ['runExclusive'] },
    RwLock: {
      sync: ['readSync', 'writeSync', 'tryRead', 'tryWrite', 'readGuard', 'writeGuard'],
      async: ['read', 'write'],
      scoped: ['runShared', 'runExclusive'],
    },
  };

  /** Puts every take back as it was: nothing is on any more. */
  function unwrapAll() {
    wrapped = false;
    while (replaced.length > 0) {
      const [proto, method, original] = replaced.pop();
      proto[method] = original;
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
    for (const Class of classes) {
      const takes = kTakes[Class.name];
      if (takes === undefined) continue;
      for (const method of takes.sync) wrapSync(Class.prototype, method);
      for (const method of takes.async) wrapAsync(Class.prototype, method);
      for (const method of takes.scoped) wrapScoped(Class.prototype, method);
    }
  }

  /** The classes to wrap; then the flags as ATOMICS_WAITASYNC_DEBUG says. */
  function start(list) {
    classes.push(...list);
    if (!enabled) return;
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

module.exports = { createTracking, kLabel };
