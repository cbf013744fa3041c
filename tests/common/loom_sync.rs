//! The core's `crate::sync` (src/sync.rs), backed by loom, for the models
//! that compile src/registry.rs and src/wake.rs against it
//! (`#[path = "common/loom_sync.rs"] mod sync;`).

pub use loom::sync::atomic::{AtomicU64, AtomicU8};

/// The registry's counts: loom's atomics cannot be made from zeroed memory.
pub type Counts = Box<[AtomicU8]>;

pub fn zeroed_counts(n: usize) -> Counts {
  (0..n).map(|_| AtomicU8::new(0)).collect()
}

/// parking_lot's `lock()` returns the guard directly; so does this.
pub struct Mutex<T>(loom::sync::Mutex<T>);

impl<T> Mutex<T> {
  pub fn new(value: T) -> Self {
    Mutex(loom::sync::Mutex::new(value))
  }

  pub fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
    self.0.lock().unwrap()
  }
}

/// Few buckets keep each model small; collisions are exercised too.
pub const BUCKET_COUNT: usize = 2;

/// Few counts, so that keys share them too.
pub const MAY_WAIT_SLOTS: usize = 4;

/// A count sticks at 2 here (255 in the addon), so that models reach it.
pub const MAY_WAIT_STUCK: u8 = 2;
