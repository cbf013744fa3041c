'use strict';
// What the primitives of the family share: lib/async-lock.js and its word
// (lib/owned-word.js), lib/condition.js, lib/latch.js, lib/semaphore.js,
// lib/barrier.js, lib/rwlock.js and lib/async-mutex.js; and lib/atomics.js,
// for the signal of its cancellable waitAsync. Argument checks, intrinsic
// promises, the `{ timeout, signal }` options and their errors, the spin
// before a blocking wait, the async wait loop's bookkeeping (AsyncWait),
// stakes (what an instance holds or owes, for its thread's teardown),
// release functions with Symbol.dispose, and the delivery of a wake-up a
// thread owes (now, or from a timer when the addon's notify failed). Their
// lines of async takes are lib/line.js.

const {
  describe,
  monotonicNow,
  isMainThread,
  threadId,
  IntrinsicPromise, // undefined if not found
  reflectDefineProperty,
  objectKeys,
  isSharedArrayBuffer,
  isInt32Array,
  symbolDispose,
  symbolAsyncDispose,
  setTimer,
} = require('./describe.js');

// Every promise of the primitives is an intrinsic %Promise%, made by an async function
// and chained only with `await`: never with the global Promise of the moment
// or `then`, which a program may have replaced or changed (zone.js, bluebird,
// core-js, a subclass, a constructor or a `Symbol.species` that throws, a
// rewritten `Promise.prototype.constructor`). Each would change what a
// primitive returns or break it: a species that throws, looked up by `then`,
// made an executeLocked that had taken the lock throw and leave it held, or
// left a queued waiter that nobody listened to (a lost wake-up).
//
// `await p` looks up `p.constructor` and, when that is %Promise%, chains
// without looking up anything else. So every promise of ours is given an
// own `constructor`: %Promise% as found at load (lib/describe.js); where it
// could not be found, `undefined` (the chain then still works, through
// %Promise.prototype.then%). Promises of the caller's f are awaited as they
// are, as any code awaiting them would.
// Null-prototype descriptors: a property a program put on Object.prototype
// (`get`, a getter `enumerable`) cannot become part of them.
const kConstructor = { __proto__: null, value: IntrinsicPromise };
const ours = (promise) => {
  reflectDefineProperty(promise, 'constructor', kConstructor);
  return promise;
};

// `ours` for a promise the package awaits itself and never hands out (the
// binding's waitAsync promise of AsyncWait.next): the same own
// `constructor`, defined as a class field is, on the object the base
// constructor returns (CreateDataPropertyOrThrow: no setter, nothing of the
// program's is looked up). Reflect.defineProperty is a call into the
// runtime, which reads a null-prototype descriptor the slow way: ~3,300
// instructions per wait, 17 % of a take that waits
// (benchmark/instructions/lock-contended-same-thread.js); this is a map
// transition in optimized code. The property is writable, enumerable and
// configurable, where ours makes it none of these: only the package (or a
// program's promise hook, which is handed every promise) can tell. (A
// promise must not have been through `ours` before, nor be sealed or
// frozen, by such a hook say: this would throw a TypeError, and the wait
// fail, its wake-up passed on.)
class Returned {
  constructor(promise) {
    return promise;
  }
}
class OwnConstructor extends Returned {
  // (Computed: a field may not be named `constructor` literally.)
  ['constructor'] = IntrinsicPromise;
  constructor(promise) {
    super(promise);
  }
}
const oursAwaited = (promise) => new OwnConstructor(promise);


/** A timeout in milliseconds: a number >= 0 (Infinity allowed). */
function validateTimeout(timeout, name) {
  if (typeof timeout !== 'number') {
    throw new TypeError(`The "${name}" argument must be a number of milliseconds. Received ${describe(timeout)}`);
  }
  if (!(timeout >= 0)) {
    throw new RangeError(`The "${name}" argument must be >= 0 (or Infinity). Received ${describe(timeout)}`);
  }
  return timeout;
}

/** A count: an integer from 0 to `max`; errors name the argument `name`. */
function validateCount(value, name, max) {
  if (typeof value !== 'number') {
    throw new TypeError(`The "${name}" argument must be a number. Received ${describe(value)}`);
  }
  if (!(Number.isInteger(value) && value >= 0 && value <= max)) {
    throw new RangeError(`The "${name}" argument must be an integer from 0 to ${max}. Received ${describe(value)}`);
  }
  return value;
}

