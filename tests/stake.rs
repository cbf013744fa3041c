//! A Semaphore's teardown (src/stake.rs): what a thread that ends holding
//! permits gives back. (tests/loom_semaphore.rs checks it against every
//! interleaving with the semaphore's JavaScript steps.)

use std::sync::atomic::AtomicI32;
use std::sync::atomic::Ordering::SeqCst;

use atomics_waitasync::stake::release_dead_permits;

#[test]
fn a_dead_holders_permits_are_added_to_the_free_ones() {
  let (permits, waiters) = (AtomicI32::new(2), AtomicI32::new(1));
  assert!(release_dead_permits(&permits, &waiters, 3, 0));
  assert_eq!(permits.load(SeqCst), 5);
  assert_eq!(waiters.load(SeqCst), 1);
}

#[test]
fn a_dead_holders_permits_stop_at_the_most_the_word_holds() {
  let (permits, waiters) = (AtomicI32::new(i32::MAX - 1), AtomicI32::new(0));
  assert!(!release_dead_permits(&permits, &waiters, 3, 0));
  assert_eq!(permits.load(SeqCst), i32::MAX);
}

#[test]
fn a_dead_holder_gives_back_to_a_signalling_semaphore_below_zero() {
  let (permits, waiters) = (AtomicI32::new(-4), AtomicI32::new(3));
  assert!(release_dead_permits(&permits, &waiters, 1, 2));
  assert_eq!(permits.load(SeqCst), -3);
  assert_eq!(waiters.load(SeqCst), 1);
}
