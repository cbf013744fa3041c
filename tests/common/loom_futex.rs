//! The core's futex and spin (`crate::sync::{Futex, Waited, spin_round,
//! yield_core}` and the spin's constants, src/futex.rs and src/sync.rs),
//! modelled with loom, for the models that compile src/parker.rs against
//! them.
//!
//! The futex keeps the kernel's promise and nothing more: `wait` sleeps
//! only if the word holds the expected value, checked under the lock that
//! `wake_one` takes too (the kernel's hash-bucket lock), and any
//! `wake_one` that comes while it sleeps ends it, whoever it was meant
//! for: a late one from an earlier wait on the same word ends the next
//! wait early, with the word unchanged, as the kernel's does. A wait with
//! a deadline (a sync wait's slice) lets go of the lock, as if asleep,
//! then takes it again as if its deadline had passed: loom has no clock,
//! and a timeout that may fire at any moment is exactly what the real one
//! is. If a `wake_one` came in between, it was woken ("returns early");
//! otherwise it timed out. Every interleaving with the unparks then
//! decides which.

use std::sync::atomic::Ordering;
use std::time::Instant;

use loom::sync::atomic::AtomicU32;
use loom::sync::{Condvar, Mutex};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
  Woken,
  TimedOut,
}

pub struct Futex {
  word: AtomicU32,
  /// Guarded by the lock: how many `wake_one`s came so far, for a wait
  /// with a deadline to tell whether one came while it slept.
  lock: Mutex<u64>,
  condvar: Condvar,
}

impl Futex {
  pub fn new(value: u32) -> Self {
    Futex {
      word: AtomicU32::new(value),
      lock: Mutex::new(0),
      condvar: Condvar::new(),
    }
  }

  pub fn word(&self) -> &AtomicU32 {
    &self.word
  }

  pub fn wait(&self, expected: u32, until: Option<Instant>) -> Waited {
    let guard = self.lock.lock().unwrap();
    if self.word.load(Ordering::SeqCst) != expected {
      return Waited::Woken;
    }
    if until.is_some() {
      // Asleep until a wake-up or the deadline (one sleeper per word:
      // a parker's thread).
      let wakes = *guard;
      drop(guard);
      let woken = *self.lock.lock().unwrap() != wakes;
      return if woken {
        Waited::Woken
      } else {
        Waited::TimedOut
      };
    }
    drop(self.condvar.wait(guard).unwrap());
    Waited::Woken
  }

  pub fn wake_one(&self) {
    let mut wakes = self.lock.lock().unwrap();
    *wakes += 1;
    self.condvar.notify_one();
  }
}

/// One look before sleeping is enough to put a look between any two steps
/// (the spin's length adapts in the real build; its bookkeeping is the
/// waiter's own, no step of a race).
pub const SPIN_MAX: u32 = 1;
pub const SPIN_MIN: u32 = 1;
pub const SPIN_PROBE_EVERY: u32 = 32;
pub const SPIN_TIME: std::time::Duration = std::time::Duration::from_micros(20);
pub const SPIN_CLOCK_EVERY: u32 = 64;

pub fn spin_round() {
  loom::thread::yield_now();
}

pub const SPIN_YIELD_EVERY: u32 = 16;
pub const YIELD_SLOW: std::time::Duration = std::time::Duration::from_micros(500);
pub const YIELD_OFF_MIN: u32 = 32;
pub const YIELD_OFF_MAX: u32 = 1 << 16;

pub fn yield_core() {
  loom::thread::yield_now();
}
