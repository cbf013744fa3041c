//! Model checking of the sync wait with loom: the very same
//! `src/parker.rs` (its futex state word, spin and sleep) and
//! `src/sync_wait.rs` (how a wait's slice ends), compiled against loom's
//! atomics and a model futex (`tests/common/loom_futex.rs`), under every
//! interleaving with a notify on another thread.
//!
//! What each model asserts is what a user relies on: a notify that
//! counted a sync waiter wakes it, or its wake-up goes on, never lost
//! (the waiter does not also report "timed-out"); and a thread's parker,
//! reused by its next wait, is never woken by a notify meant for the
//! wait before. A lost unpark shows as a deadlock, which loom reports.
//! The model futex lets any wake-up call end any sleep on the word,
//! including one meant for an earlier wait, so the parker's loops are
//! exercised against early returns too.

#[path = "common/loom_sync.rs"]
mod loom_sync;

#[path = "common/loom_futex.rs"]
mod loom_futex;

mod sync {
  pub use super::loom_futex::{
    spin_round, yield_core, Futex, Waited, SPIN_CLOCK_EVERY, SPIN_MAX, SPIN_MIN, SPIN_PROBE_EVERY,
    SPIN_TIME, SPIN_YIELD_EVERY, YIELD_OFF_MAX, YIELD_OFF_MIN, YIELD_SLOW,
  };
  pub use super::loom_sync::*;
}

#[path = "../src/registry.rs"]
#[allow(dead_code, reason = "only part of the registry is exercised here")]
mod registry;

#[path = "../src/wake.rs"]
#[allow(dead_code, reason = "only the sync waiters' part is used here")]
mod wake;

#[path = "../src/parker.rs"]
#[allow(dead_code, reason = "its test hook is for tests/parker.rs")]
mod parker;

#[path = "../src/sync_wait.rs"]
#[allow(dead_code, reason = "only part of the sync wait is exercised here")]
mod sync_wait;

use std::sync::Arc;
use std::time::{Duration, Instant};

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::thread;
use parker::Parker;
use registry::Registry;
use sync_wait::{Slice, SyncWait, WokenMark};

/// An env signal the models never give: they queue only sync waiters.
struct NoEnv;

impl wake::Signal for NoEnv {
  fn signal(&self) -> bool {
    unreachable!("no async waiter in these models")
  }
}

/// The core's queue entry (`core::Waiter`), over the model's parker.
type TestRegistry = Registry<wake::Waiter<NoEnv, Parker, u64>>;

const KEY: usize = 0x1000;
const OTHER_KEY: usize = 0x2000;
const THIRD_KEY: usize = 0x3000;

/// `Core::enqueue_sync`, through the same `sync_wait::enqueue`: the
/// thread's parker, reset, queued on `key`; its deadline already passed,
/// so a slice that sees no unpark ends it.
fn enqueue(registry: &TestRegistry, parker: &Arc<Parker>, key: usize) -> SyncWait {
  sync_wait::enqueue(
    registry,
    key,
    Some(Instant::now()),
    parker,
    || true,
    wake::Waiter::Sync,
  )
  .expect("the check passed")
}

/// `Core::notify` of one, through the same `wake::notify`.
fn notify(registry: &TestRegistry, key: usize) -> usize {
  wake::notify(registry, &|_, _| {}, key, 1)
}

fn notifier(registry: &Arc<TestRegistry>, key: usize) -> thread::JoinHandle<usize> {
  let registry = registry.clone();
  thread::spawn(move || notify(&registry, key))
}

/// A sync wait's last slice, its deadline passed, against a notify: the
/// waiter takes itself off its queue ("timed-out") or, if the notify took
/// it first, waits for its unpark and reports "ok". Never both, never
/// neither.
#[test]
fn timeout_against_notify_loses_no_wake_up() {
  loom::model(|| {
    let registry = Arc::new(TestRegistry::new());
    let parker = Arc::new(Parker::new());
    let mut wait = Some(enqueue(&registry, &parker, KEY));
    let notifier = notifier(&registry, KEY);
    let end = sync_wait::slice(&registry, &mut wait, Duration::ZERO);
    let woke = notifier.join().unwrap();
    assert!(wait.is_none(), "the wait ended");
    match end {
      Some(Slice::Woken { key: KEY }) => assert_eq!(woke, 1, "woken by nobody"),
      Some(Slice::TimedOut) => assert_eq!(woke, 0, "a counted wake-up was lost"),
      other => panic!("{other:?}"),
    }
    assert!(registry.is_empty());
  });
}

