//! Model checking of the registry's races with loom: every interleaving
//! (up to loom's bounds) of notify, timeout, cancel and env teardown over
//! the very same `src/registry.rs`, compiled here against loom's mutex and
//! atomics (see `sync` below) instead of parking_lot's and std's.
//!
//! What each model asserts is what a user relies on: a waiter has exactly
//! one owner of its outcome, a notify counts exactly the waiters it took,
//! FIFO order holds, and no wake-up is lost between the value check and the
//! enqueue.

#[path = "common/loom_sync.rs"]
mod sync;

#[path = "../src/registry.rs"]
#[allow(dead_code, reason = "only part of the registry is exercised here")]
mod registry;

use loom::sync::atomic::{AtomicI32, Ordering};
use loom::sync::Arc;
use loom::thread;
use registry::{Enqueued, Registry, WaiterId};

const KEY: usize = 0x1000;

fn queued(registry: &Registry<&'static str>, key: usize, tag: &'static str) -> WaiterId {
  match registry.enqueue_if(key, || true, |_| tag) {
    Enqueued::Queued(id) => id,
    Enqueued::NotEqual => unreachable!("the check passed"),
  }
}

/// One waiter; a notify, its deadline and its env's teardown race to take
/// it. Exactly one wins; the notify's count says whether it was that one.
#[test]
fn notify_timeout_and_teardown_have_one_winner() {
  loom::model(|| {
    let registry = Arc::new(Registry::new());
    let id = queued(&registry, KEY, "w");
    let notifier = {
      let registry = registry.clone();
      thread::spawn(move || registry.dequeue(KEY, 1).len())
    };
    let timer = {
      let registry = registry.clone();
      thread::spawn(move || registry.remove(KEY, id).is_some() as usize)
    };
    let teardown = registry.remove(KEY, id).is_some() as usize;
    let wins = notifier.join().unwrap() + timer.join().unwrap() + teardown;
    assert_eq!(wins, 1, "exactly one owner of the outcome");
    assert!(registry.is_empty());
  });
}