/**
 * `options.signal`: undefined, or an AbortSignal, or any object with its
 * surface (`aborted`, `reason`, `addEventListener`, `removeEventListener`),
 * so that Node 14, which has none, can pass one.
 */
function validateSignal(signal) {
  if (signal !== undefined &&
      (signal === null || typeof signal !== 'object' || typeof signal.aborted !== 'boolean' ||
       typeof signal.addEventListener !== 'function' || typeof signal.removeEventListener !== 'function')) {
    throw new TypeError(`The "options.signal" property must be an AbortSignal. Received ${describe(signal)}`);
  }
  return signal;
}

const kNoOptions = Object.freeze({ timeout: Infinity, signal: undefined, priority: 0 });

/**
 * `{ timeout, signal, priority }` of the async takes -> the same, validated:
 * `priority` (default 0) orders this instance's waiting takes, higher
 * first (lib/line.js).
 */
function validateOptions(options) {
  if (options === undefined) return kNoOptions;
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`The "options" argument must be an object. Received ${describe(options)}`);
  }
  const timeout = options.timeout === undefined ? Infinity : validateTimeout(options.timeout, 'options.timeout');
  const signal = validateSignal(options.signal);
  const priority = options.priority === undefined ? 0 : validatePriority(options.priority, 'options.priority');
  return { timeout, signal, priority };
}

/** A priority: any finite number (async-mutex's). */
function validatePriority(priority, name) {
  if (typeof priority !== 'number') {
    throw new TypeError(`The "${name}" argument must be a number. Received ${describe(priority)}`);
  }
  if (!Number.isFinite(priority)) {
    throw new RangeError(`The "${name}" argument must be a finite number. Received ${describe(priority)}`);
  }
  return priority;
}

/** The signal's reason; an AbortError like Node's where `reason` is missing (Node < 17.2). */
function abortReason(signal) {
  if (signal.reason !== undefined) return signal.reason;
  const error = new Error('The operation was aborted');
  error.name = 'AbortError';
  error.code = 'ABORT_ERR';
  return error;
}

/**
 * The Int32 slot a primitive lives in, from its constructor's arguments:
 * `(sab)` -> element `defaultIndex` of an Int32Array over the whole buffer;
 * `(sab, index)` or `(int32Array, index)` -> that element; `()` -> a fresh
 * buffer of `bytes` bytes. A primitive of several Int32s (`words`) takes
 * them from `index` on. Errors name the arguments `"sab"` and `"index"`.
 */
function int32Slot(sab, index, defaultIndex, bytes, words = 1) {
  let i32a;
  if (sab === undefined) {
    sab = new SharedArrayBuffer(bytes);
    i32a = new Int32Array(sab);
  } else if (isSharedArrayBuffer(sab)) {
    i32a = new Int32Array(sab, 0, Math.floor(sab.byteLength / 4));
  } else if (isInt32Array(sab) && isSharedArrayBuffer(sab.buffer)) {
    i32a = sab;
    sab = sab.buffer;
  } else {
    throw new TypeError(
      `The "sab" argument must be a SharedArrayBuffer or an Int32Array over one. Received ${describe(sab)}`
    );
  }
  if (i32a.length === 0) {
    throw new RangeError(`The "sab" argument must hold at least one Int32 (4 bytes). Received ${sab.byteLength} bytes`);
  }
  if (index === undefined) {
    index = defaultIndex;
  } else if (typeof index !== 'number') {
    throw new TypeError(`The "index" argument must be a number. Received ${describe(index)}`);
  }
  if (i32a.length < words) {
    throw new RangeError(`The "sab" argument must hold at least ${words} Int32s (${words * 4} bytes). Received ${sab.byteLength} bytes`);
  }
  if (!(Number.isInteger(index) && index >= 0 && index <= i32a.length - words)) {
    throw new RangeError(
      `The "index" argument must be an integer from 0 to ${i32a.length - words} (the Int32 slots of the buffer` +
        `${words > 1 ? `, ${words} from it` : ''}). Received ${describe(index)}`
    );
  }
  return { sab, i32a, index };
}

