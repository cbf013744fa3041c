//! A sync `wait` in progress, and how it ends: woken by the notify that
//! took its waiter off its queue, or by its deadline, or abandoned (its
//! caller will see no outcome). Pure Rust over the registry and the
//! parker, apart from the rest of the core, so that
//! `tests/loom_sync_wait.rs` model-checks this very code.
//!
//! Invariants:
//! - **One owner per outcome.** A waiter whose deadline passed, or whose
//!   wait is abandoned, takes itself off its queue; if a notify took it
//!   first, the notify owns the outcome: "ok" (or, abandoned, a wake-up
//!   for the caller to pass on).
//! - **No unpark outlives its wait.** A wait ends only once no unpark
//!   for it is outstanding (it saw it, or nobody took its waiter), so the
//!   thread's parker can be reset for its next wait (see `crate::parker`).
//! - **An "ok" reaches its caller or goes on.** From the wake-up until
//!   JS confirms that the caller has it, the key stays marked
//!   ([`WokenMark`]); a thread torn down in between passes it on.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::parker::{ParkState, Parker};
use crate::registry::{Enqueued, Registry, WaiterId};

/// A sync `wait` in progress on some thread, kept between its slices.
pub struct SyncWait {
  pub key: usize,
  pub id: WaiterId,
  /// The thread's parker, reset for this wait.
  pub parker: Arc<Parker>,
  pub deadline: Option<Instant>,
}

/// Starts a sync wait on `key`: resets the thread's `parker` (its previous
/// wait must have ended: see `crate::parker`), then queues the waiter that
/// `waiter` makes of it, if `still_expected()` holds under the bucket
/// lock; `None` for "not-equal". The reset comes first: once queued, a
/// notify may unpark it at once, and a reset after that would undo it.
/// (`Core::enqueue_sync` and `tests/loom_sync_wait.rs` both start their
/// waits here.)
pub fn enqueue<W>(
  registry: &Registry<W>,
  key: usize,
  deadline: Option<Instant>,
  parker: &Arc<Parker>,
  still_expected: impl FnOnce() -> bool,
  waiter: impl FnOnce(Arc<Parker>) -> W,
) -> Option<SyncWait> {
  parker.reset();
  let enqueued = registry.enqueue_if(key, still_expected, |_| waiter(parker.clone()));
  let Enqueued::Queued(id) = enqueued else {
    return None;
  };
  Some(SyncWait {
    key,
    id,
    parker: parker.clone(),
    deadline,
  })
}

/// How one slice of a sync wait ended ([`slice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slice {
  /// A notify woke it, on this key: "ok".
  Woken { key: usize },
  /// Its deadline passed first: "timed-out".
  TimedOut,
  /// Neither yet: the caller returns to JS and comes back for the next.
  Pending,
}

/// Blocks for at most `slice` of the sync wait in `wait` and says how it
/// stands; a wait that ended is taken out of `wait`.
pub fn slice<W>(
  registry: &Registry<W>,
  wait: &mut Option<SyncWait>,
  slice: Duration,
) -> Option<Slice> {
  let sync = wait.as_ref()?;
  // A notify that comes while it spins needs no clock read (a system call
  // where there is no vDSO: under valgrind, say).
  if sync.parker.spin(sync.deadline) {
    let key = sync.key;
    *wait = None;
    return Some(Slice::Woken { key });
  }
  let slice_end = Instant::now() + slice;
  let until = sync.deadline.map_or(slice_end, |d| d.min(slice_end));
  if sync.parker.park_until(until) == ParkState::Woken {
    let key = sync.key;
    *wait = None;
    return Some(Slice::Woken { key });
  }
  match sync.deadline {
    Some(deadline) if Instant::now() >= deadline => {
      let end = time_out(registry, sync);
      // Only now: should taking its waiter off its queue panic, the wait
      // is still the caller's, to end (`CoreApi::abandon_sync`), not a
      // waiter left queued with nobody to end it.
      *wait = None;
      Some(end)
    }
    _ => Some(Slice::Pending),
  }
}

/// Ends a sync wait whose deadline passed: "timed-out" if it takes its
/// waiter off its queue, else a notify took it first and owns the outcome
/// ("ok"): its unpark is imminent, and waited for. (It borrows the wait,
/// as [`abandon`] does.)
pub fn time_out<W>(registry: &Registry<W>, wait: &SyncWait) -> Slice {
  match abandon(registry, wait) {
    None => Slice::TimedOut,
    Some(key) => Slice::Woken { key },
  }
}

/// Ends a sync wait whose caller will see no outcome: its waiter leaves
/// its queue. The key of a wake-up it already got, if a notify took it
/// first: for the caller to pass on. Either way, no unpark for it is
/// outstanding when this returns. (It borrows the wait: the caller drops
/// it only once this has returned, so that after a panic here it can try
/// again, `CoreApi::abandon_sync`.)
pub fn abandon<W>(registry: &Registry<W>, wait: &SyncWait) -> Option<usize> {
  match registry.remove(wait.key, wait.id) {
    Some(_) => None,
    None => {
      // A notify took it off its queue and is about to unpark it (it does
      // so without waiting for anything). Wait for that unpark, so that it
      // cannot land on this thread's next wait.
      wait.parker.park();
      Some(wait.key)
    }
  }
}

/// A thread's last sync wait that ended "ok", from the wake-up until its
/// caller is known to have it. The binding marks it when a slice ends
/// woken, and asks whether its thread is stopping; JS confirms once past
/// that check, or past the engine's interrupt point where the binding
/// cannot tell or said it is (lib/atomics.js `wait`): with a plain store of 0
/// into `word`, which the binding shares with it as an external buffer,
/// or, where there is none, through [`WokenMark::confirm`]. A thread torn
/// down before that never showed the caller its "ok": its teardown takes
/// the key ([`WokenMark::take_unseen`]) and passes the wake-up on, as if
/// this waiter had never been queued.
#[derive(Default)]
pub struct WokenMark {
  key: Option<usize>,
  /// 1 while `key` is unconfirmed, 0 once JS confirmed it. Only the
  /// mark's own thread reads or writes it (JS, or this code on JS's
  /// behalf), so `Relaxed` is all it needs.
  word: Option<Arc<AtomicI32>>,
}

impl WokenMark {
  /// The word JS confirms through from now on.
  pub fn set_word(&mut self, word: Arc<AtomicI32>) {
    self.word = Some(word);
  }

  /// A sync wait ended "ok" on `key`: marked unconfirmed until JS says
  /// so. Then whether its caller may see that "ok" now: not if
  /// `can_run_js()` says the thread is stopping (a worker whose
  /// `terminate()` was called), whose teardown will find the mark. (The
  /// order of the two does not matter: the teardown runs on this thread,
  /// after JS, so it cannot come between them.)
  pub fn woken(&mut self, key: usize, can_run_js: impl FnOnce() -> bool) -> bool {
    self.key = Some(key);
    if let Some(word) = &self.word {
      word.store(1, Ordering::Relaxed);
    }
    can_run_js()
  }

  /// The caller got the last "ok" (for a JS with no word to write).
  pub fn confirm(&mut self) {
    self.key = None;
  }

  /// The key of an "ok" its caller never got, if there is one, taken:
  /// for the teardown (or an abandoned wait loop) to pass on.
  pub fn take_unseen(&mut self) -> Option<usize> {
    let confirmed = self
      .word
      .as_ref()
      .is_some_and(|word| word.load(Ordering::Relaxed) == 0);
    self.key.take().filter(|_| !confirmed)
  }
}