/// A registry, a cell holding 0, and a thread that queues a waiter on
/// `KEY` if the cell (read under the bucket lock) still holds 0.
fn spawn_waiter_while_zero() -> (
  Arc<Registry<&'static str>>,
  Arc<AtomicI32>,
  thread::JoinHandle<Enqueued>,
) {
  let registry = Arc::new(Registry::<&'static str>::new());
  let (cell, waiter) = spawn_waiter_while_zero_on(&registry);
  (registry, cell, waiter)
}

/// The same on a registry that already holds waiters.
fn spawn_waiter_while_zero_on(
  registry: &Arc<Registry<&'static str>>,
) -> (Arc<AtomicI32>, thread::JoinHandle<Enqueued>) {
  let cell = Arc::new(AtomicI32::new(0));
  let waiter = {
    let (registry, cell) = (registry.clone(), cell.clone());
    thread::spawn(move || registry.enqueue_if(KEY, || cell.load(Ordering::SeqCst) == 0, |_| "w"))
  };
  (cell, waiter)
}

/// The notify that skips the lock when `KEY`'s "may be waiting" count is
/// 0 (`Registry::may_wait`, lib/atomics.js), after a plain (relaxed) store
/// of 1 into `cell`, as a JS program may make: how many it woke.
fn store_then_notify_unless_nobody_waits(
  registry: &Registry<&'static str>,
  cell: &AtomicI32,
) -> usize {
  cell.store(1, Ordering::Relaxed);
  if registry.may_wait(KEY) {
    registry.dequeue(KEY, usize::MAX).len()
  } else {
    0
  }
}

/// The waiter that checked `cell == 0` was woken by the notify if, and
/// only if, it queued: a notify that skipped never leaves one behind.
fn assert_woken_iff_queued(enqueued: Enqueued, woken: usize) {
  match enqueued {
    Enqueued::NotEqual => assert_eq!(woken, 0),
    Enqueued::Queued(_) => assert_eq!(woken, 1, "a queued waiter the notify skipped"),
  }
}

/// A waiter checks `cell == 0` and queues under the lock; the notifier
/// stores 1 and notifies. Either the waiter saw 1 (not-equal), or the
/// notify took it: it is never left queued (the lost wake-up).
#[test]
fn no_wake_up_is_lost_between_check_and_enqueue() {
  loom::model(|| {
    let (registry, cell, waiter) = spawn_waiter_while_zero();
    cell.store(1, Ordering::SeqCst);
    let woken = registry.dequeue(KEY, usize::MAX).len();
    match waiter.join().unwrap() {
      Enqueued::NotEqual => assert_eq!(woken, 0),
      Enqueued::Queued(_) => assert_eq!(
        woken, 1,
        "queued before the store, so the notify must take it"
      ),
    }
    assert!(registry.is_empty(), "a waiter left queued after the notify");
  });
}

/// Two threads queue on one key while a third notifies one at a time:
/// wake order is enqueue order, and the counts add up.
#[test]
fn fifo_and_counts_under_concurrent_enqueue_and_notify() {
  loom::model(|| {
    let registry = Arc::new(Registry::new());
    let first = queued(&registry, KEY, "first");
    let second = {
      let registry = registry.clone();
      thread::spawn(move || queued(&registry, KEY, "second"))
    };
    let notifier = {
      let registry = registry.clone();
      thread::spawn(move || registry.dequeue(KEY, 1))
    };
    let second = second.join().unwrap();
    assert!(second > first, "ids follow enqueue order");
    let woken = notifier.join().unwrap();
    assert_eq!(woken.len(), 1);
    assert_eq!(woken[0], (first, "first"), "the oldest waiter goes first");
    assert_eq!(
      registry.dequeue(KEY, 5).into_vec(),
      vec![(second, "second")]
    );
  });
}

/// Waiters on two keys that share a bucket: a notify of one key never
/// takes the other's waiter, whatever the interleaving.
#[test]
fn keys_sharing_a_bucket_stay_apart() {
  loom::model(|| {
    let registry = Arc::new(Registry::new());
    let a = KEY;
    // A key of another line: the elements of one line always share a
    // bucket, and a model with two buckets finds another line soon.
    let b = (1..64)
      .map(|i| KEY + 64 * i)
      .find(|&b| Registry::<()>::same_bucket(a, b))
      .expect("a colliding key");
    let other = {
      let registry = registry.clone();
      thread::spawn(move || {
        queued(&registry, b, "b");
        registry.dequeue(a, usize::MAX).len()
      })
    };
    queued(&registry, a, "a");
    let taken_by_other = other.join().unwrap();
    let left_on_a = registry.dequeue(a, usize::MAX).len();
    assert_eq!(taken_by_other + left_on_a, 1);
    assert_eq!(registry.waiters_on(b), 1);
  });
}

/// The notify that skips the lock when the key's "may be waiting" count is
/// 0 (`Registry::may_wait`, lib/atomics.js): the notifier stores its value
/// with a plain (relaxed) store, as a JS program may, then reads the count
/// with a read-modify-write; the waiter counts itself before its value
/// check. Either the waiter sees the new value, or the notifier sees the
/// count, takes the lock and wakes the waiter: a notify that skipped never
/// leaves a waiter queued behind it.
#[test]
fn a_notify_that_skips_the_lock_loses_no_wake_up() {
  loom::model(|| {
    let (registry, cell, waiter) = spawn_waiter_while_zero();
    let woken = store_then_notify_unless_nobody_waits(&registry, &cell);
    assert_woken_iff_queued(waiter.join().unwrap(), woken);
    assert!(registry.is_empty(), "a waiter left queued after the notify");
  });
}

/// The same with a waiter on another key that shares the count, leaving
/// by a timeout meanwhile: its decrement never hides the first waiter's
/// increment, and a count that reads 0 never hides a queued waiter. The
/// two together reach the models' `STUCK` (2), so this also races the
/// increment that sticks the count with the notifier's check (that a stuck
/// count stays stuck is `a_stuck_count_stays_stuck_while_its_waiters_leave`).
#[test]
fn a_shared_count_leaving_meanwhile_hides_no_waiter() {
  loom::model(|| {
    let registry = Arc::new(Registry::<&'static str>::new());
    let other_key = (1..64)
      .map(|i| KEY + 4 * i)
      .find(|&k| registry::may_wait_slot(k) == registry::may_wait_slot(KEY))
      .expect("a key sharing the count");
    let other = queued(&registry, other_key, "other");
    let (cell, waiter) = spawn_waiter_while_zero_on(&registry);
    let timer = {
      let registry = registry.clone();
      thread::spawn(move || registry.remove(other_key, other).is_some())
    };
    let woken = store_then_notify_unless_nobody_waits(&registry, &cell);
    assert!(timer.join().unwrap());
    assert_woken_iff_queued(waiter.join().unwrap(), woken);
    assert!(registry.is_empty());
    // Back to 0, unless both increments came before either decrement,
    // which left it stuck.
  });
}

/// A count that is stuck (`STUCK` waiters on keys of its slot: 2 in the
/// models) stays stuck while they leave and another queues: had the
/// leavers' decrements come off a count the newcomer's increment did not
/// add to, the count would read 0 with the newcomer queued, and the
/// notify would skip it.
#[test]
fn a_stuck_count_stays_stuck_while_its_waiters_leave() {
  loom::model(|| {
    let registry = Arc::new(Registry::<&'static str>::new());
    let sharing: Vec<usize> = (1..64)
      .map(|i| KEY + 4 * i)
      .filter(|&k| registry::may_wait_slot(k) == registry::may_wait_slot(KEY))
      .take(2)
      .collect();
    let first = queued(&registry, sharing[0], "first");
    let second = queued(&registry, sharing[1], "second");
    let (cell, waiter) = spawn_waiter_while_zero_on(&registry);
    let leavers = {
      let (registry, sharing) = (registry.clone(), sharing.clone());
      thread::spawn(move || {
        registry.remove(sharing[0], first).is_some()
          && registry.remove(sharing[1], second).is_some()
      })
    };
    let woken = store_then_notify_unless_nobody_waits(&registry, &cell);
    assert!(leavers.join().unwrap());
    assert_woken_iff_queued(waiter.join().unwrap(), woken);
    assert!(registry.is_empty());
    assert!(registry.may_wait(KEY), "a stuck count came unstuck");
  });
}
