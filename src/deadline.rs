//! Deadlines: a timeout in milliseconds as an `Instant`, and the 8-byte
//! encoding every async waiter carries ([`When`]), relative to an epoch
//! that the core keeps (one per process: every copy of the package that
//! shares the core shares it, so that they read each other's deadlines
//! the same way).

use std::num::NonZeroU64;
use std::time::{Duration, Instant};

/// Timeouts above this (~31 years) are treated as +Infinity.
pub const MAX_TIMEOUT_MS: f64 = 1e12;

/// The `Instant` a timeout of `timeout_ms` (>= 0) from now ends at; `None`
/// for +Infinity, NaN, or more than `MAX_TIMEOUT_MS`.
pub fn deadline_after(timeout_ms: f64) -> Option<Instant> {
  if timeout_ms.is_finite() && timeout_ms <= MAX_TIMEOUT_MS {
    Instant::now().checked_add(Duration::from_secs_f64(timeout_ms.max(0.0) / 1000.0))
  } else {
    None
  }
}

/// An async waiter's deadline in 8 bytes (an `Option<Instant>` takes 16):
/// nanoseconds since an epoch (the core's), plus one. Every waiter carries
/// one, in the registry and in its env's slab, and converting back with
/// the same epoch always gives the same `Instant`, so the notifier's add
/// and cancel agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct When(NonZeroU64);

impl When {
  /// The deadline `timeout_ms` from now, counted from `epoch`; `None` for
  /// none (see [`deadline_after`]).
  pub fn after(epoch: Instant, timeout_ms: f64) -> Option<When> {
    let at = deadline_after(timeout_ms)?;
    let nanos = at.saturating_duration_since(epoch).as_nanos();
    Some(When(NonZeroU64::new(
      u64::try_from(nanos).ok()?.checked_add(1)?,
    )?))
  }

  /// The deadline as an `Instant`, given the epoch it was made with:
  /// always the same one for the same `When`.
  pub fn instant(self, epoch: Instant) -> Instant {
    epoch + Duration::from_nanos(self.0.get() - 1)
  }
}

// Every pending async waiter carries one, twice: its size is part of what a
// waiter costs.
const _: () = assert!(std::mem::size_of::<Option<When>>() == 8);

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn a_deadline_is_its_timeout_after_the_call_that_made_it() {
    let epoch = Instant::now();
    let before = Instant::now();
    let when = When::after(epoch, 1500.0).expect("a finite deadline");
    let after = Instant::now();
    // Converted back, it is 1500 ms after some moment within the call.
    let timeout = Duration::from_millis(1500);
    let at = when.instant(epoch);
    assert!(before + timeout <= at && at <= after + timeout);
    let from_now = when
      .instant(epoch)
      .saturating_duration_since(Instant::now());
    assert!(from_now <= Duration::from_millis(1500));
  }

  #[test]
  fn infinite_nan_and_huge_timeouts_have_no_deadline() {
    let epoch = Instant::now();
    assert_eq!(When::after(epoch, f64::INFINITY), None);
    assert_eq!(When::after(epoch, f64::NAN), None);
    assert_eq!(When::after(epoch, MAX_TIMEOUT_MS * 2.0), None);
    assert!(When::after(epoch, MAX_TIMEOUT_MS).is_some());
  }

  #[test]
  fn zero_and_negative_timeouts_are_due_now() {
    for timeout in [0.0, -5.0] {
      let at = deadline_after(timeout).expect("finite");
      assert!(at <= Instant::now());
    }
  }
}