/// A notify that races with the enqueue itself (it starts first): it
/// finds nothing, or takes the waiter and unparks it the moment it is
/// queued. The parker is reset before the waiter is queued
/// (`sync_wait::enqueue`); a reset after would undo that unpark, and the
/// waiter, gone from its queue, would wait in `abandon` for good.
#[test]
fn a_notify_racing_with_the_enqueue_loses_no_wake_up() {
  loom::model(|| {
    let registry = Arc::new(TestRegistry::new());
    let parker = Arc::new(Parker::new());
    let notifier = notifier(&registry, KEY);
    let mut wait = Some(enqueue(&registry, &parker, KEY));
    let end = sync_wait::slice(&registry, &mut wait, Duration::ZERO);
    let woke = notifier.join().unwrap();
    match end {
      Some(Slice::Woken { key: KEY }) => assert_eq!(woke, 1, "woken by nobody"),
      Some(Slice::TimedOut) => assert_eq!(woke, 0, "a counted wake-up was lost"),
      other => panic!("{other:?}"),
    }
    assert!(registry.is_empty());
  });
}

/// A wait abandoned (its JS loop threw, or its thread is terminated)
/// against a notify, then the thread's next wait on the same parker, on an
/// element nobody notifies: the notify's unpark, however late, must not
/// wake that next wait. The abandoned wait's wake-up, if it got one, is
/// handed back to be passed on.
#[test]
fn a_late_unpark_does_not_wake_the_next_wait() {
  loom::model(|| {
    let registry = Arc::new(TestRegistry::new());
    let parker = Arc::new(Parker::new());
    let first = enqueue(&registry, &parker, KEY);
    let notifier = notifier(&registry, KEY);
    let unseen = sync_wait::abandon(&registry, &first);
    let mut next = Some(enqueue(&registry, &parker, OTHER_KEY));
    let end = sync_wait::slice(&registry, &mut next, Duration::ZERO);
    assert_eq!(
      end,
      Some(Slice::TimedOut),
      "woken by a notify for another wait"
    );
    let woke = notifier.join().unwrap();
    assert_eq!(unseen, (woke == 1).then_some(KEY), "the wake-up goes on");
    assert!(registry.is_empty());
  });
}

/// A wait woken in its slice, then the next wait on the same parker times
/// out: the unpark that ended the first (its system call may come after
/// the reset) is not seen by the second.
#[test]
fn a_woken_wait_leaves_the_next_one_unwoken() {
  loom::model(|| {
    let registry = Arc::new(TestRegistry::new());
    let parker = Arc::new(Parker::new());
    let mut first = Some(enqueue(&registry, &parker, KEY));
    let notifier = notifier(&registry, KEY);
    // Sleep until the notify: no deadline.
    if let Some(wait) = first.as_mut() {
      wait.deadline = None;
    }
    parker.park();
    let mut next = Some(enqueue(&registry, &parker, OTHER_KEY));
    let end = sync_wait::slice(&registry, &mut next, Duration::ZERO);
    assert_eq!(end, Some(Slice::TimedOut));
    assert_eq!(notifier.join().unwrap(), 1);
  });
}

