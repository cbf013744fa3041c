//! The synchronisation primitives the registry, the notifier's handshake
//! and the sync waiter's parker are built on, named in one place so that
//! the loom models (`tests/loom_*.rs`, through `tests/common/loom_sync.rs`)
//! can compile the very same `registry.rs`, `handshake.rs`, `parker.rs` and
//! `sync_wait.rs` against loom's model-checked versions instead.

pub use std::sync::atomic::{fence, AtomicU32, AtomicU64, AtomicUsize};

pub use parking_lot::Mutex;

pub use crate::futex::{Futex, Waited};

/// Number of registry buckets: a power of two, enough that threads
/// notifying different addresses rarely share a lock.
pub const BUCKET_COUNT: usize = 256;

/// Number of "someone may be waiting" counts (see `Registry::may_wait`):
/// a power of two (64 KB).
pub const MAY_WAIT_SLOTS: usize = 1 << 14;

/// Rounds a sync waiter looks at its parker before it sleeps (see
/// [`spin_round`]): two busy ones (12 pause instructions), no yields.
/// Measured on this 2-core machine under a load of ~11 (other builds
/// running): 40 rounds, the last 36 yielding, made the main `waitAsync` ⇄
/// worker `wait` round trip 1.4-2.2× native in wall clock against 0.5-0.7×
/// with 2 (and the worker ⇄ worker one 0.73-0.80× against 0.73): a
/// spinning thread takes the core from the thread it waits for, and a
/// futex wake-up gets scheduled sooner than a yielded thread. A longer
/// spin may pay on an idle machine; measure it there before raising this.
pub const SPIN_ROUNDS: u32 = 2;

/// One round of a sync waiter's spin before it sleeps: the first few
/// busy, the rest yielding the core, so that the thread that will wake it
/// (maybe on this very core: two threads on a shared 2-core machine)
/// can run. A sleep and its wake-up cost two system calls and the
/// scheduler's latency; a notify that finds its waiter still spinning
/// makes none.
pub fn spin_round(round: u32) {
  if round < 4 {
    for _ in 0..(4 << round) {
      std::hint::spin_loop();
    }
  } else {
    std::thread::yield_now();
  }
}
