'use strict';
// The spec surface: wait, waitAsync and notify exactly as ECMA-262 defines
// Atomics.wait / Atomics.waitAsync (DoWait) and Atomics.notify, on top of a
// binding that does the waiting. Every argument is validated and coerced
// here, once, in the spec's order, with the spec's error types; the binding
// receives either the caller's own arguments, when they are primitives of
// the right types (the fast paths: waitAsync's, and doWait's for wait), or
// the validated and coerced values. Beyond the spec: a 5th argument of waitAsync, `{ signal }`,
// that makes the wait cancellable (after the spec's steps), and ref/unref,
// whether pending waits keep this thread alive.
//
// A factory, so tests can hand it a fake binding: index.js makes the
// package's triple with it, and lib/polyfill.js the one it installs.

const {
  describe,
  isNodeItself,
  uncurry,
  TypedArrayPrototype,
  typedArrayName,
  typedArrayBuffer,
  typedArrayLength,
  isMainThread,
  kPendingTable,
  reflectDefineProperty,
} = require('./describe.js');

// lib/core.js, for waitAsync's `{ signal }`: loaded by the first call with
// options (most programs never make one).
let core = null;
const signals = () => (core === null ? (core = require('./core.js')) : core);


// Binding result codes (src/napi/mod.rs `code`).
const OK = 0;
const NOT_EQUAL = 1;
const TIMED_OUT = 2;
const PENDING = 3;
const OK_STOPPING = 4;

const kStrings = ['ok', 'not-equal', 'timed-out'];

// Any method that runs ValidateTypedArray throws a TypeError on a detached
// or out-of-bounds view; `entries` exists on every runtime we support.
const typedArrayEntries = uncurry(TypedArrayPrototype.entries);

// The SharedArrayBuffer byteLength getter throws for anything that is not
// a SharedArrayBuffer (of any realm): a builtin, far cheaper than a call to
// util.types.isSharedArrayBuffer on the hot path.
const sharedByteLength = uncurry(Object.getOwnPropertyDescriptor(SharedArrayBuffer.prototype, 'byteLength').get);

function isSharedArrayBuffer(buffer) {
  try {
    sharedByteLength(buffer);
    return true;
  } catch (_) {
    return false;
  }
}

const MAX_SAFE_INTEGER = Number.MAX_SAFE_INTEGER;
// Taken at load, like the other intrinsics here: a program that replaces
// them later must not change how arguments are coerced.
const mathTrunc = Math.trunc;
const bigIntAsIntN = BigInt.asIntN;

// An interrupt point for the sync wait's loop. worker.terminate() asks V8 to
// stop at its next interrupt check, but a loop that only calls a native
// function may run ~500 ms before the interpreter's budget-based check
// fires. The engine's own Atomics.wait handles pending interrupts whenever
// it gets past its value check, even with timeout 0, so one call per slice
// (every 10 ms, ~0.3 us) makes termination prompt. Taken at load time,
// before any polyfill replaces Atomics.wait; and should a polyfill of this
// package already be installed (this is a second copy of this module, in
// another module registry, say), the function it replaced, which it keeps
// under kEngineWait: its own wait would end the wait in progress.
const kEngineWait = Symbol.for('atomics-waitasync.engineWait');
let engineWait = Atomics.wait;
try {
  let found = engineWait;
  for (let hops = 0; hops < 8 && typeof found === 'function' && typeof found[kEngineWait] === 'function'; hops++) {
    found = found[kEngineWait];
  }
  engineWait = found;
} catch (_) {
  // (A revoked Proxy on the way, say.) Not a wait that may be the
  // package's own: the plain-call interrupt point below.
  engineWait = undefined;
}
const kInterruptCell = new Int32Array(new SharedArrayBuffer(4));
let interruptPoint = function interruptPoint() {
  engineWait(kInterruptCell, 0, 0, 0);
};
try {
  interruptPoint();
} catch (_) {
  // An engine whose Atomics.wait refuses to run here: a plain function
  // call still gets a stack check at entry in unoptimised code.
  interruptPoint = function interruptPoint() {};
}

