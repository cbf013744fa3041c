//! AsyncLock's calls into the addon (lib/async-lock.js): the contended
//! release, the thread's owner id, and the words its teardown must free
//! if the thread ends holding them (`crate::robust`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::rc::Rc;

use napi::sys;

use super::core;
use super::env;
use super::ffi::{Failure, Js, NResult};
use super::memory::{self, locate};
use crate::registry::BuildAddressHasher;
use crate::robust;

/// The AsyncLock words an env's instances use, for its teardown: shared
/// between the env's state and the finalizer data of each instance (on the
/// env's thread only), so that a finalizer that runs after the teardown,
/// as N-API runs the last ones when it frees the env, finds it closed
/// rather than the env's instance data, which is gone by then.
#[derive(Default)]
pub struct Watched {
  /// This env's AsyncLock owner (`crate::robust`), given by the core on
  /// the first `lockOwner`; 0 before.
  owner: u32,
  /// Watched words by address: their buffer's base address and how many
  /// live instances watch them.
  words: HashMap<usize, (usize, usize), BuildAddressHasher>,
  /// One strong reference per buffer of a watched word, by base address,
  /// with how many instances hold it: so that the teardown never writes
  /// to memory that may have been freed.
  buffers: HashMap<usize, (sys::napi_ref, usize), BuildAddressHasher>,
  /// The teardown has run: nothing is watched any more.
  closed: bool,
}

/// An env's [`Watched`].
pub type Watch = Rc<RefCell<Watched>>;

/// What a watched instance's finalizer gets: its env's [`Watch`] and its
/// word.
struct Unwatch {
  watch: Watch,
  key: usize,
}

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
    None => (
      word.swap(robust::FREE, std::sync::atomic::Ordering::SeqCst),
      usize::MAX,
    ),
  };
  if matches!(held, Some(held) if was & !robust::FAIR != held & !robust::FAIR) {
    return js.number(f64::from(was));
  }
  // Handed over (FAIR): if nobody was woken to take it, it is free.
  let handed = held.is_some() && was & robust::FAIR != 0;
  let woke = wake_lock_waiter(location.key, count, |n| {
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

/// How the wake-up of a freed AsyncLock word went ([`wake_lock_waiter`]).
pub enum Woke {
  /// The notify returned.
  Now,
  /// It failed twice; a thread of the core retries it.
  Later,
  /// It failed twice, and no thread could retry it: the caller owes it.
  Owed,
}

/// Wakes `count` waiters of the AsyncLock word at `key`, which the caller
/// has just freed. (A panic in the core comes back as Err: nothing here
/// unwinds past the caller's write. The retry is for one that came before
/// the notify did anything, as an injected one does. One that interrupted
/// a notify part-way may make the retry wake one more waiter than asked (a
/// spurious wake-up, which a lock's waiter takes for one), and loses any
/// async waiter the first try had already taken off its queue: see
/// `wake::wake`.)
pub fn wake_lock_waiter(key: usize, count: usize, woke: impl FnOnce(usize)) -> Woke {
  let core = core();
  match core.notify(key, count).or_else(|_| core.notify(key, count)) {
    Ok(n) => {
      woke(n);
      Woke::Now
    }
    Err(_) if core.notify_later(key, count) == Ok(true) => Woke::Later,
    Err(_) => Woke::Owed,
  }
}

/// `lockOwner(threadId)` → this env's AsyncLock owner (`crate::robust`):
/// the thread's worker_threads `threadId` + 1, claimed in the core on the
/// first call (see `CoreApi::claim_owner`), the same number after.
pub fn lock_owner(js: Js, [thread_id]: [sys::napi_value; 1]) -> NResult<sys::napi_value> {
  let thread_id = js
    .f64(thread_id)
    .map_err(|_| Failure::Type("threadId must be a number".into()))?;
  if !(0.0..f64::from(crate::robust::MAX_OWNER)).contains(&thread_id) || thread_id.fract() != 0.0 {
    return Err(Failure::Range(format!(
      "atomics-waitasync: threadId {thread_id} is beyond what an AsyncLock word can name"
    )));
  }
  let owner = thread_id as u32 + 1;
  let watch = env::with_state(js, |state| Ok(state.locks.clone()))?;
  let mut watched = watch.borrow_mut();
  if watched.owner == 0 {
    if !core().claim_owner(owner)? {
      return Err(Failure::Error(format!(
        "atomics-waitasync: another thread has the threadId {thread_id}: AsyncLock could not tell their locks apart"
      )));
    }
    watched.owner = owner;
  }
  js.number(f64::from(watched.owner))
}

/// `lockWatch(i32a, index, lock)`: the AsyncLock `lock` of this env uses
/// the word `i32a[index]`: should the env end while it holds it, its
/// teardown frees it ([`release_held`]). Holds the word's buffer until
/// `lock` is collected, so that the teardown never writes to freed memory.
pub fn lock_watch(js: Js, [array, index, lock]: [sys::napi_value; 3]) -> NResult<sys::napi_value> {
  let location = locate(js, array, js.f64(index)?)?;
  if location.element != memory::Element::Int32 {
    return Err(Failure::Type("typedArray must be an Int32Array".into()));
  }
  if !js.is_object(lock)? {
    return Err(Failure::Type("lock must be an object".into()));
  }
  let (key, base) = (location.key, location.buffer_base);
  let watch = env::with_state(js, |state| Ok(state.locks.clone()))?;
  {
    let mut watched = watch.borrow_mut();
    match watched.buffers.get_mut(&base) {
      Some((_, holders)) => *holders += 1,
      None => {
        let buffer = location.buffer.ok_or(Failure::Pending)?;
        let reference = js.create_reference(buffer)?;
        watched.buffers.insert(base, (reference, 1));
      }
    }
    watched.words.entry(key).or_insert((base, 0)).1 += 1;
  }
  let unwatch = Box::into_raw(Box::new(Unwatch { watch, key }));
  if js
    .add_finalizer(lock, unwatch.cast(), lock_unwatched)
    .is_err()
  {
    // The word stays watched, and its buffer held, for as long as the env
    // lives: robust still, at the cost of that memory.
    // SAFETY: from Box::into_raw above; N-API did not take it.
    drop(unsafe { Box::from_raw(unwatch) });
  }
  js.undefined()
}

/// The finalizer of a watched AsyncLock (`lockWatch`): one instance fewer
/// watches its word and holds its buffer. Nothing more once the env's
/// teardown has run (it released everything).
///
/// # Safety
/// Called by N-API once, on the env's thread, with the `Unwatch` that
/// `lockWatch` passed.
unsafe extern "C" fn lock_unwatched(env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
  let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    // SAFETY: from Box::into_raw in lock_watch, finalized once.
    let unwatch = unsafe { Box::from_raw(data.cast::<Unwatch>()) };
    let Ok(mut watched) = unwatch.watch.try_borrow_mut() else {
      return; // (not reached: nothing borrows it across a collection)
    };
    if watched.closed {
      return;
    }
    let Some(&(_, watchers)) = watched.words.get(&unwatch.key) else {
      return;
    };
    let held_here = watchers == 1 && watched.owner != 0 && {
      // SAFETY: the word's buffer is held by a strong reference of
      // `buffers` (released below at the earliest: this instance counts).
      let word = unsafe { memory::watched_word(unwatch.key) };
      robust::owner_of(word.load(std::sync::atomic::Ordering::SeqCst)) == watched.owner
    };
    if held_here {
      // The last instance of this env over the word, collected while this
      // env holds the word (it was dropped without unlocking): no instance
      // of this env can unlock it any more, so it stays watched, and its
      // buffer held, for the teardown to free.
      return;
    }
    let Some(word) = watched.words.get_mut(&unwatch.key) else {
      return;
    };
    word.1 -= 1;
    let base = word.0;
    if word.1 == 0 {
      watched.words.remove(&unwatch.key);
    }
    if let Some(buffer) = watched.buffers.get_mut(&base) {
      buffer.1 -= 1;
      if buffer.1 == 0 {
        let reference = buffer.0;
        watched.buffers.remove(&base);
        // SAFETY: N-API runs finalizers on the env's thread with a live
        // env, before the teardown (not `closed`).
        unsafe { Js::new(env) }.delete_reference(reference);
      }
    }
  }));
  if let Err(payload) = outcome {
    std::mem::forget(payload); // its Drop could panic, outside the catch
  }
}

