//! The synchronisation primitives the registry, the notifier's handshake
//! and the sync waiter's parker are built on, named in one place so that
//! the loom models (`tests/loom_*.rs`, through `tests/common/loom_sync.rs`)
//! can compile the very same `registry.rs`, `handshake.rs`, `parker.rs` and
//! `sync_wait.rs` against loom's model-checked versions instead.

pub use std::sync::atomic::{fence, AtomicI32, AtomicU32, AtomicU64, AtomicUsize};

pub use parking_lot::Mutex;

pub use crate::futex::{Futex, Waited};

/// Number of registry buckets: a power of two, enough that threads
/// notifying different addresses rarely share a lock.
pub const BUCKET_COUNT: usize = 256;

/// Number of "someone may be waiting" counts (see `Registry::may_wait`):
/// a power of two (64 KB).
pub const MAY_WAIT_SLOTS: usize = 1 << 14;

/// The most a sync waiter looks at its parker before it sleeps (one
/// [`spin_round`] between looks, a pause instruction: ~12 ns here, so
/// ~20 µs in all). A worker ⇄ worker round trip whose partner answers
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

/// How often a round of a sync waiter's spin yields its core instead of
/// pausing (see [`spin_round`]).
pub const SPIN_YIELD_EVERY: u32 = 16;

/// One round of a sync waiter's spin before it sleeps, between two looks
/// at its parker: a pause (the core stays with this thread; the pause
/// tells the CPU this is a spin), and every [`SPIN_YIELD_EVERY`]-th round
/// a yield of the core to any other thread that is ready to run (it
/// returns at once where none is). A sleep and its wake-up cost two system
/// calls and the scheduler's latency; a notify that finds its waiter still
/// spinning makes none. The yield is for more threads than cores: a thread
/// that spins then holds a core the thread it waits for may need (the
/// notifier, or the last parties of a barrier): `node
/// benchmark/lock-family.js --case barrier-2,barrier-4` on this 2-core VM,
/// 4 parties, 22,015 phases/s without the yield and 188,323 with it (2
/// parties: 827,711 and 809,949; the lock, semaphore, rwlock and
/// condition rows and `run.js --wall --case worker-ping-pong` as before).
pub fn spin_round(round: u32) {
  if round % SPIN_YIELD_EVERY == SPIN_YIELD_EVERY - 1 {
    std::thread::yield_now();
  } else {
    std::hint::spin_loop();
  }
}
