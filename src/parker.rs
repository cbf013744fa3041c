//! Blocking park/unpark for the synchronous `wait`.
//!
//! A [`Parker`] belongs to one sync waiter. The thread that takes the waiter
//! out of the registry (a notify) calls [`Parker::unpark`]; the waiting thread
//! sleeps in [`Parker::park_until`] for at most one slice at a time, so that
//! it can go back to JS between slices and let `worker.terminate()` run
//! (a Rust condvar wait is not interruptible by V8's termination).

use std::time::Instant;

use parking_lot::{Condvar, Mutex};

/// Where a parked thread stands after a slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParkState {
  /// Nobody woke it yet.
  Waiting,
  /// A notify took it off its queue.
  Woken,
}

pub struct Parker {
  /// Guarded by itself: set once, from `Waiting` to `Woken`.
  state: Mutex<ParkState>,
  condvar: Condvar,
}

impl Default for Parker {
  fn default() -> Self {
    Self::new()
  }
}

impl Parker {
  pub fn new() -> Self {
    Parker {
      state: Mutex::new(ParkState::Waiting),
      condvar: Condvar::new(),
    }
  }

  /// Sleeps until woken or until `until`, whichever comes first.
  pub fn park_until(&self, until: Instant) -> ParkState {
    let mut state = self.state.lock();
    while *state == ParkState::Waiting {
      if self.condvar.wait_until(&mut state, until).timed_out() {
        break;
      }
    }
    *state
  }

  /// Sleeps until woken, however long: for a waiter that lost the race to
  /// remove itself on timeout, whose notifier is about to call `unpark`.
  pub fn park(&self) {
    let mut state = self.state.lock();
    while *state == ParkState::Waiting {
      self.condvar.wait(&mut state);
    }
  }

  /// Wakes the parked thread. Called once, by the owner of the outcome.
  pub fn unpark(&self) {
    let mut state = self.state.lock();
    *state = ParkState::Woken;
    // Notify under the lock: the waiter may free the parker as soon as it
    // sees `Woken`, and it cannot see it before we release the lock.
    self.condvar.notify_one();
  }
}

impl crate::wake::Unpark for Parker {
  fn unpark(&self) {
    Parker::unpark(self);
  }
}

#[cfg(test)]
mod tests {
  use super::*;
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
}
