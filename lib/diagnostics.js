'use strict';
// What the primitives of the family tell diagnostics_channel: the one
// place they report to. Node's convention for instrumenting a library
// (undici, http and net publish on named channels; APM and tracing tools
// subscribe). Per kind of primitive (its class name; the async-mutex
// entry's two classes are `async-mutex/Mutex` and `async-mutex/Semaphore`):
//
//   atomics-waitasync:<kind>:wait:start   a take (or wait) that has to wait, before it blocks or queues
//   atomics-waitasync:<kind>:wait:end     the same message, once that wait has ended, with its outcome
//   atomics-waitasync:<kind>:abandoned    a take found that the holder's thread had ended holding it
//   atomics-waitasync:<kind>:run          a tracing channel (tracePromise's events) around executeLocked,
//                                         runExclusive, runShared
//   atomics-waitasync:<kind>:acquire      a tracing channel around the async takes (acquire, read, write)
//
// docs/debugging.md lists what each message holds, for each kind.
//
// Every wait of every primitive goes through waitStart and waitEnd: once
// per take that has to wait (not per retry or slice of its wait loop),
// waitStart before the take changes anything that says it waits (a
// waiters count, the word's WAITERS bit, a place in the instance's line,
// a barrier's arrival), so that should it throw, nothing is left queued or
// counted; waitEnd exactly once after it, from a `finally` (or the async
// frame's equivalent), with how the wait ended:
//
//   taken       took what it asked for (a lock, permits, a read, a write)
//   abandoned   took a lock whose holder's thread had ended holding it
//   unlocked    waitForUnlock(): saw the lock free (takes nothing)
//   woken       a Condition's wait was notified (or woken spuriously)
//   reached     a Latch's count reached zero
//   arrived     every party of a Barrier's generation arrived
//   broken      the Barrier broke (a party timed out, aborted, ended, or reset() was called)
//   timeout     its timeout passed first
//   abort       its signal aborted first (the async-mutex entry's cancel() too)
//   error       it threw (its own error, not one of the above)
//
// A dying thread's own teardown runs in Rust and cannot publish, so it is
// the next taker that reports an abandoned hold (`abandoned`).
//
// Cost. Nothing is looked up at load: diagnostics_channel is required
// the first time a primitive waits or runs a traced call in this thread,
// and each group of a kind's channels made the first time a primitive of
// that kind needs it (its waits, its run or its acquire tracing channel). With nobody subscribed, a
// take that does not wait pays nothing, a traced call one check of a
// boolean (`kind.run`, `kind.acquire`), a wait one more (`kind.waits`).
// Those booleans are kept up to date as subscribers come and go (watch):
// the checks diagnostics_channel offers cost more than the 1 % an
// uncontended executeLocked may spend on them (a TracingChannel's
// hasSubscribers reads five channels: executeLocked went from 1,014 to
// 1,050-1,078 instructions, benchmark/instructions/lock-uncontended.js).
// Methods that check keep the traced call out of line (executeTraced in
// lib/async-lock.js): a few bytes more of executeLocked made TurboFan
// stop inlining what it calls (1,160 instructions).
//
// executeLocked goes further (runTraced, kind.quiet): it neither loads
// diagnostics_channel nor makes channels while this thread has not loaded
// diagnostics_channel itself, as nobody in the thread can have subscribed
// to anything then. Node lists the built-in modules a thread has loaded
// (process.moduleLoadList, appended to as it loads one, whoever asks:
// require, import, process.getBuiltinModule), so executeLocked compares
// the list's length with the kind's `quiet`: the length it had when the
// kind's run channel was last known to have no subscribers, -1 while it
// may have. The first executeLocked of a fresh main thread (Node 20) had
// loaded diagnostics_channel and made and watched the kind's thirteen
// channels: 3.9 of its 4.87 million instructions (benchmark/cold/lock.js
// under callgrind; the require alone is ~0.2 ms of wall clock).
// (Node 22 and 24, and Node 20's workers, load diagnostics_channel at
// start-up: there the channels are made at the first call, as before.)
//
// Where the runtime has no diagnostics_channel (Node 12, Node 14 before
// 14.17) nothing is published; where it has no tracingChannel (before
// Node 18.19 and 19.9), the tracing channels are not there and the calls
// run untraced.

