//! The synchronisation primitives the registry is built on, named in one
//! place so that `tests/loom_registry.rs` can compile the very same
//! `registry.rs` against loom's model-checked versions instead.

pub use std::sync::atomic::{AtomicU64, AtomicUsize};

pub use parking_lot::Mutex;

/// Number of registry buckets: a power of two, enough that threads
/// notifying different addresses rarely share a lock.
pub const BUCKET_COUNT: usize = 256;
