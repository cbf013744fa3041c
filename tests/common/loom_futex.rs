//! The core's futex and spin (`crate::sync::{Futex, Waited, spin_round,
//! SPIN_ROUNDS}`, src/futex.rs), modelled with loom, for the models that
//! compile src/parker.rs against them.
//!
//! The futex keeps the kernel's promise and nothing more: `wait` sleeps
//! only if the word holds the expected value, checked under the lock that
//! `wake_one` takes too (the kernel's hash-bucket lock). A wait with a
//! deadline (a sync wait's slice) times out at once: loom has no clock,
//! and a timeout that may fire at any moment, woken or not, is exactly
//! what the real one is; every interleaving with the unpark then decides
//! whether the slice saw it.

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
  lock: Mutex<()>,
  condvar: Condvar,
}

impl Futex {
  pub fn new(value: u32) -> Self {
    Futex {
      word: AtomicU32::new(value),
      lock: Mutex::new(()),
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
      return Waited::TimedOut;
    }
    drop(self.condvar.wait(guard).unwrap());
    Waited::Woken
  }

  pub fn wake_one(&self) {
    let _guard = self.lock.lock().unwrap();
    self.condvar.notify_one();
  }
}

/// One look before sleeping is enough to put a look between any two steps.
pub const SPIN_ROUNDS: u32 = 1;

pub fn spin_round(_round: u32) {
  loom::thread::yield_now();
}
