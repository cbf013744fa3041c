//! The stakes of an env's primitive instances (`crate::stake`): what each
//! holds of a primitive whose word counts its holders (a Semaphore's
//! permits, an RwLock's readers and writer), or owes its waiters (a Latch's
//! wake-up at zero, a Condition's notify), given back or delivered by the
//! env's teardown if the thread ends with it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::rc::Rc;

use napi::sys;

use super::ffi::{Failure, Js, NResult};
use super::locks::{wake_lock_waiter, Woke};
use super::memory::{self, locate};
use super::{env, pass_on};
use crate::registry::BuildAddressHasher;
use crate::stake;

/// What a stake is a share of.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
  /// A Semaphore: the word is its `permits`, the next Int32 its `waiters`.
  Semaphore = 1,
  /// A wake-up owed to every waiter of the word: the stake's first Int32
  /// says that a Latch's count-down that reached zero, or a Condition's
  /// notify, may not have woken the waiters yet.
  Owed = 2,
  /// A Barrier: the word is its state, the next Int32 its `ended` bits; the
  /// stake's first Int32 is the generation + 1 the instance waits at, its
  /// second 1 while a wake-up of every waiter is owed.
  Barrier = 3,
  /// An RwLock: the word is its state, the next Int32 its `waiters`; the
  /// stake's first Int32 is the instance's share of the state, its second
  /// its waits counted in `waiters`.
  RwLock = 4,
}

impl Kind {
  /// How many Int32s the stake has, at least: the two the teardown reads,
  /// and the one that says a wake-up is owed.
  fn ints(self) -> usize {
    (self.owed_at() + 1).max(2)
  }

  /// Which of the stake's Int32s is 1 while a wake-up of every waiter is
  /// owed (a release, count-down, notify, last arrival, break or reset
  /// whose change was made and whose notify may not have run).
  fn owed_at(self) -> usize {
    match self {
      Kind::Owed => 0,
      Kind::Barrier => 1,
      Kind::RwLock => 2,
      Kind::Semaphore => 3,
    }
  }
}

/// One watched instance's stake. It holds the buffers of the word and of
/// the stake for as long as it lives (they are let go with it: [`Stake::let_go`]),
/// so that its reads never touch freed memory.
struct Stake {
  kind: Kind,
  /// The address of the primitive's word (its registry key).
  word: usize,
  /// The address of the Int32 that holds the instance's stake.
  cell: usize,
  /// Strong references to the SharedArrayBuffers of the word and of the
  /// stake, so that neither is freed while the stake is watched.
  buffers: [sys::napi_ref; 2],
}

impl Stake {
  /// The stake's Int32 at `at` (below `kind.ints()`).
  fn int(&self, at: usize) -> i32 {
    debug_assert!(at < self.kind.ints());
    // SAFETY: `cell` is element 0 of an Int32Array of `kind.ints()` or more
    // (checked at watch), in the buffer `buffers[1]` holds while `self`
    // lives.
    unsafe { memory::stake_int(self.cell, at) }
  }

  /// Whether the instance still holds something of the primitive, or
  /// waits in it: for the teardown to give back.
  fn holds(&self) -> bool {
    match self.kind {
      Kind::Semaphore | Kind::RwLock => self.int(0) != 0 || self.int(1) != 0,
      Kind::Barrier => self.int(0) != 0,
      Kind::Owed => false,
    }
  }

  /// Whether a wake-up of every waiter is owed.
  fn owes(&self) -> bool {
    self.int(self.kind.owed_at()) != 0
  }

  /// Lets go of both buffers, and of the stake.
  fn let_go(self, js: Js) {
    for reference in self.buffers {
      js.delete_reference(reference);
    }
  }
}

/// Wakes every waiter of the word at `word`, passing the wake-up on if the
/// core could not deliver it.
fn wake_all(word: usize) {
  if matches!(wake_lock_waiter(word, usize::MAX, |_| {}), Woke::Owed) {
    pass_on([word]);
  }
}

