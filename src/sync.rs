//! The synchronisation primitives the registry, the notifier's handshake,
//! the sync waiter's parker, the wake-up core and the robust primitives'
//! words are built on, named in one place so that the loom models
//! (`tests/loom_*.rs`, through `tests/common/loom_sync.rs` or a `mod sync`
//! of their own) can compile the very same `registry.rs`, `handshake.rs`,
//! `parker.rs`, `sync_wait.rs`, `wake.rs`, `robust.rs` and `stake.rs`
//! against loom's model-checked versions instead.

pub use std::sync::atomic::{fence, AtomicI32, AtomicU64, AtomicU8};

pub use crate::counts::Counts;

pub use parking_lot::Mutex;

pub use crate::futex::{Futex, Waited};

/// Number of registry buckets: a power of two, enough that threads
/// notifying addresses in different cache lines rarely share a lock (the
/// elements of one line always do: `registry::bucket_index`).
pub const BUCKET_COUNT: usize = 256;

/// Number of "someone may be waiting" counts (see `Registry::may_wait`):
/// a power of two, one byte each, 8 MB of address space that takes memory
/// only where counts are used (`crate::counts`). Neighbouring 4-byte
/// elements get neighbouring counts, so the elements of a buffer of up to
/// 2^23 − 127 of them (32 MB; the high bits folded in at a 32 MB boundary
/// can meet one at the other end) each have a count of their own: a
/// notify on one that nobody waits on skips the native call however many
/// wait on the others. An element of another buffer shares a count with
/// one of those with a chance of (pending elements) / 2^23, ~12% with 10^6
/// of them pending. (With 2^14 counts, 10^5 pending elements took every
/// count, and every notify then took the native call.)
///
/// The price: the counts of 64 neighbouring elements share a cache line,
/// so threads taking locks that a program padded to a cache line each
/// (16 Int32s apart) share a count line four at a time, read-modified-
/// written on their contended paths (enqueue, dequeue, a notify's check).
pub const MAY_WAIT_SLOTS: usize = 1 << 23;

/// Where a "may be waiting" count stops and stays (`registry::STUCK`).
pub const MAY_WAIT_STUCK: u8 = u8::MAX;

/// `n` counts of 0 for `Registry::may_wait`.
pub fn zeroed_counts(n: usize) -> Counts {
  Counts::zeroed(n)
}

/// The most a sync waiter looks at its parker before it sleeps (one
/// [`spin_round`] between looks, a pause instruction: ~12 ns here, and
/// every [`SPIN_YIELD_EVERY`]-th a [`yield_core`] instead; the spin ends
/// after [`SPIN_TIME`], ~20 µs, give or take a yield that ran long). A worker ⇄ worker round trip whose partner answers
/// within it costs no sleep and no wake-up system call on either side:
/// `node benchmark/run.js --instructions --wall --case worker-ping-pong`
/// on this 2-core VM, 2.6-3.0 µs per round trip against native's 86 µs
/// while nothing else ran (native's wake-ups then take ~40 µs each), and
/// 0.8-1.1× native's 6 µs while another process kept a core busy. A spin
/// that finds nothing is wasted core time, and on a loaded machine it takes
/// the core from the very thread it waits for (a fixed spin of this length
/// measured 4.1-4.6× native there): so the spin adapts
/// (`Parker::spin`): a waiter whose spin found nothing halves its next
/// one, down to [`SPIN_MIN`], and tries the whole of it again only every
/// [`SPIN_PROBE_EVERY`] waits, or once a spin found its wake-up.
pub const SPIN_MAX: u32 = 1600;

/// The longest a sync waiter spins (see [`SPIN_MAX`]; a pause takes ~12 ns
/// here, ~40 ns on other x86 cores): read on the clock every
/// [`SPIN_CLOCK_EVERY`] rounds.
pub const SPIN_TIME: std::time::Duration = std::time::Duration::from_micros(20);

/// How many spin rounds between two looks at the clock (see [`SPIN_TIME`]).
pub const SPIN_CLOCK_EVERY: u32 = 64;

/// The least a sync waiter spins (see [`SPIN_MAX`]): a few looks, for a
/// notify already on its way.
pub const SPIN_MIN: u32 = 12;

/// How often a waiter whose spins found nothing spins the whole of
/// [`SPIN_MAX`] again, in waits (see [`SPIN_MAX`]): costs a waiter that is
/// never woken during its spin ~20 µs of core time per this many waits.
pub const SPIN_PROBE_EVERY: u32 = 32;

/// How often a sync waiter's spin yields its core, in rounds (see
/// [`yield_core`]).
pub const SPIN_YIELD_EVERY: u32 = 16;

/// A yield that took longer than this gave the core to a thread that kept
/// it (a busy one): the waiter stops yielding for a while (`Parker::spin`).
/// Longer than a barrier party's own run between two waits, shorter than a
/// busy thread's time slice (see [`yield_core`]).
pub const YIELD_SLOW: std::time::Duration = std::time::Duration::from_micros(500);

/// After a slow yield, how many spins (one per slice of a wait, 10 ms)
/// yield nothing: this many after the first, twice as many after each slow
/// yield that follows, up to [`YIELD_OFF_MAX`] (it never comes back down).
pub const YIELD_OFF_MIN: u32 = 32;

/// See [`YIELD_OFF_MIN`].
pub const YIELD_OFF_MAX: u32 = 1 << 16;

/// One round of a sync waiter's spin before it sleeps, between two looks
/// at its parker: a pause (the core stays with this thread; the pause
/// tells the CPU this is a spin). A sleep and its wake-up cost two system
/// calls and the scheduler's latency; a notify that finds its waiter still
/// spinning makes none.
pub fn spin_round() {
  std::hint::spin_loop();
}

/// Every [`SPIN_YIELD_EVERY`]-th round of a spin instead of a pause: the
/// core to any other thread that is ready to run (it returns at once where
/// none is). With more threads than cores a spinning waiter would hold a
/// core the thread it waits for needs (the notifier, the last parties of a
/// barrier). A yield to a thread that keeps the core (a busy loop) costs
/// the waiter that thread's time slice, milliseconds, and the waiter's
/// wake-up comes through no sooner: the spin then stops yielding for a
/// while ([`YIELD_SLOW`]). On this 2-core VM, `node benchmark/lock-family.js
/// --case barrier-4` (4 parties): 20,029 phases/s without yields, 160,341
/// yielding always, 54,026-76,438 with YIELD_SLOW 500 µs (and 21,508 with
/// 50 µs: the parties' own yields then count as slow); `node benchmark/run.js
/// --instructions --wall --case ping-pong` with another process keeping a
/// core busy: 4.7-5.0 µs per round trip without yields, 16.2 yielding
/// always, 5.5-6.5 with YIELD_SLOW 500 µs (worker-ping-pong there: 5.1-5.6,
/// 5.4 and 4.3-4.8 µs; quiet, both as before).
pub fn yield_core() {
  std::thread::yield_now();
}
