//! The word of an `AsyncLock` (lib/owned-word.js), and the two steps of
//! its protocol that run here rather than in JavaScript: a contended
//! release, and the release of the words a thread still holds when it
//! ends (its env's teardown).
//!
//! The word, one Int32 of a SharedArrayBuffer:
//!
//! ```text
//!   value            name        meaning
//!   ---------------  ----------  ------------------------------------------------
//!   0                FREE        free
//!   1                ABANDONED   free; its last holder ended while holding it, and
//!                                threads may be queued (the next taker learns it)
//!   owner << 1       held        held by `owner`, nobody queued
//!   owner << 1 | 1   contended   held by `owner`, threads may be queued (WAITERS)
//!   … | 1 << 31      fair        as above, and a waiter has waited long (FAIR):
//!                                the next release hands the lock over
//!   1 << 31 | 1      HANDED      free, but only for the waiter the release woke
//!                                (or one that has seen it HANDED for a grace period)
//! ```
//!
//! `owner` (1 to [`MAX_OWNER`]) names a thread: its worker_threads
//! `threadId` + 1, which the process never gives another thread, the same
//! through every copy of the package (claimed in the core, which refuses a
//! second system thread with the same one). JavaScript takes and releases the word itself: taking is a
//! compareExchange from FREE to `owner << 1`, or, from ABANDONED or after
//! having waited, to `owner << 1 | 1` (there may be other waiters, which
//! the next release must wake); a waiter sets WAITERS and waits on the
//! value it set; an uncontended release is a compareExchange back to FREE.
//! No native call on that path: so the word itself says who holds it, and
//! no list is needed for a thread to find what it holds when it ends.
//!
//! `tests/loom_robust.rs` model-checks these steps against the JavaScript
//! ones (mirrored there): mutual exclusion, no lost wake-up, and that the
//! next holder of an abandoned word, and only it, learns so.

use std::sync::atomic::Ordering::SeqCst;

use crate::sync::AtomicI32;

/// A free word.
pub const FREE: i32 = 0;
/// A free word whose holder ended while holding it.
pub const ABANDONED: i32 = 1;
/// The bit of a held word that says threads may be queued on it.
pub const WAITERS: i32 = 1;
/// The largest owner a word can name (`owner << 1 | 1` is an i32).
pub const MAX_OWNER: u32 = (1 << 30) - 1;
/// The bit of a held word that says a waiter has waited long: the next
/// release leaves [`HANDED`], not FREE, so that the woken waiter gets the
/// lock rather than a thread that never waited (parking_lot's fair unlock).
pub const FAIR: i32 = i32::MIN;
/// A word released to the waiter its release woke.
pub const HANDED: i32 = FAIR | 1;

/// The word of a lock held by `owner` with nobody queued.
pub fn held_by(owner: u32) -> i32 {
  debug_assert!((1..=MAX_OWNER).contains(&owner));
  (owner << 1) as i32
}

/// Who holds a word: its owner, or 0 when it is free (FREE or ABANDONED).
pub fn owner_of(word: i32) -> u32 {
  (word as u32 >> 1) & MAX_OWNER
}

/// A contended unlock: frees the word if it still holds `held` (the
/// caller's `owner << 1 | WAITERS`, with FAIR or not, which a waiter may
/// add meanwhile) — to [`HANDED`] if FAIR, to FREE if not — and returns
/// what it held. Anything else there
/// (forceUnlock() freed it meanwhile) is left alone. The caller then wakes
/// one waiter.
pub fn release(word: &AtomicI32, held: i32) -> i32 {
  let mut held = held;
  loop {
    let to = if held & FAIR != 0 { HANDED } else { FREE };
    match word.compare_exchange(held, to, SeqCst, SeqCst) {
      Ok(old) => return old,
      // A waiter set FAIR meanwhile: still the caller's hold.
      Err(now) if now & !FAIR == held & !FAIR => held = now,
      Err(now) => return now,
    }
  }
}

/// A word [`release`] left HANDED whose wake-up found nobody to hand it
/// to (its waiter timed out or left), or whose taker may have been a thread
/// that ended: free for anyone again. Whether it was HANDED (then the
/// caller wakes one waiter, if it is not the release itself).
pub fn unhand(word: &AtomicI32) -> bool {
  word.compare_exchange(HANDED, FREE, SeqCst, SeqCst).is_ok()
}

/// `owner` has ended (its env's teardown, on its own thread, once its
/// JavaScript has stopped): if the word is held by it, frees it as
/// ABANDONED. Returns `None` if `owner` did not hold it; else whether
/// threads may be queued on it, of whom the caller must then wake one.
/// The word may change under it (a waiter setting WAITERS): it retries
/// until it has either freed the word or seen another owner there.
pub fn release_dead(word: &AtomicI32, owner: u32) -> Option<bool> {
  let mut seen = word.load(SeqCst);
  loop {
    if owner_of(seen) != owner {
      return None;
    }
    match word.compare_exchange(seen, ABANDONED, SeqCst, SeqCst) {
      Ok(_) => return Some(seen & WAITERS != 0),
      Err(now) => seen = now,
    }
  }
}