/// The stakes of an env's instances, by the address of their stake Int32:
/// shared between the env's state and the finalizer data of each instance
/// (on the env's thread only), so that a finalizer that runs after the
/// teardown finds it closed.
#[derive(Default)]
pub struct Stakes {
  stakes: HashMap<usize, Stake, BuildAddressHasher>,
  /// The teardown has run: nothing is watched any more.
  closed: bool,
}

/// An env's [`Stakes`].
pub type Watch = Rc<RefCell<Stakes>>;

/// What a watched instance's finalizer gets.
struct Unwatch {
  watch: Watch,
  cell: usize,
}

/// `stakeWatch(i32a, index, kind, stake, instance)`: `instance`, of this
/// env, keeps its stake (an Int32Array over a SharedArrayBuffer of its
/// own, of [`Kind::ints`] or more) of the primitive whose word is
/// `i32a[index]` (but for kind 2, also `i32a[index + 1]`): should the env
/// end while the stake holds something, its teardown gives it back
/// ([`release_stakes`]). Holds both buffers until `instance` is collected
/// holding nothing, so that the teardown never touches freed memory; a
/// wake-up the stake owes then is delivered ([`stake_unwatched`]).
pub fn stake_watch(
  js: Js,
  [array, index, kind, cell_array, instance]: [sys::napi_value; 5],
) -> NResult<sys::napi_value> {
  let index = js
    .f64(index)
    .map_err(|_| Failure::Type("index must be a number".into()))?;
  let kind = match js.i32(kind) {
    Ok(1) => Kind::Semaphore,
    Ok(2) => Kind::Owed,
    Ok(3) => Kind::Barrier,
    Ok(4) => Kind::RwLock,
    _ => {
      return Err(Failure::Type(
        "kind must be 1 (a Semaphore), 2 (a wake-up owed), 3 (a Barrier) or 4 (an RwLock)".into(),
      ))
    }
  };
  let word = locate(js, array, index)?;
  if kind != Kind::Owed {
    // The second word must be in the array too.
    let next = locate(js, array, index + 1.0)
      .map_err(|_| Failure::Range("index must leave room for the primitive's words".into()))?;
    debug_assert_eq!(next.key, word.key + 4);
  }
  // The stake: its own SharedArrayBuffer's Int32s, up to the one that
  // says a wake-up is owed.
  let short = |_| {
    Failure::Type(format!(
      "stake must be an Int32Array of {} or more over a SharedArrayBuffer",
      kind.ints()
    ))
  };
  let cell = locate(js, cell_array, 0.0).map_err(short)?;
  locate(js, cell_array, (kind.ints() - 1) as f64).map_err(short)?;
  if word.element != memory::Element::Int32 || cell.element != memory::Element::Int32 {
    return Err(Failure::Type("typedArray must be an Int32Array".into()));
  }
  if !js.is_object(instance)? {
    return Err(Failure::Type("instance must be an object".into()));
  }
  let watch = env::with_state(js, |state| Ok(state.stakes.clone()))?;
  if watch.borrow().stakes.contains_key(&cell.key) {
    return Err(Failure::Error("this stake is watched already".into()));
  }
  let word_buffer = js.create_reference(word.buffer.ok_or(Failure::Pending)?)?;
  let cell_buffer = match js.create_reference(cell.buffer.ok_or(Failure::Pending)?) {
    Ok(reference) => reference,
    Err(failure) => {
      js.delete_reference(word_buffer);
      return Err(failure);
    }
  };
  watch.borrow_mut().stakes.insert(
    cell.key,
    Stake {
      kind,
      word: word.key,
      cell: cell.key,
      buffers: [word_buffer, cell_buffer],
    },
  );
  let unwatch = Box::into_raw(Box::new(Unwatch {
    watch,
    cell: cell.key,
  }));
  if js
    .add_finalizer(instance, unwatch.cast(), stake_unwatched)
    .is_err()
  {
    // The stake stays watched, and its buffers held, for as long as the
    // env lives: robust still, at the cost of that memory.
    // SAFETY: from Box::into_raw above; N-API did not take it.
    drop(unsafe { Box::from_raw(unwatch) });
  }
  js.undefined()
}