const { ours, kLabel, monotonicNow, threadId } = require('./core.js');
// (As found when the package loaded.)
const {
  reflectApply,
  reflectDefineProperty,
  reflectGetOwnPropertyDescriptor,
  reflectGetPrototypeOf,
  objectKeys,
} = require('./describe.js');

/**
 * A kind of primitive: its `name` (in every message and channel name),
 * and whether anyone may listen on its channels: `waits` (wait:start or
 * wait:end), `run` and `acquire` (their tracing channels). Each is
 * true until its channels are looked up (channelsOf), then kept up to date (watch);
 * they stay true if they could not be (a channel that cannot be watched),
 * and every use checks the channels themselves too. `quiet`: for
 * executeLocked's check (runTraced), loadList's length when `run` was
 * last known false (or nobody could listen yet), else -1. `channels`: null until looked up, false
 * where the runtime has no diagnostics_channel.
 */
function createKind(name) {
  // (Quiet from the start where nobody can listen yet: the first
  // executeLocked then compiles neither executeTraced nor runTraced.)
  const quiet = channelsMayBeHeard() ? -1 : loadList.length;
  return { name, label: kLabelOf[name] || 0, waits: true, run: true, acquire: true, quiet, channels: null };
}

// What Node names diagnostics_channel in its process.moduleLoadList.
const kChannelsLoaded = 'NativeModule diagnostics_channel';

/**
 * The built-in modules this thread has loaded: process.moduleLoadList
 * where it is Node's (a worker has its own); else (Bun and Deno have an
 * empty one, a later Node might name its entries otherwise) null, and
 * diagnostics_channel counts as loaded.
 */
function builtinsLoaded() {
  const list = typeof process === 'object' && process !== null ? process.moduleLoadList : undefined;
  if (!Array.isArray(list)) return null;
  for (let i = 0; i < list.length; i++) {
    if (typeof list[i] === 'string' && list[i].startsWith('NativeModule ')) return list;
  }
  return null;
}

const builtins = builtinsLoaded();
/** What executeLocked compares `kind.quiet` with: the list, or a stand-in that never grows. */
const loadList = builtins !== null ? builtins : { length: 0 };
// How much of the list channelsMayBeHeard has looked through, and whether
// it found diagnostics_channel there.
let looked = 0;
let channelsLoaded = builtins === null;

/** Whether this thread has loaded diagnostics_channel (or may have): until it has, nobody listens. */
function channelsMayBeHeard() {
  if (!channelsLoaded && builtins.length !== looked) {
    channelsLoaded = builtins.indexOf(kChannelsLoaded, looked) !== -1;
    looked = builtins.length;
  }
  return channelsLoaded;
}

// Each kind's class number in the binding's table of who holds and waits
// (lib/core.js kLabel's low byte): the async-mutex entry's Mutex waits on
// an AsyncLock's word.
const kLabelOf = { 'async-mutex/Mutex': kLabel.AsyncLock & 0xff, 'async-mutex/Semaphore': kLabel.MutexSemaphore & 0xff };
for (const name of objectKeys(kLabel)) if (name !== 'MutexSemaphore') kLabelOf[name] = kLabel[name] & 0xff;

/** What a wait asked for, as the table keeps it: permits; 2 for a write; else 1. */
const askedOf = (what) => (what.permits !== undefined ? what.permits : what.mode === 'write' ? 2 : 1);

// lib/tracking.js, once index.js has made it: each wait is registered in
// the binding's table (query() lists it) and, with deadlock detection on,
// checked there; null before (and in a test's own factory-made classes).
let tracker = null;

/** Sets the tracking that waitStart and waitEnd register each wait with. */
function setTracking(tracking) {
  tracker = tracking;
}

// diagnostics_channel: undefined until looked up, null where the runtime has none.
let dc;

/**
 * diagnostics_channel, or null where the runtime has none (its require
 * fails: MODULE_NOT_FOUND). Out of stack (a RangeError) it throws, and
 * looks again next time.
 */
function diagnosticsChannel() {
  if (dc === undefined) {
    let found = null;
    try {
      found = require('diagnostics_channel');
    } catch (error) {
      if (error instanceof RangeError) throw error;
    }
    dc = found !== null && typeof found.channel === 'function' ? found : null;
  }
  return dc;
}

/** Whether anyone listens on a tracing channel (any of its five; Node 18 has no hasSubscribers of its own). */
function tracingListened(tracing) {
  return tracing.start.hasSubscribers || tracing.end.hasSubscribers || tracing.asyncStart.hasSubscribers ||
    tracing.asyncEnd.hasSubscribers || tracing.error.hasSubscribers;
}

