//! The stakes of an env's primitive instances (`crate::stake`): what each
//! holds of a primitive whose word counts its holders (a Semaphore's
//! permits, an RwLock's readers and writer), or owes its waiters (a Latch's
//! wake-up at zero, a Condition's notify), given back or delivered by the
//! env's teardown if the thread ends with it. What `stakeWatch` takes, and
//! what a stake means; the registry of watched stakes is held.rs's.

use napi::sys;

use super::ffi::{Failure, Js, NResult};
use super::memory::{self, locate};
use crate::stake;

/// What a stake is a share of.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
  /// A Semaphore, or a signalling semaphore (SignalSemaphore, and
  /// async-mutex's Semaphore: lib/signal-count.js): the word is its
  /// `permits`, the next Int32 its `waiters`; the stake's first Int32 is
  /// the permits the instance holds (always 0 for a SignalSemaphore, whose
  /// takes are consumed), its second its waits counted in `waiters`.
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

/// One watched instance's stake: where its primitive's word and its own
/// Int32s are. It reads that memory, so its methods are `unsafe`: the
/// caller must hold both buffers (held.rs does, for as long as the stake is
/// watched). Made only by [`stake_to_watch`], which checks what its reads
/// rely on: `cell` is element 0 of an Int32Array of `kind.ints()` or more;
/// `word` is an Int32Array element, and but for kind 2 so is the Int32 after
/// it; `word_base` and `cell_base` are the bases of their buffers. Its
/// fields are private, so that nothing else can make one that breaks that.
pub struct Stake {
  kind: Kind,
  /// The address of the primitive's word (its registry key).
  word: usize,
  /// The address of the Int32 that holds the instance's stake.
  cell: usize,
  /// The base addresses of the word's buffer and of the stake's.
  word_base: usize,
  cell_base: usize,
}

impl Stake {
  /// The address of the primitive's word (its registry key).
  pub fn word(&self) -> usize {
    self.word
  }

  /// The address of the stake's first Int32 (its key in held.rs).
  pub fn cell(&self) -> usize {
    self.cell
  }

  /// How many Int32s the stake has (at least: all that were checked).
  pub fn ints(&self) -> usize {
    self.kind.ints()
  }

  /// The base addresses of the buffers of the word and of the stake.
  pub fn buffer_bases(&self) -> [usize; 2] {
    [self.word_base, self.cell_base]
  }

  /// The stake's Int32 at `at` (below `kind.ints()`).
  ///
  /// # Safety
  /// The stake's buffer is alive for the call.
  unsafe fn int(&self, at: usize) -> i32 {
    debug_assert!(at < self.kind.ints());
    // SAFETY: `cell` is element 0 of an Int32Array of `kind.ints()` or more
    // (checked by `stake_to_watch`), in a buffer the caller holds.
    unsafe { memory::stake_int(self.cell, at) }
  }

  /// Whether the instance still holds something of the primitive, or
  /// waits in it: for the teardown to give back.
  ///
  /// # Safety
  /// The stake's buffer is alive for the call.
  pub unsafe fn holds(&self) -> bool {
    // SAFETY: (each) as the caller promises.
    let int = |at| unsafe { self.int(at) };
    match self.kind {
      Kind::Semaphore | Kind::RwLock => int(0) != 0 || int(1) != 0,
      Kind::Barrier => int(0) != 0,
      Kind::Owed => false,
    }
  }

  /// Whether a wake-up of every waiter is owed.
  ///
  /// # Safety
  /// The stake's buffer is alive for the call.
  pub unsafe fn owes(&self) -> bool {
    // SAFETY: as the caller promises.
    unsafe { self.int(self.kind.owed_at()) != 0 }
  }

  /// The instance's thread is ending: gives back what the stake holds, and
  /// says whether every waiter of the word must be woken (something was
  /// given back, or a wake-up was owed).
  ///
  /// # Safety
  /// The buffers of the word and of the stake are alive for the call.
  pub unsafe fn give_back(&self) -> bool {
    // SAFETY: the stake's buffer, as the caller promises.
    let held = unsafe { self.int(0) };
    // SAFETY: as above.
    let announced = unsafe { self.int(1) };
    // The word and the Int32 after it (not for kind 2, which has only the
    // word): Int32Array elements of the word's buffer (`stake_to_watch`
    // located both), which the caller holds.
    let words = || {
      // SAFETY: as just said.
      let word = unsafe { memory::watched_word(self.word) };
      // SAFETY: as just said.
      let next = unsafe { memory::watched_word(self.word + 4) };
      (word, next)
    };
    match self.kind {
      Kind::Semaphore => {
        let (permits, waiters) = words();
        stake::release_dead_permits(permits, waiters, held, announced)
      }
      Kind::RwLock => {
        let (state, waiters) = words();
        stake::release_dead_share(state, waiters, held, announced)
      }
      // A count-down to zero or a notify that may not have woken them.
      Kind::Owed => held != 0,
      // Waiting at generation held - 1: broken for the others; and a
      // wake-up owed (`announced` here: the stake's second Int32) after a
      // last arrival, a break or a reset that may not have notified.
      Kind::Barrier => {
        let broke = held > 0 && {
          let (state, ended) = words();
          stake::break_dead_party(state, ended, held as u32 - 1)
        };
        broke || announced != 0
      }
    }
  }
}

/// `stakeWatch(i32a, index, kind, stake, instance)`'s arguments: the stake
/// (an Int32Array over a SharedArrayBuffer of its own, of [`Kind::ints`]
/// or more) that the object `instance` keeps of the primitive whose word is
/// `i32a[index]` (but for kind 2, also `i32a[index + 1]`); with the
/// objects of the word's buffer and of the stake's, for held.rs to hold.
pub fn stake_to_watch(
  js: Js,
  [array, index, kind, cell_array, instance]: [sys::napi_value; 5],
) -> NResult<(Stake, [Option<sys::napi_value>; 2])> {
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
    locate(js, array, index + 1.0)
      .map_err(|_| Failure::Range("index must leave room for the primitive's words".into()))?;
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
  let stake = Stake {
    kind,
    word: word.key,
    cell: cell.key,
    word_base: word.buffer_base,
    cell_base: cell.buffer_base,
  };
  Ok((stake, [word.buffer, cell.buffer]))
}
