//! What a thread holds, for its teardown: one registry per env of every
//! primitive instance that could end holding something of a word shared
//! with other threads, by kind: an AsyncLock's word (locks.rs), and the
//! stake of a Semaphore, RwLock, Barrier, Latch or Condition (stakes.rs).
//! Should the thread end while one holds something, [`release_all`], run
//! by the env's teardown, frees it for the others and wakes them.
//!
//! The registry is shared between the env's state and the finalizer data
//! of each watched instance, on the env's thread only, so that a finalizer
//! that runs after the teardown (N-API runs the last ones when it frees the
//! env) finds it closed rather than the env's instance data, which is gone
//! by then. Everything it watches lies in a SharedArrayBuffer it holds by a
//! strong reference (`buffers`), so that neither the teardown nor a
//! finalizer ever touches memory that may have been freed.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::rc::Rc;

use napi::sys;

use super::ffi::{Failure, Js, NResult};
use super::locks;
use super::memory::{self, Location};
use super::shared::{core, wake_or_pass_on};
use super::stakes::Stake;
use crate::diag::Watched as Row;
use crate::registry::BuildAddressHasher;

/// An env's registry (see the module docs).
#[derive(Default)]
pub struct Held {
  /// This env's AsyncLock owner (`crate::robust`), given by the core on
  /// the first `lockOwner`; 0 before.
  owner: u32,
  /// Watched AsyncLock words by address: their buffer's base address and
  /// how many live instances watch them.
  words: HashMap<usize, (usize, usize), BuildAddressHasher>,
  /// Watched stakes by the address of their first Int32.
  stakes: HashMap<usize, Stake, BuildAddressHasher>,
  /// One strong reference per buffer of a watched word or stake, by base
  /// address, with how many holds it has: one per instance over a word,
  /// two per stake (the word's buffer and the stake's).
  buffers: HashMap<usize, (sys::napi_ref, usize), BuildAddressHasher>,
  /// The teardown has run: nothing is watched any more.
  closed: bool,
  /// This env's number in the core's table of who holds and waits
  /// (`crate::diag`), given on first use; 0 before.
  diag: u64,
}

/// An env's [`Held`], as its state and its instances' finalizers share it.
pub type Registry = Rc<RefCell<Held>>;

/// What a watched instance watches, by address.
#[derive(Clone, Copy)]
enum Watched {
  Word(usize),
  Stake(usize),
}

/// What a watched instance's finalizer gets.
struct Unwatch {
  registry: Registry,
  watched: Watched,
}

/// How a watched instance shows in a snapshot (`crate::diag`): what
/// `lockWatch` and `stakeWatch` were told of it beyond what they need for
/// the teardown.
pub struct Shown {
  pub thread: f64,
  pub label: u32,
  pub name: Option<Box<str>>,
  /// How many Int32s from its word are its primitive's (checked to lie in
  /// its array).
  pub word_ints: usize,
}

impl Held {
  /// This env's number in the core's table, given on first use (0, and
  /// nothing shown, should the core fail to give one).
  pub fn diag_env(&mut self) -> u64 {
    if self.diag == 0 {
      self.diag = core().diag_new_env().unwrap_or(0);
    }
    self.diag
  }

  /// Puts the instance watched at `at` in the core's table.
  ///
  /// # Safety
  /// `row`'s memory (its word's Int32s and its stake's) is in buffers that
  /// `buffers` holds until the row leaves the table (`hide`, `release_all`).
  unsafe fn show(&mut self, at: usize, row: Row) {
    let env = self.diag_env();
    if env != 0 {
      // SAFETY: as the caller promises: held until the row goes.
      let _ = unsafe { core().diag_watch(env, at, row) };
    }
  }

  /// The instance watched at `at` leaves the core's table (before its
  /// buffers are let go of); false if the core failed to take it out
  /// (only a bug: the caller then keeps its buffers held for good, since
  /// a snapshot may still read them).
  fn hide(&self, at: usize) -> bool {
    self.diag == 0 || core().diag_unwatch(self.diag, at).is_ok()
  }