// Whether the binding can tell, when a sync wait is woken, that this
// thread is being terminated (src/napi/ffi.rs `can_run_js`): Node's N-API
// fails its JS-running calls from the moment terminate() is called. Bun's
// and Deno's N-API are not known to, so there every woken wait takes the
// interrupt point, as it did before the binding checked.
const kBindingSeesStop = typeof process === 'object' && process !== null && isNodeItself(process.versions);

/**
 * ValidateIntegerTypedArray(typedArray, waitable = true). Returns whether
 * the buffer is shared; `isBigInt` is reported through the name check.
 */
function validateWaitable(typedArray) {
  // ValidateTypedArray: must be a TypedArray ...
  const name = typedArrayName(typedArray);
  if (name === undefined) {
    throw new TypeError(
      `The "typedArray" argument must be an Int32Array or BigInt64Array. Received ${describe(typedArray)}`
    );
  }
  // ... neither detached nor out of bounds (only a non-shared buffer can be).
  const shared = isSharedArrayBuffer(typedArrayBuffer(typedArray));
  if (!shared) {
    try {
      typedArrayEntries(typedArray);
    } catch (_) {
      throw new TypeError('The "typedArray" argument is detached or out of bounds');
    }
  }
  // waitable: Int32Array or BigInt64Array only.
  if (name !== 'Int32Array' && name !== 'BigInt64Array') {
    throw new TypeError(
      `The "typedArray" argument must be an Int32Array or BigInt64Array. Received ${describe(typedArray)}`
    );
  }
  return shared;
}

/** ToIntegerOrInfinity (ToNumber first: a BigInt or Symbol is a TypeError). */
function toIntegerOrInfinity(value, name) {
  const number = toNumber(value, name);
  if (number !== number || number === 0) return 0; // NaN, -0
  return mathTrunc(number);
}

/** ValidateAtomicAccess: ToIndex, then the bounds check against `length`. */
function validateIndex(index, length) {
  let integer;
  if (typeof index === 'number' && index >= 0 && index <= MAX_SAFE_INTEGER && index % 1 === 0) {
    integer = index; // fast path: already an integral index
  } else {
    integer = index === undefined ? 0 : toIntegerOrInfinity(index, 'index');
    if (integer < 0 || integer > MAX_SAFE_INTEGER) {
      throw new RangeError(`The "index" argument must be an integer from 0 to 2^53-1. Received ${describe(index)}`);
    }
  }
  if (integer >= length) {
    throw new RangeError(`The "index" argument ${integer} is out of range: the typed array has ${length} elements`);
  }
  return integer;
}

/** ToBigInt64 for BigInt64Array (a Number is a TypeError), ToInt32 otherwise. */
function coerceValue(value, isBigInt) {
  // BigInt.asIntN runs ToBigInt on its argument, which is the spec's
  // ToBigInt64; `value | 0` is ToInt32. Primitives that would throw are
  // caught first, only to name the argument; objects go through their
  // ToPrimitive (valueOf, Symbol.toPrimitive) exactly once, as in the spec.
  if (isBigInt) {
    if (typeof value === 'number' || value === undefined || value === null || typeof value === 'symbol') {
      throw new TypeError(`The "value" argument must be a BigInt for a BigInt64Array. Received ${describe(value)}`);
    }
    return bigIntAsIntN(64, value);
  }
  if (typeof value === 'bigint' || typeof value === 'symbol') {
    throw new TypeError(`The "value" argument must be a Number for an Int32Array. Received ${describe(value)}`);
  }
  return value | 0;
}

/** ToNumber for an argument named `name`: a BigInt or Symbol is a TypeError. */
function toNumber(value, name) {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint' || typeof value === 'symbol') {
    throw new TypeError(`The "${name}" argument must be convertible to a Number. Received ${describe(value)}`);
  }
  return +value;
}

/** ToNumber(timeout); NaN or undefined -> +Infinity, negative -> 0. */
function coerceTimeout(timeout) {
  if (timeout === undefined) return Infinity;
  const q = toNumber(timeout, 'timeout');
  if (q !== q) return Infinity;
  return q > 0 ? q : 0;
}

// The fast path. When index, value and timeout (or count) are primitives of
// the types the spec would coerce to anyway, coercing them has no side
// effects, so the binding can take them as they are: it does the same
// coercions and checks natively and throws when anything is off (a
// non-waitable or non-shared array, an index out of range or fractional, a
// value of the wrong type). Then the slow path below runs the spec's steps in
// order and throws the spec's error. One native call, no allocation: it is
// what makes the common call cheap from the first one on, before the JIT
// has looked at this code.
const isPlainValue = (value) => typeof value === 'number' || typeof value === 'bigint';

