'use strict';
// The word protocol of the package's signalling semaphores: a count that
// any thread may add to, whether or not it took anything before, and that
// threads take from, n at a time. Two primitives use it, with these steps
// and no other: async-mutex's Semaphore (lib/async-mutex.js) and
// SignalSemaphore (lib/signal-semaphore.js). Two Int32s from `index`:
//
//   i32a[index]      value     taken by a CAS from v to v - n when v >= n;
//                              added to by a CAS from v to v + n, never
//                              past 2^31 - 1 (async-mutex's setValue may
//                              also store any Int32, below 0 included)
//   i32a[index + 1]  waiters   threads between announcing a wait and leaving
//                              it; an add that sees it above 0 wakes them
//                              all
//
// No wake-up is lost, as in the family's Semaphore (lib/semaphore.js): a
// waiter adds itself to `waiters` (announce), then reads `value` and waits
// on what it read; an add changes `value`, then reads `waiters`. Either the
// add sees the waiter (and wakes every waiter), or the waiter sees the
// value moved on (and its wait ends at once). Every add wakes every waiter,
// so a waiter that ends without looking again (its thread died, it timed
// out) takes no wake-up meant for another. tests/loom_semaphore.rs
// model-checks these steps, with an adder that never took anything and a
// waiter whose thread dies in its wait.
//
// Each instance keeps a stake (lib/core.js watchStake) of the binding's
// kind 1 (src/napi/stakes.rs Kind::Semaphore), its Int32s written right
// after the atomic step that changed what they count, with no call between
// the two (a worker is terminated only at a call or a loop's back edge):
//
//   stake[kHeld]       what the instance took and keeps: given back by its
//                      thread's teardown. async-mutex's Semaphore keeps
//                      what it takes (an add gives that back first);
//                      SignalSemaphore keeps nothing (a take is consumed)
//   stake[kAnnounced]  its waits counted in `waiters`: taken out by the
//                      teardown, which then wakes the waiters
//   stake[kOwed]       1 while an add's wake-up of the waiters is owed (its
//                      notify may not have run): paid by the instance's
//                      next call (payOwed), its collection, or the teardown

const kMax = 0x7fffffff;
// The binding's stake kind (src/napi/stakes.rs Kind::Semaphore), its size
// and its Int32s (the teardown reads the first two).
const kSignalStake = 1;
const kStakeInts = 4;
const kHeld = 0;
const kAnnounced = 1;
const kOwed = 3;

/**
 * Takes `n` if the value is `n` or more; returns the value before, or null
 * if it did not. With `keep`, counts `n` in `stake[kHeld]` (given back if
 * the thread ends), with no call or back edge between the CAS and that
 * store.
 */
function take(i32a, index, stake, n, keep) {
  let seen = Atomics.load(i32a, index);
  while (seen >= n) {
    const was = Atomics.compareExchange(i32a, index, seen, seen - n);
    if (was === seen) {
      if (keep) stake[kHeld] += n;
      return seen;
    }
    seen = was;
  }
  return null;
}

/**
 * Adds `n` to the value, giving back first what the stake keeps (the rest
 * is new), and marks the waiters' wake-up owed in the stake if any wait:
 * the caller then pays it (payOwed), and if that fails or the thread ends
 * first, the instance's next call or the thread's teardown does. Throws
 * `tooMuch(seen, n)` (a RangeError), changing nothing, where the value
 * would go past 2^31 - 1.
 */
function add(i32a, index, stake, n, tooMuch) {
  let seen = Atomics.load(i32a, index);
  for (;;) {
    if (seen > kMax - n) throw tooMuch(seen, n);
    const was = Atomics.compareExchange(i32a, index, seen, seen + n);
    if (was === seen) break;
    seen = was;
  }
  const held = stake[kHeld];
  stake[kHeld] = held > n ? held - n : 0;
  if (Atomics.load(i32a, index + 1) > 0) stake[kOwed] = 1;
}

/**
 * A waiter counts itself in `waiters`, and in its stake for the teardown.
 * Then (not here: so that the caller notes that it announced before
 * anything that could throw) it reads the value and waits on what it read.
 */
function announce(i32a, index, stake) {
  Atomics.add(i32a, index + 1, 1);
  stake[kAnnounced]++;
}

/** The waiter leaves `waiters`, and its stake's count. */
function withdraw(i32a, index, stake) {
  Atomics.sub(i32a, index + 1, 1);
  stake[kAnnounced]--;
}

module.exports = { kMax, kSignalStake, kStakeInts, kHeld, kAnnounced, kOwed, take, add, announce, withdraw };
