'use strict';
// A line: the async takers of one instance of a primitive (AsyncLock,
// Semaphore, RwLock, async-mutex's Semaphore) that wait their turn, first
// come, first served. Only the first of the line contends for the shared
// word (and waits on it, with the package's waitAsync, when it must); the
// others wait here, on a promise of their own, until the first has taken
// what it wanted or given up. So a task that releases and at once asks
// again queues behind the tasks of its thread that asked before it,
// instead of taking the word again before they run (the starvation of one
// thread's async waiters).
//
// Between threads nothing changes: the first of each thread's line
// contends for the word as any waiter does.
//
// An entry's life:
//
//   WAITING   parked in the line (or the first, before it goes on)
//   GO        the first, contending for the word: woken here when the entry
//             before it left (took, timed out, aborted), or it found the
//             line empty
//   GRANTED   handed the hold by a release of its own instance (AsyncLock:
//             the word stays held by this thread, no native call)
//   TIMED_OUT, ABORTED, GONE   gave up while parked (its timer, its signal,
//             or its frame failed)
//
// Only `wake` moves a parked entry on from WAITING, once: whichever of a
// release, its timer or its signal comes first decides. (An entry that
// is the first as it joins goes on by itself: goOn.)
//
// At most one entry of a line is GO at a time (`line.going`): a take of a
// higher priority that joins in front of it waits parked until it left.
//
// Priorities (async-mutex's): a higher priority goes before lower ones
// already waiting, equal priorities in the order they came. A take's
// priority is 0 unless its `options.priority` says otherwise.

// Node's timers as found when the package loaded (lib/describe.js).
const { IntrinsicPromise, setTimer, clearTimer } = require('./describe.js');
const { deferredWithoutConstructor } = require('./pending.js');
const { monotonicNow } = require('./core.js');

const WAITING = 0;
const GO = 1;
const GRANTED = 2;
const TIMED_OUT = 3;
const ABORTED = 4;
const GONE = 5;

/** An empty line (one per instance). */
const newLine = () => ({ first: null, last: null, going: null });

/**
 * Adds a take for `want` (what it asks for: permits, a mode) with
 * `priority` to `line`, behind every entry of the same or a higher
 * priority, waiting since `since` (monotonicNow()); returns its entry.
 */
function join(line, want, priority, since) {
  const entry = {
    line,
    prev: null,
    next: null,
    want,
    priority,
    since,
    outcome: WAITING,
    resolve: null,
    timer: null,
    signal: undefined,
    onAbort: null,
  };
  let before = line.last;
  while (before !== null && before.priority < priority) before = before.prev;
  entry.prev = before;
  entry.next = before === null ? line.first : before.next;
  if (entry.next === null) line.last = entry;
  else entry.next.prev = entry;
  if (before === null) line.first = entry;
  else before.next = entry;
  return entry;
}

/** Takes `entry` out of its line (nothing if it is out already). */
function leave(entry) {
  const line = entry.line;
  if (line === null) return;
  if (entry.prev === null) line.first = entry.next;
  else entry.prev.next = entry.next;
  if (entry.next === null) line.last = entry.prev;
  else entry.next.prev = entry.prev;
  if (line.going === entry) line.going = null;
  entry.line = entry.prev = entry.next = null;
}

/** An intrinsic promise and its resolve function (`{ promise, resolve }`). */
function deferred() {
  if (IntrinsicPromise === undefined) return deferredWithoutConstructor();
  let resolve;
  const promise = new IntrinsicPromise((r) => {
    resolve = r;
  });
  // (An executor that ran out of stack makes a rejected promise, not a throw.)
  if (resolve === undefined) throw new RangeError('Maximum call stack size exceeded');
  return { promise, resolve };
}

/**
 * Parks `entry` until `wake` moves it on: returns the promise (an
 * intrinsic one) of its outcome. A finite `deadline` (monotonicNow()
 * ms) wakes it TIMED_OUT then, a signal ABORTED when it aborts.
 */
