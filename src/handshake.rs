//! The notifier thread's sleep/wake handshake with its senders, apart from
//! the thread so that `tests/loom_handshake.rs` can model-check this very
//! code (through `crate::sync`) against loom's atomics and fences.
//!
//! The thread publishes when it will wake by itself (`before_park`), then
//! looks at its channel once more and parks only if it is still empty. A
//! sender sends first, then reads what the thread published
//! (`wake_for_add` / `wake_for_cancel`). With a SeqCst fence between the two
//! steps on both sides, at least one side sees the other: either the thread
//! sees the message and does not park, or the sender sees the published
//! deadline and unparks it when it must. No wake-up is lost.

use std::sync::atomic::Ordering;

use crate::sync::{fence, AtomicU64};

/// Published while the thread is awake (it will look at the channel).
pub const AWAKE: u64 = 0;
/// Published while the thread is parked with no deadline at all.
pub const NO_DEADLINE: u64 = u64::MAX;

/// When the notifier thread will wake by itself, as nanoseconds after its
/// epoch (never `AWAKE`: a deadline is at least 1), or `AWAKE` /
/// `NO_DEADLINE`.
pub struct Handshake {
  /// Written by the thread, read by senders; SeqCst, paired with fences.
  sleep_until: AtomicU64,
}

impl Default for Handshake {
  fn default() -> Self {
    Handshake {
      sleep_until: AtomicU64::new(AWAKE),
    }
  }
}

impl Handshake {
  /// The thread, about to park until `until` (or `NO_DEADLINE`): publishes
  /// it. The caller then looks at its channel, and parks only if empty.
  pub fn before_park(&self, until: u64) {
    self.sleep_until.store(until, Ordering::SeqCst);
    fence(Ordering::SeqCst);
  }

  /// The thread, back from parking: awake, it will read the channel.
  pub fn after_park(&self) {
    self.sleep_until.store(AWAKE, Ordering::SeqCst);
  }

  /// A sender that has just sent a deadline at `at`: whether it must
  /// unpark the thread (it sleeps until later than `at`).
  #[must_use]
  pub fn wake_for_add(&self, at: u64) -> bool {
    fence(Ordering::SeqCst);
    at < self.sleep_until.load(Ordering::SeqCst)
  }

  /// A sender that has just sent the cancel of a deadline at `at`: whether
  /// it must unpark the thread, which it does only when the thread sleeps
  /// until that very deadline. (An earlier one is one the thread has yet
  /// to read, its add woke it or is about to, or one already expired; a
  /// later one can wait until the thread next wakes.)
  #[must_use]
  pub fn wake_for_cancel(&self, at: u64) -> bool {
    fence(Ordering::SeqCst);
    at == self.sleep_until.load(Ordering::SeqCst)
  }
}