/**
 * The channels of `kind`, with those of `group` ('waits': wait:start and
 * wait:end; 'abandoned'; 'run' or 'acquire': that tracing channel) made
 * (or found, if a subscriber made them first) and watched the first time
 * that group is asked for; false where the runtime has no
 * diagnostics_channel. One group at a time: the first executeLocked of a
 * thread that has loaded diagnostics_channel (Node 22 and later, Node
 * 20's workers) made all thirteen channels of its kind, the run tracing
 * channel's five the only ones it needs. A throw (out of stack) leaves
 * the group as it was: looked up again next time.
 */
function channelsOf(kind, group) {
  let channels = kind.channels;
  if (channels === false) return false;
  if (channels === null) {
    const found = diagnosticsChannel();
    if (found === null) {
      kind.waits = kind.run = kind.acquire = false;
      kind.channels = false;
      return false;
    }
    channels = kind.channels = { waitStart: undefined, waitEnd: undefined, abandoned: undefined, run: undefined, acquire: undefined };
  }
  if (channels[group === 'waits' ? 'waitStart' : group] === undefined) makeGroup(kind, channels, group);
  return channels;
}

// The events of a tracing channel, each a channel of its own.
const kTracingEvents = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'];

/**
 * Makes (or finds) and watches the channels of `kind`'s `group` (see
 * channelsOf), sets them in `channels` once all are there, and keeps the
 * group's flag (`kind.waits`, `kind.run` with `kind.quiet`, or
 * `kind.acquire`) up to date; it stays true if a channel could not be
 * watched (each use then looks at the channels themselves).
 */
function makeGroup(kind, channels, group) {
  const prefix = `atomics-waitasync:${kind.name}`;
  if (group === 'abandoned') {
    channels.abandoned = dc.channel(`${prefix}:abandoned`); // (no flag: looked at when a take finds a lock abandoned)
    return;
  }
  if (group === 'waits') {
    const start = dc.channel(`${prefix}:wait:start`);
    const end = dc.channel(`${prefix}:wait:end`);
    const update = () => {
      kind.waits = start.hasSubscribers || end.hasSubscribers;
    };
    const watched = watch(start, update) && watch(end, update);
    channels.waitStart = start;
    channels.waitEnd = end;
    if (watched) update();
    return;
  }
  // 'run' or 'acquire': null where the runtime has no tracingChannel.
  const tracingChannel = typeof dc.tracingChannel === 'function' ? dc.tracingChannel(`${prefix}:${group}`) : null;
  const update =
    group === 'run'
      ? () => {
          kind.run = tracingChannel !== null && tracingListened(tracingChannel);
          kind.quiet = kind.run ? -1 : loadList.length;
        }
      : () => {
          kind.acquire = tracingChannel !== null && tracingListened(tracingChannel);
        };
  let watched = true;
  if (tracingChannel !== null) {
    for (let i = 0; i < kTracingEvents.length; i++) watched = watch(tracingChannel[kTracingEvents[i]], update) && watched;
  }
  channels[group] = tracingChannel;
  if (watched) update();
}

// The methods of a channel that change whether it has subscribers.
const kChanging = ['subscribe', 'unsubscribe', 'bindStore', 'unbindStore'];

/**
 * Has `update()` run after each call of `channel`'s methods that change
 * whether it has subscribers, whoever calls them (dc.subscribe(name),
 * tracingChannel.subscribe and channel.subscribe all call the channel's
 * own): each becomes an own property of the channel that calls what was
 * there before it (another copy of the package's, or the prototype's of
 * the moment: Node swaps a channel's prototype as it gains and loses
 * subscribers), then `update`. Returns false where it could not
 * (a channel that is not extensible).
 */
function watch(channel, update) {
  for (let i = 0; i < kChanging.length; i++) {
    const name = kChanging[i];
    const own = reflectGetOwnPropertyDescriptor(channel, name);
    const before = own !== undefined && typeof own.value === 'function' ? own.value : undefined;
    if (before === undefined && typeof channel[name] !== 'function') continue; // (Node 14 and 16 have no stores)
    const watching = function () {
      try {
        return reflectApply(before !== undefined ? before : reflectGetPrototypeOf(this)[name], this, arguments);
      } finally {
        update();
      }
    };
    if (!reflectDefineProperty(channel, name, { __proto__: null, value: watching, writable: true, configurable: true })) return false;
  }
  return true;
}