  /// Holds the buffer at `base` once more; `buffer` is its object, needed
  /// only for the first hold. (Making a reference runs no JavaScript and
  /// no finalizer: the registry may stay borrowed across it.)
  fn hold(&mut self, js: Js, base: usize, buffer: Option<sys::napi_value>) -> NResult<()> {
    match self.buffers.get_mut(&base) {
      Some((_, holds)) => *holds += 1,
      None => {
        let reference = js.create_reference(buffer.ok_or(Failure::Pending)?)?;
        self.buffers.insert(base, (reference, 1));
      }
    }
    Ok(())
  }

  /// Lets go of one hold of the buffer at `base`: the reference goes with
  /// the last.
  fn let_go(&mut self, js: Js, base: usize) {
    if let Some((reference, holds)) = self.buffers.get_mut(&base) {
      *holds -= 1;
      if *holds == 0 {
        let reference = *reference;
        self.buffers.remove(&base);
        js.delete_reference(reference);
      }
    }
  }

  /// The finalizer's part for an AsyncLock over the word at `key`: one
  /// instance fewer watches it and holds its buffer, unless it is the last
  /// and this env holds the word (it was dropped without unlocking): no
  /// instance of this env can unlock it any more, so it stays watched, and
  /// its buffer held, for the teardown to free.
  fn unwatch_word(&mut self, js: Js, key: usize) {
    let Some(&(base, watchers)) = self.words.get(&key) else {
      return;
    };
    let held_here = watchers == 1 && self.owner != 0 && {
      // SAFETY: the word's buffer is held by `buffers` (let go of below at
      // the earliest: this instance counts).
      let word = unsafe { memory::watched_word(key) };
      locks::held_by(word, self.owner)
    };
    if held_here {
      return;
    }
    if watchers == 1 {
      self.words.remove(&key);
      if !self.hide(key) {
        return;
      }
    } else if let Some(word) = self.words.get_mut(&key) {
      word.1 -= 1;
    }
    self.let_go(js, base);
  }

  /// The finalizer's first look at the stake at `cell`: its word, whether
  /// it still holds something (the instance was dropped holding it: it
  /// stays for the teardown to give back), and whether a wake-up of the
  /// word's waiters is owed (the instance ran out of stack between a change
  /// and its notify, and was dropped before a call of its paid it: the
  /// caller delivers it now, as nothing else would but the teardown of a
  /// thread that may live on).
  fn look_at_stake(&self, cell: usize) -> Option<(usize, bool, bool)> {
    let stake = self.stakes.get(&cell)?;
    // SAFETY: a watched stake's buffers are held by `buffers`.
    let holds = unsafe { stake.holds() };
    // SAFETY: as above.
    let owes = unsafe { stake.owes() };
    Some((stake.word(), holds, owes))
  }

  /// The stake at `cell` is no longer watched: it leaves the registry, and
  /// its holds of its buffers are let go.
  fn forget_stake(&mut self, js: Js, cell: usize) {
    if let Some(stake) = self.stakes.remove(&cell) {
      if !self.hide(cell) {
        return;
      }
      for base in stake.buffer_bases() {
        self.let_go(js, base);
      }
    }
  }
}

/// `lockOwner`: claims `owner` (`locks::owner_of_thread`) for this env in
/// the core, on the env's first call; the env's owner, the same number,
/// on every call after.
pub fn claim_owner(registry: &Registry, owner: u32) -> NResult<u32> {
  let mut held = registry.borrow_mut();
  if held.owner == 0 {
    if !core().claim_owner(owner)? {
      return Err(Failure::Error(format!(
        "atomics-waitasync: another thread has the threadId {}: AsyncLock could not tell their locks apart",
        owner - 1
      )));
    }
    held.owner = owner;
  }
  Ok(held.owner)
}

