//! The synchronisation primitives the registry and the notifier's
//! handshake are built on, named in one place so that
//! `tests/loom_registry.rs` and `tests/loom_handshake.rs` can compile the
//! very same `registry.rs` and `handshake.rs` against loom's model-checked
//! versions instead.

pub use std::sync::atomic::{fence, AtomicU32, AtomicU64, AtomicUsize};

pub use parking_lot::Mutex;

/// Number of registry buckets: a power of two, enough that threads
/// notifying different addresses rarely share a lock.
pub const BUCKET_COUNT: usize = 256;

/// Number of "someone may be waiting" counts (see `Registry::may_wait`):
/// a power of two (64 KB).
pub const MAY_WAIT_SLOTS: usize = 1 << 14;