/**
 * A take (or wait) of `instance`, of `kind` (createKind), has to wait:
 * called once, before the take changes anything that says it waits.
 * `what` is what it asked for (`{ lock: true }`, `{ permits: n }`,
 * `{ mode: 'read' }` ..., docs/debugging.md), `blocking` whether the thread
 * blocks (lock(), acquireSync ...) or an async take waits, `timed` whether
 * it has a timeout (it ends by itself: deadlock detection fails no wait
 * of a cycle it is in), `since` when it started (monotonicNow(), where
 * the take has it at hand; else undefined), `cache` an object of the
 * instance's own, with a `where` property, in which the tracking may keep
 * where its word is (else it keeps that in a WeakMap). Publishes
 * wait:start; returns
 * the token to hand to waitEnd: undefined when there is nothing to end,
 * the tracking's wait id (a number) when nobody listens. May throw
 * (nothing has changed then).
 */
function waitStart(instance, kind, what, blocking, timed, since, cache) {
  // Registered first: with deadlock detection on, this throws ERR_DEADLOCK
  // for a wait that would close a cycle, before anything is published.
  const id = tracker === null ? 0 : tracker.waitBegin(instance, kind.label, askedOf(what), blocking, timed === true, since, cache);
  const unheard = id === 0 ? undefined : id; // (the token when nobody listens)
  if (!kind.waits) return unheard;
  try {
    const channels = channelsOf(kind, 'waits');
    if (channels === false) return unheard;
    const start = channels.waitStart;
    const end = channels.waitEnd;
    if (!start.hasSubscribers && !end.hasSubscribers) return unheard;
    const message = { instance, kind: kind.name, threadId, what, blocking };
    const token = { id, message, end, since: monotonicNow() };
    if (start.hasSubscribers) start.publish(message);
    return token;
  } catch (error) {
    // (Out of stack, say: the take fails, so its wait is not registered.)
    if (id !== 0) tracker.waitEnd(id);
    throw error;
  }
}

/**
 * The wait of `token` (waitStart's) has ended, with `outcome` (see
 * above): publishes wait:end, the start's message with `outcome` and
 * `waited` (ms, monotonicNow). Never throws: how the take went is not
 * changed by who listens (subscribers' own errors are diagnostics_channel's
 * to report, as uncaught exceptions).
 */
function waitEnd(token, outcome) {
  if (typeof token === 'number') {
    try {
      tracker.waitEnd(token);
    } catch (_) {
      // (out of stack: the wait stays listed, see docs/debugging.md)
    }
    return;
  }
  if (token === undefined) return;
  try {
    if (token.id !== 0) tracker.waitEnd(token.id);
    const message = token.message;
    if (message === null) return;
    message.outcome = outcome;
    message.waited = monotonicNow() - token.since;
    if (token.end.hasSubscribers) token.end.publish(message);
  } catch (_) {
    // (out of stack: the message is lost, the take is not)
  }
}

/**
 * How an async wait that threw ended, for waitEnd: 'timeout' if its
 * AsyncWait (lib/core.js, or null) threw the timeout, 'abort' if its
 * signal aborted, else 'error'. (Where the wait throws a timeout of its
 * own, before or after its AsyncWait, it says so itself.)
 */
function endedAs(waiting, signal) {
  if (waiting !== null && waiting.timedOut) return 'timeout';
  return signal !== undefined && signal.aborted ? 'abort' : 'error';
}

/**
 * A take of `instance`, of `kind`, found that the holder's thread had
 * ended holding it: publishes `abandoned`. Called from the middle of a
 * take (after it took): callers catch what it may throw (out of stack).
 */
function abandoned(instance, kind) {
  const channels = channelsOf(kind, 'abandoned');
  if (channels === false || !channels.abandoned.hasSubscribers) return;
  channels.abandoned.publish({ instance, kind: kind.name, threadId });
}

/**
 * Whether anyone listens on `kind`'s tracing channel `which` ('run' or
 * 'acquire'): a primitive's async call is traced when `kind[which] &&
 * tracing(kind, which)`, and runs as ever when not. (`kind[which]` is
 * the one check paid when nobody listens; this looks at the channels
 * themselves, the first time of the kind and where they are not watched.)
 */
function tracing(kind, which) {
  const channels = channelsOf(kind, which);
  return channels !== false && channels[which] !== null && tracingListened(channels[which]);
}

