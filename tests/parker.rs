//! The sync waiter's parker (`src/parker.rs`) on real threads: a slice
//! that ends unwoken, an unpark before or during a park, reuse by the next
//! wait. Its races with a notify are model-checked in loom_sync_wait.rs.

use std::time::Instant;

use atomics_waitasync::parker::{ParkState, Parker};
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
  let waker = thread::spawn(move || other.unpark());
  parker.park();
  waker.join().unwrap();
}

#[test]
fn unpark_wakes_a_thread_asleep_past_its_spin() {
  // The waiter announces its sleep only after its spin: wait for that,
  // so the unpark has to make the wake-up call.
  let parker = Arc::new(Parker::new());
  let other = parker.clone();
  let waiter = thread::spawn(move || other.park_until(Instant::now() + Duration::from_secs(60)));
  while !parker.parked_for_testing() {
    thread::yield_now();
  }
  parker.unpark();
  assert_eq!(waiter.join().unwrap(), ParkState::Woken);
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
