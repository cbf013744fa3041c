//! The sync waiter's parker (`src/parker.rs`) on real threads: a slice
//! that ends unwoken, an unpark before or during a park, reuse by the next
//! wait. Its races with a notify are model-checked in loom_sync_wait.rs.

use std::time::Instant;

use atomics_waitasync::parker::{ParkState, Parker};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

#[test]
fn slice_ends_without_wake() {
  let parker = Parker::new();
  let start = Instant::now();
  assert_eq!(
    parker.park_until(start + Duration::from_millis(5)),
    ParkState::Waiting
  );
  assert!(start.elapsed() >= Duration::from_millis(5));
}

#[test]
fn unpark_before_park_is_not_lost() {
  let parker = Parker::new();
  parker.unpark();
  assert_eq!(
    parker.park_until(Instant::now() + Duration::from_secs(60)),
    ParkState::Woken
  );
}

#[test]
fn unpark_from_another_thread_wakes() {
  let parker = Arc::new(Parker::new());
  let other = parker.clone();
  let (done, ended) = mpsc::channel();
  let (started, thread_id) = mpsc::channel();
  // Parks on a thread of its own, so that a lost wake-up fails the test
  // rather than hanging it.
  thread::spawn(move || {
    let _ = started.send(thread_id_for_testing());
    other.park();
    let _ = done.send(());
  });
  // Unparked only once it is asleep, so that this tests the wake-up call,
  // not an unpark that came first. (It did unpark at once, almost always
  // before the other thread parked.)
  let id = thread_id.recv().unwrap();
  let give_up = Instant::now() + Duration::from_secs(10);
  while !parker.parked_for_testing() || !asleep_in_the_kernel(id) {
    assert!(
      Instant::now() < give_up,
      "the other thread never went to sleep"
    );
    thread::yield_now();
  }
  parker.unpark();
  ended
    .recv_timeout(Duration::from_secs(10))
    .expect("the unpark did not wake the parked thread");
}

/// The calling thread's kernel id, where there is one to read.
fn thread_id_for_testing() -> Option<i32> {
  #[cfg(target_os = "linux")]
  {
    // SAFETY: gettid has no preconditions; it only returns the id.
    Some(unsafe { libc::gettid() })
  }
  #[cfg(not(target_os = "linux"))]
  {
    None
  }
}

/// Whether the thread `id` sleeps in the kernel (state `S`). After its
/// parker says `PARKED`, the only call that can block it is the futex
/// wait: `PARKED` alone comes just before it, and an unpark then finds the
/// word changed and needs no wake-up call. True where it cannot be read.
fn asleep_in_the_kernel(id: Option<i32>) -> bool {
  let Some(id) = id else { return true };
  let Ok(stat) = std::fs::read_to_string(format!("/proc/self/task/{id}/stat")) else {
    return true;
  };
  // "tid (comm) S ...": the name may hold spaces and parentheses.
  stat
    .rsplit_once(')')
    .is_some_and(|(_, rest)| rest.trim_start().starts_with('S'))
}

/// Review item 6: with a timeout of 60 s, this used to pass with the
/// wake-up system call deleted (the waiter slept out its timeout, then saw
/// `WOKEN`). The timeout is an hour now, and the wake-up must come within
/// 10 s: only the unpark's system call can end the sleep that soon.
#[test]
fn unpark_wakes_a_thread_asleep_past_its_spin() {
  // The waiter announces its sleep only after its spin: wait for that,
  // so the unpark has to make the wake-up call.
  let parker = Arc::new(Parker::new());
  let other = parker.clone();
  let (done, ended) = mpsc::channel();
  thread::spawn(move || {
    let _ = done.send(other.park_until(Instant::now() + Duration::from_secs(3600)));
  });
  while !parker.parked_for_testing() {
    thread::yield_now();
  }
  parker.unpark();
  let state = ended
    .recv_timeout(Duration::from_secs(10))
    .expect("the unpark did not wake the sleeping thread");
  assert_eq!(state, ParkState::Woken);
}

#[test]
fn reset_starts_the_next_wait_unwoken() {
  let parker = Parker::new();
  parker.unpark();
  parker.park();
  parker.reset();
  let start = Instant::now();
  assert_eq!(
    parker.park_until(start + Duration::from_millis(5)),
    ParkState::Waiting
  );
}

/// The spin before a sleep adapts (`Parker::spin`, `sync::SPIN_MAX`): a
/// spin that finds no wake-up halves the next, down to SPIN_MIN; every
/// SPIN_PROBE_EVERY-th wait spins the whole again; a spin that finds its
/// wake-up makes the next whole.
#[test]
fn spin_adapts_to_whether_it_finds_its_wake_up() {
  use atomics_waitasync::sync::{SPIN_MAX, SPIN_MIN, SPIN_PROBE_EVERY};
  let parker = Parker::new();
  assert_eq!(parker.spin_limit_for_testing(), SPIN_MAX);
  assert!(!parker.spin(None), "nobody unparked it");
  assert_eq!(parker.spin_limit_for_testing(), SPIN_MAX / 2);
  // A new wait whose spin finds nothing.
  let spin_in_vain = || {
    parker.reset();
    assert!(!parker.spin(None), "nobody unparked it");
  };
  let mut waits = 1;
  while parker.spin_limit_for_testing() > SPIN_MIN {
    spin_in_vain();
    waits += 1;
    assert!(
      waits < SPIN_PROBE_EVERY,
      "halving reaches SPIN_MIN before the first probe"
    );
  }
  // At SPIN_MIN: the waits up to the probe stay there; the probe spins the
  // whole once and, finding nothing, leaves the spins at SPIN_MIN (review
  // of 81c43ff: it halved its own whole, so the next spins were long again).
  let mut at_min = 0;
  while parker.spin_limit_for_testing() == SPIN_MIN {
    spin_in_vain();
    at_min += 1;
    assert!(
      at_min < SPIN_PROBE_EVERY,
      "no probe within SPIN_PROBE_EVERY waits"
    );
  }
  assert_eq!(
    parker.spin_limit_for_testing(),
    SPIN_MAX,
    "the probe spins the whole of SPIN_MAX"
  );
  // A wait whose deadline comes within a spin spins a few rounds only: the
  // probe is still to come (review: it used the probe up).
  parker.reset();
  assert!(!parker.spin(Some(Instant::now())));
  assert_eq!(
    parker.spin_limit_for_testing(),
    SPIN_MAX,
    "a short wait used the probe up"
  );
  spin_in_vain();
  assert_eq!(
    parker.spin_limit_for_testing(),
    SPIN_MIN,
    "a probe that found nothing leaves the spins short"
  );
  // A spin that finds its wake-up: the next one is whole again.
  parker.reset();
  parker.unpark();
  assert!(parker.spin(None));
  assert_eq!(parker.spin_limit_for_testing(), SPIN_MAX);
  // A wait whose deadline comes within a spin (`wait(…, 0)`) spins a few
  // rounds only, and that says nothing of the next spin's length.
  parker.reset();
  assert!(!parker.spin(Some(Instant::now())));
  assert_eq!(parker.spin_limit_for_testing(), SPIN_MAX);
}