/**
 * The binding step of notify, with the registry's "may be waiting" counts
 * read first (src/registry.rs `may_wait`): when the element's count is 0,
 * no waiter of the package's can need this notify, and it returns 0
 * without a native call (which costs more than the engine's whole notify).
 *
 * Why that loses no wake-up: a waiter adds itself to its count (a SeqCst
 * read-modify-write) before it reads the element's value, and leaves it
 * only once it has left its queue. Here the caller's store of the value
 * (plain or atomic) comes first, then the count is read with a
 * read-modify-write too, `Atomics.add(counts, slot, 0)`, not a load: every
 * change of a count is a read-modify-write, so if this one reads 0, a
 * waiter's later increment reads from it, which orders the caller's store
 * before that waiter's value check (release -> acquire; a full barrier on
 * x86, and on ARM64 as well, where a plain load after a fence would not
 * be ordered). So it sees the new value and does not queue. The spec's
 * notify is a critical section over the element's waiters; this reads it
 * as "nobody was in the list". (A load of the count plus a fence cost
 * twice this: V8 calls a builtin for each Atomics function.)
 *
 * The counts are an external ArrayBuffer, not a SharedArrayBuffer, and
 * ECMAScript's memory model orders nothing on a non-shared buffer: this
 * rests on the engine, not the spec. V8's Atomics.add builtin does not look
 * at sharedness (a `lock xadd` on x64, `ldaxr`/`stlxr` on ARM64; their byte
 * forms for the Uint8Array of counts), and TurboFan on Node 20 calls it
 * rather than inlining it (a review read V8's builtin and the optimized
 * code for an Int32Array, 2026-11; the byte kind goes through the same
 * builtin). An engine that lowered it to a plain load for non-shared memory
 * would break this. (Each such add writes: a notify dirties the page of its
 * element's count, so notifies on many idle elements can make up to the 8
 * MB of counts resident.)
 *
 * The count of an element is found from its address mod 2^32; the
 * binding tells the address once per typed array (`addressOf`); the last
 * array is kept, others in a WeakMap. Only arrays over a SharedArrayBuffer
 * are kept (`addressOf` throws for others), so the length read once stays
 * true (it can only grow). When the count says someone may wait, the
 * binding is called with the element's address (`notifyAt`), which skips
 * its own typed-array look-up (half of a native notify).
 *
 * The counts, `addressOf`, `notifyAt` and `notifyOneAt` (a notify of one:
 * one argument fewer) come from the binding's
 * `takeNotifyCounts()`, which hands them over once per thread, to the first
 * caller, and keeps nothing of them on the binding object: in other hands,
 * zeroed counts would make every notify in the process skip its waiters,
 * and `notifyAt` wakes any element whose address it is given. In a thread
 * where the package is loaded, this module is that first caller, so code
 * that gets at the binding afterwards finds nothing to misuse. (This is a
 * guard against mistakes, not a security boundary: code that loads the
 * binary itself in a thread where the package has not loaded yet takes
 * that thread's kit, and the counts are the whole process's.) So they
 * never leave this closure, and the only addresses `notifyAt` ever gets
 * are those of an array the caller passed, at a Number index in bounds
 * (`index` is checked to be a Number here, not only by the callers: this
 * function is exported, and an object's valueOf could say one index to
 * the bounds check and another to the address). Where the binding hands
 * out nothing (another copy of this module in this thread took the kit, a
 * runtime without external buffers, a fake binding), every notify calls
 * the binding's `notify`, as it always may.
 */
// Taken once, like the other intrinsics here: the skip's correctness rests
// on it being the engine's read-modify-write, not a program's wrapper.
const atomicsAdd = Atomics.add;

// One skipping notify per binding: index.js's functions and the installed
// Atomics.notify share its address cache.
const skippers = new WeakMap();
// A skipping notify's maker of createAtomics' notify (makeSkippingNotify).
const notifyMakers = new WeakMap();