/// The finalizer of a watched instance (`stakeWatch`): a wake-up its
/// stake owes (the instance ran out of stack between a change and its
/// notify, and was dropped before a call of its paid it) is delivered now:
/// nothing else would, but the teardown of a thread that may live on. Then
/// the stake is let go with its buffers, unless it still holds something
/// (the instance was dropped holding it): then it stays for the teardown
/// to give back.
///
/// # Safety
/// Called by N-API once, on the env's thread, with the `Unwatch` that
/// `stakeWatch` passed.
unsafe extern "C" fn stake_unwatched(env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
  let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    // SAFETY: from Box::into_raw in stake_watch, finalized once.
    let unwatch = unsafe { Box::from_raw(data.cast::<Unwatch>()) };
    let Ok(mut stakes) = unwatch.watch.try_borrow_mut() else {
      return; // (not reached: nothing borrows it across a collection)
    };
    if stakes.closed {
      return;
    }
    let Some(entry) = stakes.stakes.get(&unwatch.cell) else {
      return;
    };
    if entry.holds() {
      // Held by a dropped instance: the teardown gives it back.
      if entry.owes() {
        let word = entry.word;
        drop(stakes);
        wake_all(word);
      }
      return;
    }
    let Some(entry) = stakes.stakes.remove(&unwatch.cell) else {
      return;
    };
    drop(stakes);
    if entry.owes() {
      wake_all(entry.word);
    }
    // SAFETY: N-API runs finalizers on the env's thread with a live env,
    // before the teardown (not `closed`).
    entry.let_go(unsafe { Js::new(env) });
  }));
  if let Err(payload) = outcome {
    std::mem::forget(payload); // its Drop could panic, outside the catch
  }
}

/// The env is ending (its teardown, on its own thread, JavaScript stopped):
/// each watched stake that still holds something is given back, and the
/// primitive's waiters woken; then the buffers are let go, and later
/// finalizers do nothing.
pub fn release_stakes(js: Js, watch: &Watch) {
  let Ok(mut stakes) = watch.try_borrow_mut() else {
    return; // (never borrowed here; should it be, skip rather than panic)
  };
  stakes.closed = true;
  for (_, entry) in stakes.stakes.drain() {
    // Both buffers are held by `entry` until it is let go below; the word
    // and, but for kind 2, the Int32 after it are Int32Array elements of
    // the first (`locate`d at watch).
    let (held, announced) = (entry.int(0), entry.int(1));
    let wake = match entry.kind {
      Kind::Semaphore => {
        // SAFETY: the word, in its held buffer.
        let word = unsafe { memory::watched_word(entry.word) };
        // SAFETY: the Int32 after it, in the same held buffer.
        let next = unsafe { memory::watched_word(entry.word + 4) };
        stake::release_dead_permits(word, next, held, announced)
      }
      Kind::RwLock => {
        // SAFETY: the word, in its held buffer.
        let state = unsafe { memory::watched_word(entry.word) };
        // SAFETY: the Int32 after it, in the same held buffer.
        let waiters = unsafe { memory::watched_word(entry.word + 4) };
        stake::release_dead_share(state, waiters, held, announced)
      }
      // A count-down to zero or a notify that may not have woken them.
      Kind::Owed => held != 0,
      // Waiting at generation held - 1: broken for the others; and a
      // wake-up owed (`announced` here: the stake's second Int32) after a
      // last arrival, a break or a reset that may not have notified.
      Kind::Barrier => {
        let broke = held > 0 && {
          // SAFETY: the word, in its held buffer.
          let state = unsafe { memory::watched_word(entry.word) };
          // SAFETY: the Int32 after it, in the same held buffer.
          let ended = unsafe { memory::watched_word(entry.word + 4) };
          stake::break_dead_party(state, ended, held as u32 - 1)
        };
        broke || announced != 0
      }
    };
    if wake {
      wake_all(entry.word);
    }
    entry.let_go(js);
  }
}