function park(entry, deadline, signal) {
  const { promise, resolve } = deferred();
  entry.resolve = resolve;
  if (deadline !== Infinity) {
    entry.timer = setTimer(giveUp, Math.max(0, deadline - monotonicNow()), entry, TIMED_OUT);
  }
  if (signal !== undefined) {
    entry.signal = signal;
    entry.onAbort = () => giveUp(entry, ABORTED);
    signal.addEventListener('abort', entry.onAbort);
  }
  return promise;
}

/**
 * A frame whose await of its turn failed (out of stack, or a program's
 * `then` where %Promise% could not be found): its entry is GONE, unless it
 * was moved on meanwhile, and its timer and listener are cleared. Returns
 * whether it had been GRANTED (the frame then holds what it asked for).
 */
function abandonPark(entry) {
  const granted = !wake(entry, GONE, true) && entry.outcome === GRANTED;
  try {
    unpark(entry);
  } catch (_) {
    // (a timer or listener left behind finds it moved on, and does nothing)
  }
  return granted;
}

/**
 * A parked entry's timeout or abort: woken so, and out of the line at once
 * (a release that comes before its frame runs hands on to the next).
 */
function giveUp(entry, outcome) {
  wake(entry, outcome, true);
}

/**
 * Moves `entry` on from WAITING to `outcome` and settles its parked
 * promise, if it is still WAITING; returns whether it did. With `unlink`
 * it also takes the entry out of its line, in the same step. Throws (out
 * of stack) having changed nothing.
 */
function wake(entry, outcome, unlink) {
  if (entry.outcome !== WAITING) return false;
  const resolve = entry.resolve;
  entry.outcome = outcome;
  if (resolve !== null) {
    try {
      resolve(outcome);
    } catch (error) {
      entry.outcome = WAITING; // (out of stack, before it resolved: nothing changed)
      throw error;
    }
  }
  entry.resolve = null;
  if (unlink === true) {
    // leave(entry), written out: no call that could fail once it was woken.
    const line = entry.line;
    if (line !== null) {
      if (entry.prev === null) line.first = entry.next;
      else entry.prev.next = entry.next;
      if (entry.next === null) line.last = entry.prev;
      else entry.next.prev = entry.prev;
      if (line.going === entry) line.going = null;
      entry.line = entry.prev = entry.next = null;
    }
  }
  return true;
}

/**
 * Its frame's part, once its parked promise settled (or its await
 * failed), from the bottom of its stack: clears its timer and its abort
 * listener. (Not in wake: a release deep in a stack must not call into
 * Node's timers, which a failure half-way through would leave corrupted.)
 */
function unpark(entry) {
  const { timer, onAbort } = entry;
  entry.timer = entry.onAbort = null;
  if (timer !== null) clearTimer(timer);
  if (onAbort !== null) entry.signal.removeEventListener('abort', onAbort);
}

/**
 * Whether a take of `priority` may go before `line`: the line is empty, or
 * its first has a lower priority and waits parked (not contending).
 */
const mayPass = (line, priority) =>
  line.first === null || (line.first.priority < priority && line.first.outcome === WAITING);

/**
 * Whether `entry`, which just joined `line`, goes on to contend for the
 * word at once: it is the first, and no entry behind it (of a lower
 * priority, which it passed) contends already. Its frame then calls goOn.
 */
const goesOn = (line, entry) => entry === line.first && line.going === null;

/** `entry`, in its line, contends for the word from now (woken so, or it went on at once). */
function goOn(entry) {
  entry.outcome = GO;
  entry.line.going = entry;
}

/**
 * The line's first entry, if it is parked, `mayGo`, and no entry behind
 * it contends already: woken GO, to contend for the word (after the entry
 * before it left). An entry that contends wakes it when it leaves.
 */
function wakeFirst(line, mayGo) {
  const first = line.first;
  if (first !== null && mayGo && line.going === null && wake(first, GO)) line.going = first;
}

module.exports = { newLine, deferred, join, leave, park, unpark, abandonPark, wake, wakeFirst, mayPass, goesOn, goOn, WAITING, GO, GRANTED, TIMED_OUT, ABORTED, GONE };