function skippingNotify(binding) {
  let skipper = skippers.get(binding);
  if (skipper === undefined) {
    skipper = makeSkippingNotify(binding);
    skippers.set(binding, skipper);
  }
  return skipper;
}

function makeSkippingNotify(binding) {
  const notify = binding.notify;
  let addressOf, notifyAt, notifyOneAt, counts;
  try {
    const kit = typeof binding.takeNotifyCounts === 'function' ? binding.takeNotifyCounts() : undefined;
    if (kit === undefined || kit === null) return notify;
    ({ addressOf, notifyAt, notifyOneAt } = kit);
    // notifyAt(address, 1) with one argument fewer for the binding to read
    // (a binary from before it had one: the same, through notifyAt).
    if (typeof notifyOneAt !== 'function') notifyOneAt = (address) => notifyAt(address, 1);
    counts = new Uint8Array(kit.counts);
    // 2^23 one-byte counts, as the slot formula below assumes (a binary
    // with another layout names its kit differently: src/napi/mod.rs).
    if (counts.length !== 1 << 23) return notify;
    // Engines before ES2020's change (Node 12's V8) take Atomics on shared
    // arrays only, and the counts are not a SharedArrayBuffer.
    atomicsAdd(counts, 0, 0);
  } catch (_) {
    return notify;
  }
  const known = new WeakMap(); // typed array -> [address of element 0, element size]
  let lastArray = null;
  let lastBase = 0;
  let lastSize = 4;
  let lastLength = 0;

  /** Makes `typedArray` the last array; false if the binding refuses it. */
  const remember = (function remember(typedArray) {
    let entry = known.get(typedArray);
    if (entry === undefined) {
      try {
        const base = addressOf(typedArray);
        entry = [base, typedArrayName(typedArray) === 'BigInt64Array' ? 8 : 4];
      } catch (_) {
        // Not a waitable array over a SharedArrayBuffer (or empty): such
        // an object never gets the fast path, so it is asked only once.
        entry = null;
      }
      if (typedArray !== null && typeof typedArray === 'object') known.set(typedArray, entry);
    }
    if (entry === null) return false;
    // (Read before any of the four is set: they change together or not at all.)
    const length = typedArrayLength(typedArray);
    lastArray = typedArray;
    lastBase = entry[0];
    lastSize = entry[1];
    lastLength = length;
    return true;
  });

  function notifyUnlessNobodyWaits(typedArray, index, count) {
    if (
      typeof index === 'number' &&
      (typedArray === lastArray || remember(typedArray)) &&
      index >>> 0 === index && // an integer from 0 to 2^32 - 1 (larger: the slow path)
      index < lastLength
    ) {
      const address = lastBase + index * lastSize; // exact: below 2^53
      // The slot: >>> takes the address mod 2^32; the mask, 2^23 - 1, as
      // a literal (an operand of the bytecode, not a variable to load).
      if (!atomicsAdd(counts, ((address >>> 2) ^ (address >>> 25)) & 0x7fffff, 0)) return 0; // (a count: 0 is the one falsy value)
      // count: a Number here (notify's fast path) or the coerced count.
      if (typeof count === 'number') return count === 1 ? notifyOneAt(address) : notifyAt(address, count);
    }
    return notify(typedArray, index, count);
  }

  // createAtomics' notify, this one's fast path written in: one function
  // for a fresh thread to compile and run on its first calls, not two; else
  // `checked`, the spec's steps (after a throw too, as before).
  notifyMakers.set(
    notifyUnlessNobodyWaits,
    (checked) =>
      // (In parentheses: V8 compiles it with the arrow, at load, where it
      // would at the first notify: the published package's code cache then
      // holds it compiled. The same for remember and waitAsync.)
      (function notify(typedArray, index, count) {
        if (typeof index === 'number' && (typeof count === 'number' || count === undefined)) {
          try {
            if ((typedArray === lastArray || remember(typedArray)) && index >>> 0 === index && index < lastLength) {
              const address = lastBase + index * lastSize;
              if (!atomicsAdd(counts, ((address >>> 2) ^ (address >>> 25)) & 0x7fffff, 0)) return 0;
              return count === 1 ? notifyOneAt(address) : notifyAt(address, count === undefined ? Infinity : count);
            }
          } catch (_) {}
        }
        return checked(typedArray, index, count);
      })
  );
  return notifyUnlessNobodyWaits;
}

