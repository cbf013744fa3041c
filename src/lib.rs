//! atomics-waitasync: `Atomics.wait`, `Atomics.waitAsync` and
//! `Atomics.notify` for every Node.js release, backed by one process-wide
//! waiter registry in Rust.
//!
//! - [`core`]: the process-wide waiter state (registry, notifier, deadline
//!   epoch) and every operation on it; what the N-API layer calls.
//! - [`registry`]: address-keyed FIFO wait queues; pure Rust, no N-API.
//! - [`diag`]: who holds and who waits, process-wide, for a snapshot from
//!   any thread.
//! - [`deadlock`]: whether a wait closes a cycle of takes that can never
//!   end.
//! - [`deadline`]: timeouts as instants, and async waiters' 8-byte deadline.
//! - [`parker`]: blocking park/unpark for sync waiters, on a futex; and
//!   [`sync_wait`], how a sync wait ends (woken, timed out, abandoned).
//! - [`robust`]: an AsyncLock's word: who holds it, its contended release,
//!   and its release when its holder's thread ends.
//! - [`stake`]: what a thread holds of a Semaphore or an RwLock, or waits
//!   at of a Barrier, and what its teardown does with it.
//! - [`slab`]: dense index-addressed storage for pending promises.
//! - [`counts`]: the registry's "may be waiting" counts, zeroed memory
//!   that costs nothing until used.
//! - [`sync`]: the atomics, mutex and futex the core is built on, named in
//!   one place so that the loom models can swap in theirs.
//! - [`wake`]: the wake-up core: waking, delivering to envs' mailboxes,
//!   passing on wake-ups of dead waiters; generic over what an env is.
//! - [`timer`]: the notifier thread that owns async deadlines, and
//!   [`handshake`], how it sleeps without missing a sender.
//! - `napi`: the thin unsafe layer: typed arrays to addresses, per-env
//!   promise settling through one ThreadsafeFunction, env teardown.

pub mod core;
pub mod counts;
pub mod deadline;
pub mod deadlock;
pub mod diag;
mod futex;
pub mod handshake;
pub mod parker;
pub mod registry;
pub mod robust;
pub mod slab;
pub mod stake;
pub mod sync;
pub mod sync_wait;
pub mod timer;
pub mod wake;

#[cfg(not(test))]
mod napi;