/**
 * The argument of a primitive's `from(value)`: an instance posted to this
 * thread (its structured clone, `{ sab, i32a, index }`) or a hand-made
 * `{ i32a, index }` / `{ sab, index }`; the constructor's arguments.
 */
function fromPosted(value, name, options) {
  if (value === null || typeof value !== 'object' || (value.i32a === undefined && value.sab === undefined)) {
    throw new TypeError(
      `The "value" argument must be ${name} or its posted copy { sab, i32a, index }. Received ${describe(value)}`
    );
  }
  // The posted instance's name, unless `options` gives one.
  if (options === undefined && typeof value.name === 'string') options = { name: value.name };
  return [value.i32a !== undefined ? value.i32a : value.sab, value.index, options];
}

/**
 * Whether a constructor's `sab` argument is its options instead (`new
 * AsyncLock({ name })`): a plain object without `sab`, `i32a` or `index`
 * (an ArrayBuffer, a view, a posted instance passed to the constructor
 * instead of from(), or any other object is a `sab`, and gets its
 * TypeError).
 */
function isOptionsBag(value) {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) &&
    value.sab === undefined && value.i32a === undefined && value.index === undefined;
}

/**
 * A constructor's `sab`, `index` and `options`, where `options` may also
 * come in place of `sab` (`new AsyncLock({ name })`): `[sab, index, name]`.
 */
function slotOptions(sab, index, options) {
  if (index === undefined && options === undefined && isOptionsBag(sab)) return [undefined, undefined, nameOption(sab)];
  return [sab, index, nameOption(options)];
}

/** A constructor's `options.name`: a string, or undefined. */
function nameOption(options) {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`The "options" argument must be an object. Received ${describe(options)}`);
  }
  const name = options.name;
  if (name !== undefined && typeof name !== 'string') {
    throw new TypeError(`The "options.name" property must be a string. Received ${describe(name)}`);
  }
  return name;
}

// How each class shows in a snapshot (the binding's lockWatch and
// stakeWatch, src/napi/diag.rs; lib/query.js reads them back): its number
// in the low byte, and how many Int32s from its word are its primitive's
// in the next.
const kLabel = Object.freeze({
  AsyncLock: 1 | (1 << 8),
  Semaphore: 2 | (3 << 8),
  RwLock: 3 | (2 << 8),
  Condition: 4 | (1 << 8),
  Barrier: 5 | (3 << 8),
  Latch: 6 | (1 << 8),
  MutexSemaphore: 8 | (2 << 8),
  SignalSemaphore: 9 | (2 << 8),
});
// The class names by label (async-mutex's Semaphore is a 'Semaphore' too).
const kKindOfLabel = [];
for (const name of objectKeys(kLabel)) kKindOfLabel[kLabel[name] & 0xff] = name === 'MutexSemaphore' ? 'Semaphore' : name;

/** An Error (or `Type`) with a Node-style `code`. */
function codedError(message, code, Type = Error) {
  const error = new Type(message);
  error.code = code;
  return error;
}

// ---------------------------------------------------------------------------
// Spinning before a blocking wait
// ---------------------------------------------------------------------------

// How a blocking take spins before it waits, in steps of an idle loop
// (under 1 ns each in optimized code here): it tries, idles 1, 2, 4, ... up
// to kMaxBackoff steps, tries again, and gives up after a last try once
// kSpinBudget steps or more are spent (5,119 steps, 15 tries: 3.5-5 us
// here). V8's Atomics.Mutex spins in the same shape: 64 pauses, doubling
// up to 16. Idling without reading the word leaves its cache
// line with the holder, which then takes and releases it many times
// undisturbed: two workers contending on a lock pass 2x the operations of
// trying back to back, and wait (sleep in the kernel) a hundred times less
// often.
const kSpinBudget = 4096;
const kMaxBackoff = 1024;
// Written by the idle loop so that the compiler keeps it.
let spinSink = 0;

/**
 * Calls `take(i32a, index, a, b)` until it returns true (then returns true)
 * or the spin budget is spent (false), idling with a growing back-off
 * between tries.
 */
function spinTake(take, i32a, index, a, b) {
  let backoff = 1;
  let spent = 0;
  while (!take(i32a, index, a, b)) {
    if (spent >= kSpinBudget) return false;
    let sink = spinSink;
    for (let i = 0; i < backoff; i++) sink = (sink + i) & 0xffff; // (a small integer: never boxed)
    spinSink = sink;
    spent += backoff;
    if (backoff < kMaxBackoff) backoff *= 2;
  }
  return true;
}

