//! How a sync wait ends (`src/sync_wait.rs`), compiled here against a
//! registry whose `remove` can be made to panic, as the loom models
//! compile it against loom: a panic while a timed-out wait takes itself
//! off its queue must leave the wait with its caller, to end again.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod parker {
  pub use atomics_waitasync::parker::*;
}

mod registry {
  use std::sync::atomic::{AtomicBool, Ordering};

  pub use atomics_waitasync::registry::{Enqueued, WaiterId};

  /// The real registry, but its next `remove`, once armed, panics before
  /// it takes anything off a queue.
  pub struct Registry<W> {
    inner: atomics_waitasync::registry::Registry<W>,
    pub panic_in_remove: AtomicBool,
  }

  impl<W> Registry<W> {
    pub fn new() -> Self {
      Registry {
        inner: atomics_waitasync::registry::Registry::new(),
        panic_in_remove: AtomicBool::new(false),
      }
    }

    pub fn enqueue_if(
      &self,
      key: usize,
      still_expected: impl FnOnce() -> bool,
      make: impl FnOnce(WaiterId) -> W,
    ) -> Enqueued {
      self.inner.enqueue_if(key, still_expected, make)
    }

    pub fn remove(&self, key: usize, id: WaiterId) -> Option<W> {
      if self.panic_in_remove.swap(false, Ordering::Relaxed) {
        panic!("remove panics");
      }
      self.inner.remove(key, id)
    }

    pub fn waiters_on(&self, key: usize) -> usize {
      self.inner.waiters_on(key)
    }
  }
}

#[path = "../src/sync_wait.rs"]
#[allow(dead_code, reason = "only the slices are exercised here")]
mod sync_wait;

use parker::Parker;
use registry::{Enqueued, Registry};
use sync_wait::{Slice, SyncWait};

const KEY: usize = 0x1000;

/// Review item 2: a slice whose deadline has passed took the wait out of
/// the caller's `Option` before taking its waiter off its queue. Should
/// that removal panic, the waiter stayed queued with no wait left to end
/// it: a ghost that a later notify would count and nobody would see.
#[test]
fn a_timed_out_wait_whose_removal_panics_is_still_the_callers() {
  let registry = Registry::new();
  let parker = Arc::new(Parker::new());
  parker.reset();
  let Enqueued::Queued(id) = registry.enqueue_if(KEY, || true, |_| parker.clone()) else {
    unreachable!("the check passed");
  };
  let mut wait = Some(SyncWait {
    key: KEY,
    id,
    parker: parker.clone(),
    deadline: Some(Instant::now()),
  });
  registry
    .panic_in_remove
    .store(true, std::sync::atomic::Ordering::Relaxed);
  let slice = catch_unwind(AssertUnwindSafe(|| {
    sync_wait::slice(&registry, &mut wait, Duration::ZERO)
  }));
  assert!(slice.is_err(), "the removal panicked");
  assert_eq!(registry.waiters_on(KEY), 1, "still queued");
  assert!(wait.is_some(), "still the caller's, to end");
  // Its next slice ends it, and takes it off its queue.
  assert_eq!(
    sync_wait::slice(&registry, &mut wait, Duration::ZERO),
    Some(Slice::TimedOut)
  );
  assert!(wait.is_none(), "ended");
  assert_eq!(registry.waiters_on(KEY), 0, "no ghost left");
}