/// Data the notifier wrote before its notify, read by the waiter once its
/// slice says "ok": a JS caller relies on this (the notifier stores, then
/// notifies; the woken waiter loads). Whatever the path (woken while it
/// spins, while it sleeps, or after losing the race to take itself off
/// its queue), the unpark's write happens before the waiter's read; loom
/// reports a causality violation if not (review item 3: the parker's
/// Release swap, its Acquire load of the word or its Acquire
/// compare-exchange weakened to Relaxed).
#[test]
#[expect(
  clippy::arc_with_non_send_sync,
  reason = "loom's model threads need no Send; loom itself checks every access to the cell"
)]
fn a_woken_wait_sees_what_its_notifier_wrote() {
  loom::model(|| {
    let registry = Arc::new(TestRegistry::new());
    let parker = Arc::new(Parker::new());
    let data = Arc::new(UnsafeCell::new(0u32));
    let mut wait = Some(enqueue(&registry, &parker, KEY));
    let notifier = {
      let (registry, data) = (registry.clone(), data.clone());
      thread::spawn(move || {
        data.with_mut(|d| {
          // SAFETY: the only write; loom checks that it happens before
          // the waiter's read, and reports a causality violation if not.
          unsafe { *d = 1 }
        });
        notify(&registry, KEY)
      })
    };
    if let Some(Slice::Woken { key: KEY }) = sync_wait::slice(&registry, &mut wait, Duration::ZERO)
    {
      assert_eq!(
        data.with(|d| {
          // SAFETY: after the unpark, which comes after the only write
          // (loom checks it).
          unsafe { *d }
        }),
        1
      );
    }
    notifier.join().unwrap();
  });
}

/// The same at the parker itself, through `park`: its loop ends on
/// seeing the unpark (a failed compare-exchange), and what the unparking
/// thread wrote before is visible after.
#[test]
#[expect(
  clippy::arc_with_non_send_sync,
  reason = "loom's model threads need no Send; loom itself checks every access to the cell"
)]
fn park_sees_what_the_unparking_thread_wrote() {
  loom::model(|| {
    let parker = Arc::new(Parker::new());
    let data = Arc::new(UnsafeCell::new(0u32));
    let unparker = {
      let (parker, data) = (parker.clone(), data.clone());
      thread::spawn(move || {
        data.with_mut(|d| {
          // SAFETY: the only write; loom checks that it happens before
          // the waiter's read, and reports a causality violation if not.
          unsafe { *d = 1 }
        });
        parker.unpark();
      })
    };
    parker.park();
    assert_eq!(
      data.with(|d| {
        // SAFETY: after the unpark, which comes after the only write
        // (loom checks it).
        unsafe { *d }
      }),
      1
    );
    unparker.join().unwrap();
  });
}

/// A wake-up system call comes late, from the notify of a wait that has
/// already ended (it saw the swap to `WOKEN` first), and lands in the
/// thread's next wait: the futex returns early with the word unchanged.
/// The next wait must sleep on. Here that wait is abandoned after a
/// second notify took it, so it waits in `park` for that notify's unpark;
/// had the stray wake-up ended `park` (review item 4: a `park` without its
/// loop), the second unpark would land on the third wait. And a slice's
/// sleep ended by a stray wake-up must not say "ok" (a `park_until` that
/// took any return of the futex for a wake-up).
#[test]
fn a_late_wake_up_call_ends_no_later_wait() {
  loom::model(|| {
    let registry = Arc::new(TestRegistry::new());
    let parker = Arc::new(Parker::new());
    let mut first = Some(enqueue(&registry, &parker, KEY));
    let first_notifier = notifier(&registry, KEY);
    let first_end = sync_wait::slice(&registry, &mut first, Duration::ZERO);
    let second = enqueue(&registry, &parker, OTHER_KEY);
    let second_notifier = notifier(&registry, OTHER_KEY);
    let unseen = sync_wait::abandon(&registry, &second);
    let mut third = Some(enqueue(&registry, &parker, THIRD_KEY));
    let third_end = sync_wait::slice(&registry, &mut third, Duration::ZERO);
    assert_eq!(
      third_end,
      Some(Slice::TimedOut),
      "woken by a notify for another wait"
    );
    let woke = first_notifier.join().unwrap();
    match first_end {
      Some(Slice::Woken { key: KEY }) => assert_eq!(woke, 1, "woken by nobody"),
      Some(Slice::TimedOut) => assert_eq!(woke, 0, "a counted wake-up was lost"),
      other => panic!("{other:?}"),
    }
    let woke = second_notifier.join().unwrap();
    assert_eq!(unseen, (woke == 1).then_some(OTHER_KEY));
    assert!(registry.is_empty());
  });
}