/// The env is ending (its teardown, on its own thread, JavaScript stopped):
/// each watched word its owner still holds is freed as abandoned, and one
/// of its waiters, if it may have any, is woken (whichever thread it is
/// in); then the buffers are let go, and later finalizers do nothing.
pub fn release_held(js: Js, watch: &Watch) {
  // (Never borrowed here: the teardown runs when no call from JS is under
  // way, and finalizers do not run inside it. Should it be, this does
  // nothing rather than panic and skip the rest of the teardown.)
  let Ok(mut watched) = watch.try_borrow_mut() else {
    return;
  };
  watched.closed = true;
  if watched.owner != 0 {
    for &key in watched.words.keys() {
      // SAFETY: every watched word's buffer is held by a strong reference
      // of `buffers`, deleted only below.
      let word = unsafe { memory::watched_word(key) };
      let freed = robust::release_dead(word, watched.owner) == Some(true)
        // A word handed to a waiter that may have been this thread's: free
        // again (not abandoned: its holder did not end), for whoever comes.
        || robust::unhand(word);
      if freed && matches!(wake_lock_waiter(key, 1, |_| {}), Woke::Owed) {
        super::pass_on([key]);
      }
    }
    let _ = core().forget_owner(watched.owner);
  }
  watched.words.clear();
  for (_, (reference, _)) in watched.buffers.drain() {
    js.delete_reference(reference);
  }
}

/// What `releaseLock` subtracts from the word's old value when its wake-up
/// went to the core's retrying thread: 2^32, so that every such result is
/// below any i32 (and above any minus [`OWED`]).
const HANDED: f64 = 4_294_967_296.0;

/// What `releaseLock` subtracts when the caller owes the wake-up: 2^33.
const OWED: f64 = 8_589_934_592.0;