/// `diagPage`: the page of waits at `location` (an Int32Array's element 0,
/// `PAGE_SLOTS * SLOT_INTS` Int32s long, checked by the caller) goes in
/// the core's table for this env's thread `thread` (`crate::diag`). Holds
/// its buffer until the env ends (after the core forgot the env's pages).
/// False if the core gave the env no number (nothing is shown then).
pub fn add_page(js: Js, registry: &Registry, location: &Location, thread: f64) -> NResult<bool> {
  let mut held = registry.borrow_mut();
  let env = held.diag_env();
  if env == 0 || held.closed {
    return Ok(false);
  }
  held.hold(js, location.buffer_base, location.buffer)?;
  // SAFETY: the page lies in the buffer held just above, let go of only
  // by the teardown, after the core forgot the env (or never, should it
  // fail to). Held even if this fails: the core may have added it before
  // it failed.
  unsafe { core().diag_page(env, thread, location.key) }?;
  Ok(true)
}

/// `lockWatch`: the AsyncLock `lock` of this env uses the word at
/// `location` (`locks::word_to_watch`): should the env end while it holds
/// it, its teardown frees it. Holds the word's buffer until `lock` is
/// collected.
pub fn watch_word(
  js: Js,
  registry: &Registry,
  location: &Location,
  lock: sys::napi_value,
  shown: Option<Shown>,
) -> NResult<()> {
  let (key, base) = (location.key, location.buffer_base);
  {
    let mut held = registry.borrow_mut();
    held.hold(js, base, location.buffer)?;
    let watchers = &mut held.words.entry(key).or_insert((base, 0)).1;
    *watchers += 1;
    let first = *watchers == 1;
    // One row per word and env: the first instance's, or a later one's
    // that has a name.
    if let Some(shown) = shown.filter(|shown| first || shown.name.is_some()) {
      let row = Row {
        thread: shown.thread,
        label: shown.label,
        name: shown.name,
        word: key,
        word_ints: shown.word_ints,
        cell: 0,
        cell_ints: 0,
        base,
      };
      // SAFETY: the word's Int32s (checked to lie in its array) are in the
      // buffer held just above, let go of only after `hide` (the last
      // instance's finalizer, or the teardown).
      unsafe { held.show(key, row) };
    }
  }
  watch(js, registry, Watched::Word(key), lock);
  Ok(())
}

/// `stakeWatch`: `instance`, of this env, keeps `stake`
/// (`stakes::stake_to_watch`), whose word's buffer and own are `buffers`:
/// should the env end while the stake holds something, its teardown gives
/// it back. Holds both buffers until `instance` is collected holding
/// nothing; a wake-up the stake owes then is delivered.
pub fn watch_stake(
  js: Js,
  registry: &Registry,
  stake: Stake,
  [word_buffer, cell_buffer]: [Option<sys::napi_value>; 2],
  instance: sys::napi_value,
  shown: Option<Shown>,
) -> NResult<()> {
  let (cell, [word_base, cell_base]) = (stake.cell(), stake.buffer_bases());
  {
    let mut held = registry.borrow_mut();
    if held.stakes.contains_key(&cell) {
      return Err(Failure::Error("this stake is watched already".into()));
    }
    held.hold(js, word_base, word_buffer)?;
    if let Err(failure) = held.hold(js, cell_base, cell_buffer) {
      held.let_go(js, word_base);
      return Err(failure);
    }
    if let Some(shown) = shown {
      let row = Row {
        thread: shown.thread,
        label: shown.label,
        name: shown.name,
        word: stake.word(),
        word_ints: shown.word_ints,
        cell,
        cell_ints: stake.ints(),
        base: word_base,
      };
      // SAFETY: the word's Int32s (checked to lie in its array) and the
      // stake's are in the two buffers held just above, let go of only
      // after `hide` (`forget_stake`, or the teardown).
      unsafe { held.show(cell, row) };
    }
    held.stakes.insert(cell, stake);
  }
  watch(js, registry, Watched::Stake(cell), instance);
  Ok(())
}