/**
 * tracing(kind, 'run') for a call that checks `kind.quiet !==
 * loadList.length` instead of `kind.run` (executeLocked): while this
 * thread has not loaded diagnostics_channel, false, with `kind.quiet` set
 * to the list's length (nobody listens until the thread loads another
 * built-in module); else `kind.run && tracing(kind, 'run')`, which makes
 * and watches the channels the first time (watch keeps `quiet` up to
 * date from then on), with `quiet` set again when nobody listens (the
 * thread loaded some other built-in since).
 */
function runTraced(kind) {
  if (channelsMayBeHeard()) {
    if (kind.run && tracing(kind, 'run')) return true;
    if (kind.run) return false; // (channels that could not be watched: looked at every time)
  }
  kind.quiet = loadList.length;
  return false;
}

/**
 * `fn(...args)`, a primitive's async call that returns a promise, traced
 * on `kind`'s tracing channel `which` with tracePromise's events (where
 * tracing(kind, which) says anyone listens): start, end, then error
 * (if it rejects), asyncStart and asyncEnd once it settles. The context:
 * `{ instance, kind, threadId, method, what }`, to which `result` or
 * `error` is added.
 *
 * Returns fn's own promise (as the untraced call does): how the take goes
 * never depends on the tracing. tracingChannel.tracePromise is not used,
 * for what it does with the promise: `then` on it, which looks up its
 * species (a Promise[Symbol.species] that throws made acquire() throw
 * with the take under way, its release function lost, the lock held for
 * good; one that makes objects that never settle made the call resolve
 * with such an object), and on a rejection its own promise, adopted
 * through the `then` of the moment (one that throws replaced f's error
 * with its own, and left f's rejected unhandled). Its events are
 * published here instead, in its order, from an async function of ours
 * that awaits fn's promise (its own `constructor`: ours) before the
 * caller can, inside the stores: a subscriber of asyncEnd still hears
 * before the caller's `await` goes on, in the context of start's stores.
 *
 * fn runs inside start.runStores (subscribers' bound stores), once: a
 * store that runs it twice gets the same take; one that does not run it
 * at once (later, or never) leaves the call untraced, fn run here (a
 * later start is all that is heard of it); one that throws after running
 * it, the take under way as if it had not thrown.
 */
function traced(kind, which, instance, method, what, fn, ...args) {
  const tracing = channelsOf(kind, which)[which];
  const context = { instance, kind: kind.name, threadId, method, what };
  let ran = false;
  let taken; // fn's promise, once it has run
  let threw = false;
  let thrown; // what it threw, if it did (out of stack): thrown on, as the untraced call does
  const run = () => {
    if (ran) return;
    ran = true;
    try {
      taken = reflectApply(fn, undefined, args);
    } catch (error) {
      threw = true;
      thrown = error;
      context.error = error;
      tracing.error.publish(context);
    } finally {
      tracing.end.publish(context);
    }
    // (Awaited from inside the stores, as tracePromise's `then` is: its
    // error, asyncStart and asyncEnd are published in their context. Once
    // the take is under way, what throws here, out of stack, only leaves
    // it untraced.)
    if (!threw) settled(tracing, context, ours(taken));
  };
  try {
    tracing.start.runStores(context, run);
  } catch (_) {
    // (A bound store, or a method of the channel replaced, threw: the
    // call goes on as far as it got.)
  }
  if (!ran) {
    ran = true;
    return reflectApply(fn, undefined, args);
  }
  if (threw) throw thrown;
  return taken;
}

/**
 * Publishes the end of a traced call once `taken` (its promise, ours)
 * settles: error (if it rejected), asyncStart, asyncEnd, as tracePromise
 * does. Never rejects.
 */
async function settled(tracing, context, taken) {
  try {
    try {
      context.result = await taken;
    } catch (error) {
      context.error = error;
      tracing.error.publish(context);
    }
    tracing.asyncStart.publish(context);
    tracing.asyncEnd.publish(context);
  } catch (_) {
    // (a method of the channel replaced by one that throws: the events are lost, the take is not)
  }
}

/**
 * Runs `take()`, a Condition's re-take of `lock`, whose wait must not
 * fail (lib/tracking.js retake).
 */
function retake(lock, take) {
  return tracker === null ? take() : tracker.retake(lock, take);
}

module.exports = { createKind, setTracking, waitStart, waitEnd, retake, endedAs, abandoned, tracing, runTraced, loadList, traced };
