//! What a thread holds of a primitive whose word counts its holders rather
//! than naming one (a `Semaphore`'s permits, an `RwLock`'s readers and
//! writer), or waits at (a `Barrier`'s generation), and what its env's
//! teardown (`napi::held`, `napi::stakes`) does with it when the thread ends: gives the
//! share back, or breaks the generation.
//!
//! The holder's share is not in the shared word: JavaScript keeps it, per
//! instance, in an Int32Array of the thread's own (the *stake*; for a
//! semaphore, the permits it holds and how many of its waits count in
//! `waiters`), written with a plain store right after the atomic step that
//! changed what it counts, with no call between the two: a worker is
//! terminated only at a call or a loop's back edge, so the stake and the
//! word agree whenever the thread can end. The env holds the stake's memory
//! and the word's buffer by strong references and, at teardown, acts on
//! what each stake still says.
//!
//! A semaphore's two Int32s that the teardown reads (lib/semaphore.js):
//!
//! ```text
//!   word      what it holds
//!   --------  ---------------------------------------------------------
//!   permits   the permits free now (never below 0): taken by a
//!             compare-exchange from p to p - n when p >= n; given back
//!             by an add; waiters wait on the value they last saw
//!   waiters   how many threads are between announcing a wait and
//!             leaving it: a release that sees it above 0 wakes them all
//! ```
//!
//! No wake-up is lost: a waiter adds itself to `waiters` before it reads
//! `permits` and waits on the value it read; a release adds to `permits`
//! before it reads `waiters`. Either the release sees the waiter (and
//! wakes it), or the waiter sees the permits (and does not sleep: its wait
//! finds the value moved on). `tests/loom_semaphore.rs` checks this.

use std::sync::atomic::Ordering::SeqCst;

use crate::sync::{fence, AtomicI32};

/// A Barrier's state word (lib/barrier.js): generation << 17 | BROKEN |
/// arrived.
pub const BARRIER_BROKEN: i32 = 1 << 16;
/// Where a Barrier state's generation starts.
pub const BARRIER_GENERATION_SHIFT: u32 = 17;

/// An RwLock's state word (lib/rwlock.js): the write lock is held.
pub const RWLOCK_WRITER: i32 = 1 << 30;
/// An RwLock's state word: the last writer's thread ended holding the
/// write lock, and no writer has released it since (the sign bit).
pub const RWLOCK_ABANDONED: i32 = i32::MIN;

/// A thread that ends while it waits at generation `generation` of the
/// barrier whose `state` and `ended` words these are: breaks that
/// generation if it is still the current one and not complete (BROKEN,
/// then its bit in `ended`). Returns whether it did: the caller then wakes
/// every waiter.
pub fn break_dead_party(state: &AtomicI32, ended: &AtomicI32, generation: u32) -> bool {
  let mut seen = state.load(SeqCst);
  loop {
    if (seen as u32) >> BARRIER_GENERATION_SHIFT != generation || seen & BARRIER_BROKEN != 0 {
      return false;
    }
    match state.compare_exchange(seen, seen | BARRIER_BROKEN, SeqCst, SeqCst) {
      Ok(_) => break,
      Err(now) => seen = now,
    }
  }
  ended.fetch_or(1 << (generation & 31), SeqCst);
  true
}

/// A thread that ends holding `held` permits of the semaphore whose
/// `permits` and `waiters` words these are, with `announced` of its waits
/// counted in `waiters` (waits it never left: it was stopped in them):
/// takes those out of `waiters` and gives the permits back. (A
/// SignalSemaphore's thread holds none: what it took was consumed; only
/// its waits are taken out.) Returns whether
/// threads may be waiting: the caller then wakes them all, also when the
/// thread held nothing, for it may have ended between a release's add and
/// its notify (a call, where a worker can be stopped), or with that
/// wake-up owed (the release ran out of stack). The permits given back
/// stop at `i32::MAX`.
pub fn release_dead_permits(
  permits: &AtomicI32,
  waiters: &AtomicI32,
  held: i32,
  announced: i32,
) -> bool {
  if announced > 0 {
    waiters.fetch_sub(announced, SeqCst);
  }
  if held > 0 {
    // Saturating: a signalling semaphore (lib/async-mutex.js, whose
    // setValue sets any value) may stand at i32::MAX while this thread
    // holds permits it took before. What is past the most the word holds
    // is lost rather than wrapped to a negative value.
    let _ = permits.fetch_update(SeqCst, SeqCst, |seen| Some(seen.saturating_add(held)));
  }
  // The add and the load are the two halves of a store-buffering pair
  // with a waiter's (add to `waiters`, load `permits`): SeqCst makes it
  // safe; the fence says so to loom, which models SeqCst accesses as
  // AcqRel (and costs nothing here, once per teardown).
  fence(SeqCst);
  waiters.load(SeqCst) > 0
}

/// A thread that ends with `share` of the state of the RwLock whose `state`
/// and `waiters` words these are (its reads, WRITER if it wrote, with
/// ABANDONED if it took the write lock marked so, one waiting-writer count
/// per write it waited for: lib/rwlock.js), and `announced` of its waits
/// counted in `waiters`: takes those out of `waiters` and its share out of
/// the state, marking the state [`RWLOCK_ABANDONED`] in the same step if it
/// held the write lock (what the lock guards may be half-written). Returns
/// whether threads may be waiting: the caller then wakes them all,
/// whatever the thread held (as [`release_dead_permits`]: a release's
/// change made, its notify not).
pub fn release_dead_share(
  state: &AtomicI32,
  waiters: &AtomicI32,
  share: i32,
  announced: i32,
) -> bool {
  if announced > 0 {
    waiters.fetch_sub(announced, SeqCst);
  }
  if share & RWLOCK_WRITER != 0 {
    // One step, so that no writer takes the lock between the release and
    // the mark (it would not be told).
    let mut seen = state.load(SeqCst);
    loop {
      let now = seen.wrapping_sub(share) | RWLOCK_ABANDONED;
      match state.compare_exchange(seen, now, SeqCst, SeqCst) {
        Ok(_) => break,
        Err(was) => seen = was,
      }
    }
  } else if share != 0 {
    state.fetch_sub(share, SeqCst);
  }
  // A store-buffering pair with a waiter's, as in release_dead_permits.
  fence(SeqCst);
  waiters.load(SeqCst) > 0
}
