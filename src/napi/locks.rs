//! An AsyncLock's word as the addon sees it (lib/async-lock.js): the
//! contended release (`releaseLock`), the thread's owner id (`lockOwner`),
//! what `lockWatch` takes, and what a thread's teardown does with a word it
//! still holds (`crate::robust`). The registry of watched words is
//! held.rs's.

use std::sync::atomic::{AtomicI32, Ordering};

use napi::sys;

use super::ffi::{Failure, Js, NResult};
use super::memory::{self, locate, Location};
use super::shared::{core, wake_or_pass_on, wake_word, Woke};
use crate::robust;

/// `releaseLock(i32a, index, all, held)` → what the AsyncLock word held:
/// frees it and wakes its waiters in one call, so that a release can never
/// stop half-way with the word free and its waiter asleep (in JS, near the
/// stack limit, the notify after the exchange could throw, and so could the
/// steps that undo it). `all` false is unlock() of a word seen contended,
/// `held` (the caller's `owner << 1 | 1`, FAIR or not): → 0, or HANDED if
/// FAIR (`robust::release`), then notify 1 (nothing if it no longer held
/// that: forceUnlock() reset it); `all` true is forceUnlock(): → 0, then
/// notify all (`held` is not read).
///
/// A throw means nothing was done. Once the word is written this returns
/// what it held, if the notify returned; if it failed (a panic in the core)
/// and then its retry too, what it held minus [`HANDED`] when a thread of
/// the core retries it from now on (`CoreApi::notify_later`: no JavaScript
/// needed, which may be out of stack), or minus [`OWED`] when none could,
/// for lib/async-lock.js to pass the wake-up on. Both are below any i32.
pub fn release_lock(
  js: Js,
  [array, index, all, held]: [sys::napi_value; 4],
) -> NResult<sys::napi_value> {
  let index = js
    .f64(index)
    .map_err(|_| Failure::Type("index must be a number".into()))?;
  let all = js
    .bool(all)
    .map_err(|_| Failure::Type("all must be a boolean".into()))?;
  let held = if all {
    None
  } else {
    Some(
      js.i32(held)
        .map_err(|_| Failure::Type("held must be a number".into()))?,
    )
  };
  let location = locate(js, array, index)?;
  // SAFETY: `array`, a JS argument of this call, roots the buffer.
  let word = unsafe { memory::lock_word(&location) }?;
  let (was, count) = match held {
    Some(held) => (robust::release(word, held), 1),
    None => (word.swap(robust::FREE, Ordering::SeqCst), usize::MAX),
  };
  if matches!(held, Some(held) if was & !robust::FAIR != held & !robust::FAIR) {
    return js.number(f64::from(was));
  }
  // Handed over (FAIR): if nobody was woken to take it, it is free.
  let handed = held.is_some() && was & robust::FAIR != 0;
  let woke = wake_word(location.key, count, |n| {
    if handed && n == 0 && robust::unhand(word) {
      // A waiter that came meanwhile (and waits on HANDED) is told.
      let _ = core().notify(location.key, 1);
    }
  });
  js.number(match woke {
    Woke::Now => f64::from(was),
    Woke::Later => f64::from(was) - HANDED,
    Woke::Owed => f64::from(was) - OWED,
  })
}

/// `lockOwner(threadId)`'s argument: the AsyncLock owner (`crate::robust`)
/// of a thread whose worker_threads `threadId` it is, `threadId` + 1.
/// (held.rs claims it in the core, once per env.)
pub fn owner_of_thread(js: Js, thread_id: sys::napi_value) -> NResult<u32> {
  let thread_id = js
    .f64(thread_id)
    .map_err(|_| Failure::Type("threadId must be a number".into()))?;
  if !(0.0..f64::from(crate::robust::MAX_OWNER)).contains(&thread_id) || thread_id.fract() != 0.0 {
    return Err(Failure::Range(format!(
      "atomics-waitasync: threadId {thread_id} is beyond what an AsyncLock word can name"
    )));
  }
  Ok(thread_id as u32 + 1)
}

/// `lockWatch(i32a, index, lock)`'s arguments: the word `i32a[index]`, an
/// Int32Array element, that the object `lock` uses.
pub fn word_to_watch(js: Js, [array, index, lock]: [sys::napi_value; 3]) -> NResult<Location> {
  let location = locate(js, array, js.f64(index)?)?;
  if location.element != memory::Element::Int32 {
    return Err(Failure::Type("typedArray must be an Int32Array".into()));
  }
  if !js.is_object(lock)? {
    return Err(Failure::Type("lock must be an object".into()));
  }
  Ok(location)
}

/// Whether the thread whose owner is `owner` holds `word`.
pub fn held_by(word: &AtomicI32, owner: u32) -> bool {
  robust::owner_of(word.load(Ordering::SeqCst)) == owner
}

/// The thread whose owner is `owner` is ending: if it holds `word` (at
/// `key`), the word is freed as abandoned and one of its waiters, if it may
/// have any, woken (whichever thread it is in).
pub fn free_dead(key: usize, word: &AtomicI32, owner: u32) {
  let freed = robust::release_dead(word, owner) == Some(true)
    // A word handed to a waiter that may have been this thread's: free
    // again (not abandoned: its holder did not end), for whoever comes.
    || robust::unhand(word);
  if freed {
    wake_or_pass_on(key, 1);
  }
}

/// What `releaseLock` subtracts from the word's old value when its wake-up
/// went to the core's retrying thread: 2^32, so that every such result is
/// below any i32 (and above any minus [`OWED`]).
const HANDED: f64 = 4_294_967_296.0;

/// What `releaseLock` subtracts when the caller owes the wake-up: 2^33.
const OWED: f64 = 8_589_934_592.0;