/**
 * @param {object} binding the native binding
 * @param {Function} [bindingNotify] the binding step of notify (the
 *   polyfill chains the engine's own notify after the binding's)
 * @param {boolean} [promisesInJs] keep waitAsync promises in JS rather
 *   than as N-API deferreds (see lib/pending.js); the default: in workers
 */
function createAtomics(binding, bindingNotify = skippingNotify(binding), promisesInJs = !isMainThread) {
  // In a worker, a pending N-API deferred outlives terminate() (it can only
  // be freed by resolving it, and JS no longer runs), so there the promises
  // live on the JS heap, which goes with the worker. The main thread is
  // torn down only with the process and keeps the cheaper deferreds.
  // (lib/pending.js: loaded by the threads that keep their promises, workers.)
  let pending = promisesInJs ? require('./pending.js').pendingPromises(binding) : null;
  // This thread's "the woken outcome reached JS" word (src/sync_wait.rs
  // `WokenMark`): the binding sets it when a wait returns "ok", and
  // writing 0 confirms it without a native call. Without it, waitDone().
  const waitSeen = binding.waitSeen instanceof ArrayBuffer ? new Int32Array(binding.waitSeen) : null;
  // Whether a woken wait's OK means the binding checked that this thread
  // is not being terminated: on Node, with a binding that says it does
  // (one built before it did would never say OK_STOPPING).
  const bindingSeesStop = kBindingSeesStop && binding.waitSeesStop === true;

  /** DoWait steps 1-9, shared by wait and waitAsync. */
  function prepare(typedArray, index, value, timeout) {
    const shared = validateWaitable(typedArray);
    if (!shared) {
      throw new TypeError('The "typedArray" argument must be backed by a SharedArrayBuffer');
    }
    const length = typedArrayLength(typedArray);
    const i = validateIndex(index, length);
    const isBigInt = typedArrayName(typedArray) === 'BigInt64Array';
    const v = coerceValue(value, isBigInt);
    const t = coerceTimeout(timeout);
    return { i, v, t };
  }

  /**
   * DoWait through the binding's `wait` (waitAsync has its own fast path,
   * written in): the fast path when the arguments allow it, else the
   * spec's steps 1-9 in order.
   */
  function doWait(typedArray, index, value, timeout) {
    if (typeof index === 'number' && isPlainValue(value) && (typeof timeout === 'number' || timeout === undefined)) {
      try {
        return binding.wait(typedArray, index, value, timeout === undefined ? Infinity : timeout);
      } catch (_) {
        // not in the simple form after all: the slow path decides
      }
    }
    const { i, v, t } = prepare(typedArray, index, value, timeout);
    return binding.wait(typedArray, i, v, t);
  }

  /**
   * Right before the binding's waitAsync: if it may queue a waiter whose
   * promise is made here, the promise is made now (see lib/pending.js), so
   * that nothing can throw between its queueing the waiter and the waiter
   * getting its promise. Throws (out of stack) with nothing queued.
   */
  const reservePromise = (function reservePromise() {
    if (pending === null) {
      // Another copy of this module may have registered the table.
      const table = binding[kPendingTable];
      if (table === undefined) return;
      pending = table;
    }
    if (pending.spareResolve === undefined) pending.reserve();
  });

  /**
   * Atomics.waitAsync(typedArray, index, value[, timeout]): never blocks;
   * returns { async: false, value: 'not-equal' | 'timed-out' } or
   * { async: true, value: Promise<'ok' | 'timed-out'> }.
   * doWait's fast path written in: fewer functions for a fresh thread's
   * first call to compile (a 5th argument, `{ signal }`: cancellable).
   */
  const waitAsync = (function waitAsync(typedArray, index, value, timeout, options) {
    // Made before the binding may queue a waiter: near the stack limit,
    // making it can throw (the first times, in the runtime) where the
    // binding's call did not.
    const out = { async: true, value: undefined };
    let result;
    let answered = false;
    if (
      options === undefined &&
      typeof index === 'number' &&
      (typeof value === 'number' || typeof value === 'bigint') &&
      (typeof timeout === 'number' || timeout === undefined)
    ) {
      if (pending !== null ? pending.spareResolve === undefined : binding[kPendingTable] !== undefined) reservePromise();
      try {
        result = binding.waitAsync(typedArray, index, value, timeout === undefined ? Infinity : timeout);
        answered = true;
      } catch (_) {
        // not in the simple form after all: the slow path decides
      }
    }
    if (!answered) {
      if (options !== undefined) return waitAsyncCancellable(typedArray, index, value, timeout, options);
      result = waitAsyncChecked(typedArray, index, value, timeout);
    }
    if (typeof result !== 'number') {
      out.value = result; // the binding's own promise
      return out;
    }
    if (result >= 0) {
      out.async = false;
      out.value = kStrings[result];
      return out;
    }
    // Queued in slot -1 - result (the binding answers so once any copy of
    // this module registered the table): it takes the spare promise made
    // by reservePromise. No calls from here on: near the stack limit any
    // call can throw, and the waiter would be queued with no promise.
    const slot = -1 - result;
    const table = pending;
    if (table === null || table.spareResolve === undefined) {
      // Not reached (reservePromise ran right before the binding).
      binding.cancel(slot);
      throw new Error('atomics-waitasync: no promise for a queued waiter');
    }
    const promise = table.spare;
    table.resolvers[slot] = table.spareResolve;
    table.arrays[slot] = typedArray;
    table.live++;
    table.spare = undefined;
    table.spareResolve = undefined;
    out.value = promise;
    return out;
  });
  reflectDefineProperty(waitAsync, 'length', { value: 4 });

  /** DoWait steps 1-9, then the binding. */
  function waitAsyncChecked(typedArray, index, value, timeout) {
    const { i, v, t } = prepare(typedArray, index, value, timeout);
    // (Again: coercing may have run a waitAsync that took the spare.)
    reservePromise();
    return binding.waitAsync(typedArray, i, v, t);
  }

  /**
   * waitAsync(typedArray, index, value, timeout, { signal }): the spec's
   * steps first (their errors, their coercions, once), then: an aborted
   * signal rejects with its reason, queueing nothing; otherwise as
   * waitAsync, and should the signal abort while the waiter is queued, the
   * waiter leaves the queue (a later notify neither wakes nor counts it)
   * and the promise rejects with the signal's reason. An abort that comes
   * once a notify or the timeout took the waiter changes nothing.
   */
  function waitAsyncCancellable(typedArray, index, value, timeout, options) {
    const { i, v, t } = prepare(typedArray, index, value, timeout);
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`The "options" argument must be an object. Received ${describe(options)}`);
    }
    const { validateSignal, abortReason } = signals();
    const signal = validateSignal(options.signal);
    if (signal === undefined) return waitAsync(typedArray, i, v, t);
    if (signal.aborted) return { async: true, value: rejected(abortReason(signal)) };
    // The listener goes on before the waiter is queued (adding it may
    // throw; so may any call after the queueing, which would leave the
    // waiter queued with nobody to see its wake-up), and learns the
    // waiter's slot and id once it is.
    const ticket = { slot: -1, id: 0, taken: false };
    const onAbort = () => {
      if (ticket.slot !== -1) takeBack(ticket);
    };
    signal.addEventListener('abort', onAbort);
    let result;
    try {
      result = waitAsync(typedArray, i, v, t);
    } finally {
      if (result === undefined || !result.async) signal.removeEventListener('abort', onAbort);
    }
    if (!result.async) return result;
    const queued = binding.lastQueued();
    ticket.slot = queued[0];
    ticket.id = queued[1];
    // Aborted while the promise was made (a promise hook may run code).
    if (signal.aborted) takeBack(ticket);
    return { async: true, value: settledOrAborted(result.value, signal, onAbort, ticket) };
  }

  /**
   * Takes the waiter of `ticket` back if it is still queued; its promise
   * then resolves with undefined. (A deferred's did, in the binding; one of
   * lib/pending.js's is resolved here.) Nothing if a notify or its timeout
   * took it first, or it settled (its slot may hold another waiter by now:
   * the id tells).
   */
  function takeBack(ticket) {
    if (ticket.taken || !binding.cancel(ticket.slot, ticket.id)) return;
    ticket.taken = true;
    const table = pending;
    if (table !== null && table.resolvers[ticket.slot] !== undefined) {
      const resolve = table.resolvers[ticket.slot];
      table.resolvers[ticket.slot] = undefined;
      table.arrays[ticket.slot] = undefined;
      table.live--;
      resolve(undefined);
    }
  }

  /**
   * The outcome of the queued waiter `promise`, or, if `signal` aborted and
   * the waiter was taken back, the signal's reason.
   */
  async function settledOrAborted(promise, signal, onAbort, ticket) {
    let outcome;
    try {
      outcome = await signals().ours(promise);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    if (ticket.taken) throw signals().abortReason(signal);
    return outcome;
  }

  /**
   * Atomics.wait(typedArray, index, value[, timeout]): blocks the calling
   * thread (Node's main thread included) until notified or timed out.
   */
  function wait(typedArray, index, value, timeout) {
    let code = doWait(typedArray, index, value, timeout);
    let done = false;
    try {
      // The binding blocks in short slices and returns PENDING between
      // them, so that worker.terminate() can stop this loop.
      while (code === PENDING) {
        interruptPoint();
        code = binding.waitContinue();
      }
      if (code === OK || code === OK_STOPPING) {
        // Woken: if this thread is being terminated, stop here, before the
        // caller sees "ok"; the binding then passes the wake-up on to the
        // next waiter. On Node the binding has checked (OK_STOPPING: its
        // terminate() was called); elsewhere the interrupt point checks.
        // Otherwise tell the binding the wake-up arrived.
        if (code === OK_STOPPING || !bindingSeesStop) interruptPoint();
        code = OK;
        if (waitSeen !== null) waitSeen[0] = 0;
        // No word, or one whose buffer was detached (transfer()): it took
        // no write, and the binding would pass on a wake-up the caller saw.
        if (waitSeen === null || waitSeen[0] !== 0) binding.waitDone();
      }
      done = true;
    } finally {
      // An exception (out of stack, say) ended the loop: take the waiter
      // off its queue, or pass on the wake-up it got, so that the next
      // notify does not wake a waiter nobody is waiting on. (Termination
      // skips this; the env's teardown does the same then. Should this
      // call fail too, the thread's next wait() does it.)
      if (!done) {
        try {
          binding.waitAbandon();
        } catch (_) {
          // keep the loop's own exception
        }
      }
    }
    return kStrings[code];
  }

  /**
   * Atomics.notify(typedArray, index[, count]): wakes up to `count` waiters
   * on the element, oldest first, and returns how many it woke.
   */
  function notify(typedArray, index, count) {
    if (typeof index === 'number' && (typeof count === 'number' || count === undefined)) {
      try {
        return bindingNotify(typedArray, index, count === undefined ? Infinity : count);
      } catch (_) {
        // the slow path decides (a non-shared array returns 0 there)
      }
    }
    return notifyChecked(typedArray, index, count);
  }

  /** notify's slow path. */
  function notifyChecked(typedArray, index, count) {
    const shared = validateWaitable(typedArray);
    const i = validateIndex(index, typedArrayLength(typedArray));
    let c = Infinity;
    if (count !== undefined) {
      c = toIntegerOrInfinity(count, 'count');
      if (c < 0) c = 0;
    }
    if (!shared) return 0;
    return bindingNotify(typedArray, i, c);
  }

  /** Pending waits of this thread keep its event loop alive (the default). */
  function ref() {
    binding.setKeepAlive(true);
  }

  /** Pending waits of this thread no longer keep its event loop alive. */
  function unref() {
    binding.setKeepAlive(false);
  }

  /**
   * Test-only: waiters in the registry (on one element, or in all),
   * this thread's pending async waits, deadlines held by the notifier,
   * threads retrying a failed wake-up (an AsyncLock release's).
   */
  function waitersForTesting(typedArray, index) {
    const [registry, pending, timers, retriers] = binding.countsForTesting(typedArray, index);
    return { registry, pending, timers, retriers };
  }

  const makeNotify = notifyMakers.get(bindingNotify);
  return { waitAsync, wait, notify: makeNotify === undefined ? notify : makeNotify(notifyChecked), ref, unref, waitersForTesting };
}

/** An intrinsic promise rejected with `reason`. */
async function rejected(reason) {
  throw reason;
}

module.exports = { createAtomics, skippingNotify, kEngineWait, OK, NOT_EQUAL, TIMED_OUT };