/**
 * One blocking wait of a primitive whose waiters announce themselves in
 * `i32a[index + 1]` (the Semaphore's and the RwLock's `waiters`), counted
 * in the instance's `stake[at]` right next to each atomic step: announce,
 * read the word, wait on the value read if `blocked(seen, a, b)`, leave.
 * False, having waited for nothing, once `deadline` has passed; else true
 * (look again).
 */
function announcedWait(wait, i32a, index, stake, at, deadline, blocked, a, b) {
  Atomics.add(i32a, index + 1, 1);
  stake[at]++;
  try {
    const seen = Atomics.load(i32a, index);
    if (blocked(seen, a, b)) {
      const remaining = deadline === Infinity ? Infinity : deadline - monotonicNow();
      if (remaining <= 0) return false;
      wait(i32a, index, seen, remaining);
    }
  } finally {
    Atomics.sub(i32a, index + 1, 1);
    stake[at]--;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Wake-ups owed
// ---------------------------------------------------------------------------

/**
 * Delivers a wake-up (`count` waiters of `i32a[index]`) whose notify failed
 * other than out of stack (a panic in the addon), from a timer, backing off
 * to once a second, until a notify returns (whether it found a waiter or
 * not). Until then the waiter sleeps, but not for good. For its first ten
 * tries (about a second) the timer keeps this thread alive (the waiter may
 * be another thread's, whose wait does not keep this one's event loop
 * going: a worker that exits right after its release would take the
 * wake-up with it); after that it does not, so that a notify that always
 * fails cannot keep a process alive for good.
 */
function notifyLater(notify, i32a, index, count, delay) {
  const timer = setTimer(() => {
    try {
      notify(i32a, index, count);
    } catch (_) {
      notifyLater(notify, i32a, index, count, Math.min(1000, delay * 2 + 1));
    }
  }, delay);
  if (delay >= 512 && timer !== null && typeof timer === 'object' && typeof timer.unref === 'function') timer.unref();
}

/**
 * A wake-up this thread owes the waiters of `i32a[index]`: notified now
 * (returns how many it woke), or, if that fails (a panic in the addon; not
 * the stack: callers are at the bottom of theirs or have already failed for
 * another reason), from a timer (notifyLater; returns -1). Throws only if
 * even the timer cannot be set.
 */
function deliver(notify, i32a, index, count) {
  try {
    return notify(i32a, index, count);
  } catch (_) {
    notifyLater(notify, i32a, index, count, 0);
    return -1;
  }
}

// ---------------------------------------------------------------------------
// The async wait loop
// ---------------------------------------------------------------------------

/**
 * The bookkeeping of one async wait of a primitive for its word to allow
 * what it wants, bounded by `{ timeout, signal }`. The primitive's own
 * async frame runs the loop and awaits each promise itself:
 *
 *   const waiting = new AsyncWait(env, i32a, index, timeout, signal, onTimeout);
 *   try {
 *     for (;;) {
 *       const expected = look(waiting.woken);  // took what it wanted: 0
 *       if (expected === 0) break;
 *       const pending = waiting.next(expected); // throws the timeout
 *       if (pending !== undefined) waiting.settled(await pending); // throws on abort
 *     }
 *   } finally {
 *     waiting.end();
 *   }
 *
 * The await stays in the primitive's frame, never on a promise of another
 * frame: where %Promise% could not be found, every await calls the
 * program's %Promise.prototype.then%, which may throw, and an await of an
 * inner frame that failed so would leave that frame running on, to take
 * what it waits for after the caller's promise had rejected, for nobody.
 * Here a failed await is the frame's own exception, and `end()` flushes the
 * waiter it left queued.
 *
 * No waitAsync of the word can be taken back, so an abort flushes ours out
 * of the queue by waking every waiter of the word: the others look again
 * and re-queue (a spurious wake-up, never a lost one). The frame rejects
 * only once ours has settled, leaving nothing queued. A wake-up ours took
 * that was meant for another (a release's, not the flush) is passed on by
 * `env.leave(i32a, index, woken, flushed)` when the wait gives up.
 *
 * `env` (waitEnv): the package's waitAsync and notify, the primitive's
 * passOn and leave, and `queued.n`, how many of its waits this thread has
 * queued now.
 */
class AsyncWait {
  constructor(env, i32a, index, timeout, signal, onTimeout) {
    this.env = env;
    this.i32a = i32a;
    this.index = index;
    this.timeout = timeout;
    this.deadline = timeout === Infinity ? Infinity : monotonicNow() + timeout;
    this.onTimeout = onTimeout;
    this.signal = signal;
    /** When it first waited (0 before). */
    this.since = 0;
    /** Whether its last wait ended in a wake-up ('ok'). */
    this.woken = false;
    this.queued = false; // a waitAsync of ours is pending
    this.timedOut = false; // next() threw the timeout
    this.aborted = false;
    this.flushed = false; // the abort's notify returned
    this.onAbort = null;
    if (signal !== undefined) {
      this.onAbort = () => {
        this.aborted = true;
        // Should this notify throw (near the stack limit), ours stays
        // queued until a release wakes it: `leave` passes that wake-up on.
        try {
          if (this.queued) env.notify(i32a, index, Infinity);
          this.flushed = true;
        } catch (_) {
          // (an exception here would be the signal's uncaught one)
        }
      };
      signal.addEventListener('abort', this.onAbort);
    }
  }

  /**
   * Waits for the word to move on from `expected`, for `cap` ms at most:
   * undefined if that ended at once (the word had moved on: look again),
   * else the promise to await and hand to settled(). Throws the
   * onTimeout(timeout) error once the deadline has passed.
   */
  next(expected, cap) {
    let remaining = Infinity;
    if (this.deadline !== Infinity) {
      remaining = this.deadline - monotonicNow();
      if (remaining <= 0) {
        this.timedOut = true;
        throw this.onTimeout(this.timeout);
      }
    }
    if (cap !== undefined && cap < remaining) remaining = cap;
    if (this.since === 0) this.since = monotonicNow();
    const result = this.env.waitAsync(this.i32a, this.index, expected, remaining);
    this.woken = false; // 'not-equal': the word changed, look again
    if (!result.async) return undefined;
    this.queued = true;
    this.env.queued.n++;
    return oursAwaited(result.value);
  }

  /** The outcome of next()'s promise; throws the signal's reason if it aborted. */
  settled(outcome) {
    this.queued = false;
    this.env.queued.n--;
    this.woken = outcome === 'ok';
    if (this.aborted) {
      this.leave();
      throw abortReason(this.signal);
    }
  }

  /** Passes on a wake-up ours took for nothing (see above). */
  leave() {
    this.env.leave(this.i32a, this.index, this.woken, this.flushed);
    this.woken = false;
  }

  /**
   * The loop is over, however it ended. If ours is still queued (an await
   * that failed: out of stack, or a program's `then` where %Promise% could
   * not be found), nobody will see its wake-up: flush it out (as an abort
   * does) and give up.
   */
  end() {
    try {
      if (this.queued) {
        this.queued = false;
        this.env.queued.n--;
        this.env.passOn(this.i32a, this.index, Infinity);
      }
    } finally {
      // Last: a signal's removeEventListener that throws must not keep the
      // flush from happening.
      if (this.onAbort !== null) this.signal.removeEventListener('abort', this.onAbort);
    }
  }
}

/**
 * The `env` of a primitive's AsyncWaits, over the package's `{ waitAsync,
 * notify }`. By default a wake-up owed is delivered (deliver), and one a
 * wait took for nothing is passed on unless the abort's flush woke every
 * waiter anyway; `overrides` may replace `passOn(i32a, index, count)` and
 * `leave(i32a, index, woken, flushed)`.
 */
function waitEnv({ waitAsync, notify }, overrides) {
  const env = {
    waitAsync,
    notify,
    queued: { n: 0 },
    passOn: (i32a, index, count) => deliver(notify, i32a, index, count),
    leave: (i32a, index, woken, flushed) => {
      if (woken && !flushed) env.passOn(i32a, index, 1);
    },
  };
  if (overrides !== undefined) {
    if (overrides.passOn !== undefined) env.passOn = overrides.passOn;
    if (overrides.leave !== undefined) env.leave = overrides.leave;
  }
  return env;
}

// ---------------------------------------------------------------------------
// Stakes: what an instance holds or owes, for its thread's teardown
// ---------------------------------------------------------------------------

/** The first argument of a primitive's constructor when from() attaches (writes nothing). */
const kAttach = Symbol('attach');

/**
 * Throws where the loaded binary has no stakeWatch (older than this file):
 * no primitive, rather than one whose holds a dead thread keeps for good.
 */
function requireStakeWatch(stakeWatch, name) {
  if (typeof stakeWatch !== 'function') {
    throw new Error(`atomics-waitasync: the loaded binary has no stakeWatch: ${name} needs a binary of this version (npx atomics-waitasync-build)`);
  }
}

/**
 * A new instance's stake: `ints` Int32s of a SharedArrayBuffer of its own,
 * in which it keeps what its thread holds of the primitive at
 * `i32a[index]`, or owes its waiters, written right next to the atomic
 * step each counts; watched by the thread's env (the binding's stakeWatch,
 * src/napi/stakes.rs, as `kind`), whose teardown acts on what it still says.
 */
function watchStake(stakeWatch, i32a, index, kind, ints, instance, label, name) {
  const stake = new Int32Array(new SharedArrayBuffer(ints * 4));
  stakeWatch(i32a, index, kind, stake, instance, label, name, threadId);
  return stake;
}

/**
 * Delivers a wake-up of every waiter of `i32a[index]` that the stake says
 * is owed (`stake[at]` 1, set right next to the atomic step that made
 * them due one, with no call between the two: before it, or after it and
 * the look at `waiters`), then clears it.
 */
function payOwed(notify, i32a, index, stake, at) {
  deliver(notify, i32a, index, Infinity);
  stake[at] = 0;
}

// ---------------------------------------------------------------------------
// Release functions
// ---------------------------------------------------------------------------

// A release function's own `then` (see makeReleaser).
const kNoThen = { __proto__: null, value: undefined };

/**
 * A release function for a hold (idempotent, like async-mutex's), with
 * `[Symbol.dispose]` / `[Symbol.asyncDispose]` where the runtime has them,
 * and `props` (name -> value) as read-only enumerable properties. `release()`
 * gives the hold back; should it throw, `stillHeld()` says whether the hold
 * is still there (out of stack before anything changed: a retry releases),
 * or not (any other failure: spent, so that a retry cannot free a later
 * hold). Its own `then` is undefined: a promise resolves with it, and
 * resolving with a function looks up its `then`, which must not reach a
 * Function.prototype.then or Object.prototype.then.
 */
function makeReleaser(release, stillHeld, props) {
  let released = false;
  const releaser = () => {
    if (released) return;
    try {
      release();
    } catch (error) {
      if (!stillHeld()) released = true;
      throw error;
    }
    released = true;
  };
  reflectDefineProperty(releaser, 'then', kNoThen);
  if (props !== undefined) {
    const names = objectKeys(props);
    for (let i = 0; i < names.length; i++) {
      reflectDefineProperty(releaser, names[i], { __proto__: null, value: props[names[i]], enumerable: true });
    }
  }
  // Defined, not assigned: an assignment would run a setter that a program
  // put on Function.prototype or Object.prototype. (The attributes an
  // assignment gives.)
  if (symbolDispose) {
    reflectDefineProperty(releaser, symbolDispose, {
      __proto__: null,
      value: releaser,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  if (symbolAsyncDispose) {
    reflectDefineProperty(releaser, symbolAsyncDispose, {
      __proto__: null,
      value: async () => {
        releaser();
      },
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return releaser;
}

module.exports = {
  monotonicNow,
  isMainThread,
  threadId,
  codedError,
  kAttach,
  requireStakeWatch,
  watchStake,
  payOwed,
  deliver,
  spinTake,
  announcedWait,
  AsyncWait,
  waitEnv,
  makeReleaser,
  int32Slot,
  fromPosted,
  kNoOptions,
  slotOptions,
  kLabel,
  kKindOfLabel,
  IntrinsicPromise,
  ours,
  reflectDefineProperty,
  symbolDispose,
  symbolAsyncDispose,
  validateTimeout,
  validateCount,
  validateOptions,
  validatePriority,
  validateSignal,
  abortReason,
};