/// What the first of two waiters' thread does with its slice, as the
/// binding and lib/atomics.js do it: a woken wait is marked and asks
/// whether the env is stopping (`WokenMark::woken`; N-API in the binding,
/// here `stopping`); if so, JS stops before the caller sees "ok", else it
/// confirms with a plain store into the mark's word. Then the thread's
/// teardown (`EnvState::abandon_sync_wait`) passes on what is still
/// marked. Returns whether the caller saw "ok".
fn first_waiter_then_teardown(
  registry: &TestRegistry,
  wait: &mut Option<SyncWait>,
  stopping: &AtomicBool,
) -> bool {
  let word = Arc::new(std::sync::atomic::AtomicI32::new(0));
  let mut mark = WokenMark::default();
  mark.set_word(word.clone());
  let saw_ok = match sync_wait::slice(registry, wait, Duration::ZERO) {
    Some(Slice::Woken { key }) => {
      if mark.woken(key, || !stopping.load(Ordering::Relaxed)) {
        word.store(0, std::sync::atomic::Ordering::Relaxed);
        true
      } else {
        false
      }
    }
    Some(Slice::TimedOut) => false,
    other => panic!("{other:?}"),
  };
  wake::pass_on(registry, &|_, _| {}, mark.take_unseen());
  saw_ok
}

/// `worker.terminate(); notify(ta, i, 1)` against two sync waiters: the
/// first, whose thread is being terminated, must not return the wake-up
/// as "ok" (the binding's stop check sees the terminate, which came
/// before the notify: the wake path carries it, even read `Relaxed`);
/// its teardown passes it on, and the second waiter wakes. Or the first
/// timed out before the notify, which then took the second. Fails if
/// `WokenMark` does not keep the key, or the wake path does not carry the
/// terminate's write to the woken thread.
#[test]
fn a_wake_up_taken_after_terminate_goes_on_to_the_next_waiter() {
  loom::model(|| {
    let registry = Arc::new(TestRegistry::new());
    let stopping = Arc::new(AtomicBool::new(false));
    let (first, second) = (Arc::new(Parker::new()), Arc::new(Parker::new()));
    let mut first_wait = Some(enqueue(&registry, &first, KEY));
    let mut second_wait = Some(enqueue(&registry, &second, KEY));
    let terminator = {
      let (registry, stopping) = (registry.clone(), stopping.clone());
      thread::spawn(move || {
        stopping.store(true, Ordering::Relaxed); // terminate()
        notify(&registry, KEY)
      })
    };
    let saw_ok = first_waiter_then_teardown(&registry, &mut first_wait, &stopping);
    assert!(
      !saw_ok,
      "a thread terminated before the notify returned its \"ok\""
    );
    assert_eq!(terminator.join().unwrap(), 1);
    assert_eq!(
      sync_wait::slice(&registry, &mut second_wait, Duration::ZERO),
      Some(Slice::Woken { key: KEY }),
      "the wake-up was lost"
    );
    assert!(registry.is_empty());
  });
}

/// The same with no terminate: a wake-up the first waiter's caller got
/// is not passed on at its thread's teardown, so one notify wakes exactly
/// one waiter. Fails if the teardown ignores the confirmation.
#[test]
fn a_wake_up_the_caller_saw_is_not_passed_on() {
  loom::model(|| {
    let registry = Arc::new(TestRegistry::new());
    let stopping = AtomicBool::new(false);
    let (first, second) = (Arc::new(Parker::new()), Arc::new(Parker::new()));
    let mut first_wait = Some(enqueue(&registry, &first, KEY));
    let mut second_wait = Some(enqueue(&registry, &second, KEY));
    let notifier = notifier(&registry, KEY);
    let saw_ok = first_waiter_then_teardown(&registry, &mut first_wait, &stopping);
    assert_eq!(notifier.join().unwrap(), 1);
    let second_end = sync_wait::slice(&registry, &mut second_wait, Duration::ZERO);
    if saw_ok {
      assert_eq!(
        second_end,
        Some(Slice::TimedOut),
        "one notify woke two waiters"
      );
    } else {
      assert_eq!(
        second_end,
        Some(Slice::Woken { key: KEY }),
        "the wake-up was lost"
      );
    }
    assert!(registry.is_empty());
  });
}