/// Adds the finalizer that tells the registry when `instance` is collected.
fn watch(js: Js, registry: &Registry, watched: Watched, instance: sys::napi_value) {
  let unwatch = Box::into_raw(Box::new(Unwatch {
    registry: registry.clone(),
    watched,
  }));
  if js
    .add_finalizer(instance, unwatch.cast(), unwatched)
    .is_err()
  {
    // It stays watched, and its buffers held, for as long as the env
    // lives: robust still, at the cost of that memory.
    // SAFETY: from Box::into_raw above; N-API did not take it.
    drop(unsafe { Box::from_raw(unwatch) });
  }
}

/// The finalizer of a watched instance ([`watch`]): see
/// [`Held::unwatch_word`] and [`Held::look_at_stake`]. Nothing once the
/// env's teardown has run (it let go of everything).
///
/// # Safety
/// Called by N-API once, on the env's thread, with the `Unwatch` that
/// [`watch`] passed.
unsafe extern "C" fn unwatched(env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
  let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    // SAFETY: from Box::into_raw in `watch`, finalized once.
    let unwatch = unsafe { Box::from_raw(data.cast::<Unwatch>()) };
    let Ok(mut held) = unwatch.registry.try_borrow_mut() else {
      return; // (not reached: nothing borrows it across a collection)
    };
    if held.closed {
      return;
    }
    // SAFETY: N-API runs finalizers on the env's thread with a live env,
    // before the teardown (not `closed`).
    let js = unsafe { Js::new(env) };
    match unwatch.watched {
      Watched::Word(key) => held.unwatch_word(js, key),
      Watched::Stake(cell) => {
        let Some((word, holds, owes)) = held.look_at_stake(cell) else {
          return;
        };
        // The wake-up is made with the registry not borrowed, and before
        // the stake's buffers are let go of; meanwhile the stake stays
        // watched, with its buffers held.
        drop(held);
        if owes {
          wake_or_pass_on(word, usize::MAX);
        }
        if holds {
          return;
        }
        let Ok(mut held) = unwatch.registry.try_borrow_mut() else {
          return; // (not reached, as above; the teardown lets go of it)
        };
        held.forget_stake(js, cell);
      }
    }
  }));
  if let Err(payload) = outcome {
    std::mem::forget(payload); // its Drop could panic, outside the catch
  }
}

/// The env is ending (its teardown, on its own thread, JavaScript stopped):
/// each watched AsyncLock word its owner still holds is freed as abandoned
/// (`locks::free_dead`), then each stake that still holds something is
/// given back (`Stake::give_back`), and the waiters of each woken; then the
/// buffers are let go, and later finalizers do nothing.
pub fn release_all(js: Js, registry: &Registry) {
  // (Never borrowed here: the teardown runs when no call from JS is under
  // way, and finalizers do not run inside it. Should it be, this does
  // nothing rather than panic and skip the rest of the teardown.)
  let Ok(mut held) = registry.try_borrow_mut() else {
    return;
  };
  held.closed = true;
  // Out of the core's table before anything is let go of; should the
  // core fail to take the rows out, their buffers stay held for good.
  let hidden = held.diag == 0 || core().diag_forget_env(held.diag).is_ok();
  if held.owner != 0 {
    for &key in held.words.keys() {
      // SAFETY: every watched word's buffer is held by `buffers`, let go
      // of only below.
      let word = unsafe { memory::watched_word(key) };
      locks::free_dead(key, word, held.owner);
    }
    let _ = core().forget_owner(held.owner);
  }
  held.words.clear();
  for (_, stake) in held.stakes.drain() {
    // SAFETY: both of its buffers are held by `buffers`, let go of only
    // below.
    if unsafe { stake.give_back() } {
      wake_or_pass_on(stake.word(), usize::MAX);
    }
  }
  for (_, (reference, _)) in held.buffers.drain() {
    if hidden {
      js.delete_reference(reference);
    }
  }
}
