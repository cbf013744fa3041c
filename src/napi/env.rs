//! Per-env state: the env's pending async waiters, its TSFN and keep-alive
//! policy, its current sync waiter, the registry of what its instances
//! hold (held.rs), and the cleanup hook that drops all of them when the env
//! (a worker, or the main thread) goes away.
//!
//! The state lives in raw N-API instance data (napi-rs's typed accessor
//! takes a process-wide mutex on every call) and is only ever touched on
//! the env's own thread: by calls from JS, by the TSFN's call-js, and by the
//! cleanup hook; always through [`EnvCell`], which hands out one `&mut` at
//! a time, for a closure, never across a call that can run JavaScript.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr::{self, NonNull};
use std::sync::Arc;

use napi::sys;

use super::ffi::{check, Failure, Js, NResult, Tsfn};
use super::held::{self, Registry};
use super::memory::Array;
use super::shared::{core, pass_on};
use crate::core::{Guarded, SyncWait};
use crate::deadline::When;
use crate::parker::Parker;
use crate::registry::{BuildAddressHasher, WaiterId};
use crate::slab::Slab;
use crate::sync_wait::WokenMark;
use crate::wake::{Cancelled, Mailbox, Woken};

/// The env's side of the wake-up core's mailbox: its ThreadsafeFunction.
pub type EnvShared = Mailbox<Tsfn>;

/// A pending `waitAsync`, owned by its env's thread.
pub struct Pending {
  /// Its id in the registry (for teardown, deadline cancel, and to tell it
  /// from a later waiter in the same slot).
  pub id: WaiterId,
  pub key: usize,
  pub deadline: Option<When>,
  pub promise: Promise,
}

/// Where a pending waiter's promise lives, which decides how it is settled
/// and what the env's teardown leaves behind. An env uses one kind: JS once
/// lib/pending.js has registered (`setSettler`, which index.js does in
/// worker threads), a deferred otherwise. (Copy, so chunks of them fit in
/// arrays. A deferred is still concluded once: by the chunk that settles
/// it (resolver.rs `settle_all`, which lists its waiters in
/// `EnvState::settling` meanwhile, so that `cancel` leaves them alone), or
/// else by whoever takes its `Pending` out of the slab.)
#[derive(Clone, Copy)]
pub enum Promise {
  /// An N-API deferred: the cheapest promise (no resolving functions on
  /// the JS heap), made and resolved here. Its SharedArrayBuffer is held
  /// in `EnvState::buffers` under `buffer`, the buffer's base address. A
  /// deferred can only be freed by resolving it, which needs JS; an env
  /// torn down with deferreds pending leaks ~32 B per deferred. Hence it is
  /// used where teardown means the process is ending: the main thread.
  Deferred {
    deferred: NonNull<sys::napi_deferred__>,
    buffer: usize,
  },
  /// Kept by lib/pending.js in the same slot, with the typed array that
  /// keeps its buffer alive: a torn-down env's pending promises go with its
  /// JS heap. ~130 B more JS heap per pending waiter (the promise's resolve and
  /// reject functions and their context).
  InJs,
}

/// lib/pending.js's side of settling: its `settle(n)` function and the
/// Uint32Array it reads `n` outcomes from (`slot << 1 | timed_out`).
pub struct Settler {
  pub function: sys::napi_ref,
  pub outcomes: sys::napi_ref,
}

pub struct EnvState {
  pub env: sys::napi_env,
  pub shared: Arc<EnvShared>,
  tsfn: sys::napi_threadsafe_function,
  /// Pending async waits, by the slot index their waiter carries.
  pub pending: Slab<Pending>,
  /// One strong reference per SharedArrayBuffer with pending deferred
  /// waits, keyed by its base address, with how many waits hold it: the
  /// memory must not be freed and reused under a live registry key. One
  /// reference per buffer rather than per wait spares a global handle per
  /// waiter (which every scavenge would visit) and ~100 ns per call.
  /// The first such buffer is held in `first_buffer`, the others here.
  buffers: HashMap<usize, BufferRef, BuildAddressHasher>,
  /// A held buffer kept out of `buffers`, with its base address (never
  /// also a key of `buffers`): a program that waits on one buffer, the
  /// common case, holds and releases it with no hash-map insert and
  /// remove (~200 of ~8,200 instructions per waitAsync → notify →
  /// settle).
  first_buffer: Option<(usize, BufferRef)>,
  /// The typed array the last `waitAsync`s (or `wait`s) were called on, by a weak
  /// reference, and what N-API said of it: a call on the same array
  /// object (`napi_strict_equals`) finds its element without
  /// `napi_get_typedarray_info` (which tests the array's kind one type at
  /// a time: ~400 of ~8,000 instructions per waitAsync → notify →
  /// settle). See `memory::Array` for why that stays true.
  pub last_array: Option<(sys::napi_ref, Array)>,
  /// Element 0's address of the array of the last `waitAsync` or `wait` that missed
  /// `last_array`: an array becomes `last_array` on its second miss in a
  /// row, so that calls alternating between arrays do not make and delete
  /// a reference each.
  missed_array: Option<usize>,
  /// The reference of the last buffer whose pending waits all ended, made
  /// weak rather than deleted, with its base address: the next wait on
  /// that buffer makes it strong again instead of creating a reference
  /// (waits that come and go one at a time on one buffer, the common case,
  /// paid a create and a delete each: ~400 of ~9,200 instructions per
  /// waitAsync → notify → settle). Weak, it keeps nothing alive; reused
  /// only while its value is still there (then the memory at that address
  /// is still that buffer's). At most one, so nothing accumulates.
  idle_buffer: Option<(usize, sys::napi_ref)>,
  /// Set once by lib/pending.js (`setSettler`); from then on this env's
  /// promises are made in JS.
  pub settler: Option<Settler>,
  /// Reused buffer for draining the mailbox.
  pub spare: Vec<Woken>,
  /// Ids of waiters that `cancel` took back after a notify or a timeout had
  /// already taken them off their queue: their outcome is on its way to
  /// this env, for a slot that is free by then. When it arrives, a
  /// notify's wake-up goes on to the next waiter (resolver.rs
  /// `settle_all`): the notify counted it and nobody here will see it.
  pub cancelled: Cancelled,
  /// Ids of the waiters of the chunk being settled right now (resolver.rs
  /// `settle_all`): JS runs meanwhile and may call `cancel` on one of them,
  /// which must leave it alone: it is woken, its outcome is in hand, and
  /// its promise (or deferred, which must be resolved exactly once) is
  /// being settled. Empty outside settling.
  pub settling: Vec<WaiterId>,
  /// Test-only (`failSettleForTesting`): settling the next chunk of
  /// outcomes fails, as when an N-API call fails there.
  pub fail_settle_for_testing: bool,
  /// False after `unref()`: pending waiters do not keep the env alive.
  pub keep_alive: bool,
  /// Whether the TSFN is ref'd right now.
  refed: bool,
  /// The sync `wait` in progress on this thread, kept between slices.
  pub sync_wait: Option<SyncWait>,
  /// This thread's parker, reused by each of its sync waits: a wait
  /// allocates nothing (see `crate::parker`).
  pub parker: Arc<Parker>,
  /// The key of this thread's last sync wait that ended in "ok", until
  /// JS confirms that its caller got it: if the thread is terminated
  /// first, the teardown passes it on.
  pub woken: WokenMark,
  /// The slot and id of the last waiter `waitAsync` queued (`lastQueued`).
  pub last_queued: (u32, WaiterId),
  /// What this env's primitive instances hold of words shared with other
  /// threads (AsyncLock words, stakes), freed or given back at teardown
  /// if they still hold it (`held::release_all`).
  held: Registry,
  /// Keys of wake-ups this thread's sync waits got but its JS never saw
  /// (see [`EnvState::abandon_sync_wait`]) that the core could not pass on
  /// yet (it panicked, `CoreApi`): kept until it has.
  unpassed: Vec<usize>,
}

struct BufferRef {
  reference: sys::napi_ref,
  waits: usize,
}

impl EnvState {
  /// Keeps the buffer at `base` alive for one more pending wait.
  /// `buffer` gives the buffer object, if a reference must be made.
  pub fn hold_buffer(
    &mut self,
    js: Js,
    base: usize,
    buffer: impl FnOnce() -> NResult<sys::napi_value>,
  ) -> NResult<()> {
    if let Some((first, held)) = &mut self.first_buffer {
      if *first == base {
        held.waits += 1;
        return Ok(());
      }
    }
    if let Some(held) = self.buffers.get_mut(&base) {
      held.waits += 1;
      return Ok(());
    }
    let reference = match self.idle_buffer {
      Some((idle, reference)) if idle == base => {
        self.idle_buffer = None;
        // Still there: the memory at `base` is still that buffer's (any
        // buffer object over it keeps it alive as well as this one).
        // Gone: that buffer was collected, and this is another one that
        // happens to have the same address.
        if js.reference_value(reference).is_ok() && js.reference_ref(reference).is_ok() {
          reference
        } else {
          js.delete_reference(reference);
          js.create_reference(buffer()?)?
        }
      }
      _ => js.create_reference(buffer()?)?,
    };
    let held = BufferRef {
      reference,
      waits: 1,
    };
    if self.first_buffer.is_none() {
      self.first_buffer = Some((base, held));
    } else {
      self.buffers.insert(base, held);
    }
    Ok(())
  }

  /// Ends a run of `waitAsync` / `wait` misses (any call does: a hit ends it, a
  /// miss passes what it took to [`missed_array`](Self::missed_array)):
  /// the array the last call missed on, if it did.
  pub fn take_missed_array(&mut self) -> Option<usize> {
    self.missed_array.take()
  }

  /// `waitAsync` or `wait` found `array` (described as `described`) without
  /// `last_array`, and the call before, if it missed too, missed on the
  /// array at `missed` (the call took it out of `missed_array`: a hit in
  /// between ends the run). On its second miss in a row an array becomes
  /// `last_array`, so that calls alternating between arrays, the cached
  /// one among them, do not make and delete a reference each. A new view
  /// of the very elements of `last_array` (one made per call) leaves it
  /// alone: replacing it would only make the next view miss again. The two
  /// kinds of wait share this: a thread that alternates `wait` on one array
  /// and `waitAsync` on another caches neither, as one alternating
  /// `waitAsync`s between two arrays does.
  pub fn missed_array(
    &mut self,
    js: Js,
    array: sys::napi_value,
    described: Array,
    missed: Option<usize>,
  ) {
    if missed != Some(described.data()) {
      self.missed_array = Some(described.data());
      return;
    }
    if matches!(self.last_array, Some((_, last)) if last == described) {
      return;
    }
    // Best effort: without a reference, the next call misses again.
    if let Ok(reference) = js.create_weak_reference(array) {
      if let Some((older, _)) = self.last_array.replace((reference, described)) {
        js.delete_reference(older);
      }
    }
  }

  /// One pending wait on the buffer at `base` is over.
  pub fn release_buffer(&mut self, js: Js, base: usize) {
    let reference = match &mut self.first_buffer {
      Some((first, held)) if *first == base => {
        held.waits -= 1;
        if held.waits > 0 {
          return;
        }
        let reference = held.reference;
        self.first_buffer = None;
        reference
      }
      _ => {
        let Some(held) = self.buffers.get_mut(&base) else {
          return;
        };
        held.waits -= 1;
        if held.waits > 0 {
          return;
        }
        let reference = held.reference;
        self.buffers.remove(&base);
        reference
      }
    };
    if js.reference_unref(reference).is_err() {
      js.delete_reference(reference);
    } else if let Some((_, older)) = self.idle_buffer.replace((base, reference)) {
      js.delete_reference(older);
    }
  }

  /// Ends this thread's sync wait, if one is under way or just returned
  /// "ok" unconfirmed, for a caller that will see neither outcome (its JS
  /// loop was abandoned, or the env is going away): its waiter leaves its
  /// queue, and wake-ups it got go on to the next waiters. If the core
  /// panics, what it did not do stays in the state, for the next call to
  /// do (the thread's next `wait()`, or the env's teardown): nothing is
  /// taken out of the state before the core has done its part.
  ///
  /// The parker is kept after a panic in `abandon_sync`: the wait, still
  /// queued with it, stays in `sync_wait`, and no new wait starts (resets
  /// the parker) before a retry here has ended it; a successful
  /// `abandon_sync` leaves no unpark for it outstanding (`sync_wait`).
  pub fn abandon_sync_wait(&mut self) -> Guarded<()> {
    // A wake-up the last wait returned as "ok" goes on unless JS
    // confirmed it got there. First, so that a panic below leaves it in
    // `unpassed` too.
    self.unpassed.extend(self.woken.take_unseen());
    if self.sync_wait.is_some() {
      // Takes the wait out only if it returns Ok.
      if let Some(key) = core().abandon_sync(&mut self.sync_wait)? {
        self.unpassed.push(key);
      }
    }
    if !self.unpassed.is_empty() {
      // Should it panic part-way, all of them are tried again: a wake-up
      // too many beats a lost one.
      core().pass_on(&mut self.unpassed.iter().copied())?;
      self.unpassed.clear();
    }
    Ok(())
  }

  /// After the core panicked in `enqueue_sync` or `wait_slice`
  /// (`CoreApi`), this thread's parker may still be queued with no
  /// `SyncWait` left to end it (should a panic come part-way through
  /// queueing it, which the core means never to happen), or due an
  /// unpark that a notify has yet to make: a later wait that reused it
  /// could end "ok" on a notify meant for the one before. The next wait
  /// gets a new parker, which nothing stale can reach (the old one lives
  /// on in whatever still holds it, `sync_wait` included).
  pub fn retire_parker(&mut self) {
    self.parker = Arc::new(Parker::new());
  }

  /// Calls this env's TSFN from its own thread, so that its mailbox is
  /// drained again on a later turn of the event loop: for when draining
  /// it failed (the core panicked) with no other signal on its way (the
  /// mailbox signals only when it goes from empty to not).
  pub fn resignal(&self) {
    // SAFETY: on the env's thread (all EnvState use is), with its live
    // TSFN: the state is freed with the TSFN's release, in the hook; a
    // non-blocking call may be made from any thread.
    let _ = unsafe {
      sys::napi_call_threadsafe_function(
        self.tsfn,
        ptr::null_mut(),
        sys::ThreadsafeFunctionCallMode::nonblocking,
      )
    };
  }

  /// Refs the TSFN while there is something pending and keep-alive is on,
  /// unrefs it otherwise. Cheap when nothing changes.
  pub fn update_keep_alive(&mut self) {
    let want = self.keep_alive && !self.pending.is_empty();
    if want == self.refed {
      return;
    }
    let status = if want {
      // SAFETY: called on the env's thread (all EnvState use is), with its
      // live TSFN: the state is freed with the TSFN's release, in the hook.
      unsafe { sys::napi_ref_threadsafe_function(self.env, self.tsfn) }
    } else {
      // SAFETY: as above.
      unsafe { sys::napi_unref_threadsafe_function(self.env, self.tsfn) }
    };
    if status == sys::Status::napi_ok {
      self.refed = want;
    }
  }
}

/// How the env's TSFN is made (resolver.rs `create_tsfn`): passed in, so
/// that this module does not depend on the one that settles promises.
///
/// # Safety
/// The cell passed must outlive every call of the TSFN's call-js with a
/// non-null env.
pub type CreateTsfn = unsafe fn(Js, *mut EnvCell) -> NResult<sys::napi_threadsafe_function>;

/// Creates this env's state, its TSFN and its cleanup hook (module init).
pub fn init(js: Js, create_tsfn: CreateTsfn) -> NResult<()> {
  let env = js.raw();
  let cell = Box::into_raw(Box::new(EnvCell(RefCell::new(EnvState {
    env,
    shared: Arc::new(EnvShared::new(Tsfn(ptr::null_mut()))),
    tsfn: ptr::null_mut(),
    pending: Slab::default(),
    buffers: HashMap::default(),
    first_buffer: None,
    last_array: None,
    missed_array: None,
    idle_buffer: None,
    settler: None,
    spare: Vec::new(),
    cancelled: Cancelled::default(),
    settling: Vec::new(),
    fail_settle_for_testing: false,
    keep_alive: true,
    refed: false,
    sync_wait: None,
    parker: Arc::new(Parker::new()),
    woken: WokenMark::default(),
    unpassed: Vec::new(),
    last_queued: (0, 0),
    held: Registry::default(),
  }))));
  // SAFETY: cell is alive until the cleanup hook frees it, which aborts
  // the TSFN first.
  let tsfn = match unsafe { create_tsfn(js, cell) } {
    Ok(tsfn) => tsfn,
    Err(failure) => {
      // SAFETY: cell came from Box::into_raw above and nothing else has it.
      drop(unsafe { Box::from_raw(cell) });
      return Err(failure);
    }
  };
  // SAFETY: cell is live, and nothing else uses it yet (instance data and
  // the hook come below; the TSFN is not called before a waiter exists).
  let cell_ref = unsafe { &*cell };
  cell_ref.with(|state| {
    state.tsfn = tsfn;
    state.shared = Arc::new(EnvShared::new(Tsfn(tsfn)));
    Ok(())
  })?;
  // The hook is registered after the TSFN exists, so it runs before
  // N-API's own teardown of it (hooks run in reverse order).
  // SAFETY: env on its thread; the cell pointer is freed only by the hook.
  check(unsafe { sys::napi_set_instance_data(env, cell.cast(), None, ptr::null_mut()) })?;
  // SAFETY: as above.
  check(unsafe { sys::napi_add_env_cleanup_hook(env, Some(cleanup), cell.cast()) })?;
  Ok(())
}

/// This env's state, as it sits in the env's instance data and the TSFN's
/// context. Only the env's own thread touches it, and only through
/// [`with_state`] / [`EnvCell::with`]: one `&mut EnvState` at a time, for
/// the length of a closure that cannot keep it. JavaScript may re-enter
/// the binding from any N-API call that runs it (creating or resolving a
/// promise runs promise hooks; calling lib/pending.js's `settle` runs
/// anything), so those calls are made between borrows, never inside one;
/// should one ever be made inside, the re-entrant call gets an error, not
/// a second `&mut`.
pub struct EnvCell(RefCell<EnvState>);

impl EnvCell {
  /// Runs `f` with this env's state borrowed; an error if it already is
  /// (a call that re-entered the binding from inside a borrow).
  pub fn with<T>(&self, f: impl FnOnce(&mut EnvState) -> NResult<T>) -> NResult<T> {
    let Ok(mut state) = self.0.try_borrow_mut() else {
      return Err(Failure::Error(
        "atomics-waitasync: re-entered while its state is in use".into(),
      ));
    };
    f(&mut state)
  }
}

/// Runs `f` with the state of the env `js` is for (see [`EnvCell`]).
pub fn with_state<T>(js: Js, f: impl FnOnce(&mut EnvState) -> NResult<T>) -> NResult<T> {
  with_env(js, |cell| cell.with(f))
}

/// The registry of what the env `js` is for holds (`held`), for a call
/// that registers or claims something there.
pub fn held(js: Js) -> NResult<Registry> {
  with_state(js, |state| Ok(state.held.clone()))
}

/// Runs `f` with the cell of the env `js` is for, for a call that borrows
/// the state more than once, with JS running in between (see [`EnvCell`]).
pub fn with_env<T>(js: Js, f: impl FnOnce(&EnvCell) -> NResult<T>) -> NResult<T> {
  let mut data: *mut c_void = ptr::null_mut();
  // SAFETY: live env on its thread (Js); data is a live local.
  check(unsafe { sys::napi_get_instance_data(js.raw(), &mut data) })?;
  if data.is_null() {
    return Err(Failure::Error(
      "atomics-waitasync: this environment is shutting down".into(),
    ));
  }
  // SAFETY: instance data is our EnvCell (set in init) until the cleanup
  // hook clears it, and the hook does not run while a call from JS (this
  // one) is under way; the shared reference does not outlive this call.
  let cell = unsafe { &*data.cast::<EnvCell>() };
  f(cell)
}

/// Env cleanup hook (worker exit or terminate, env teardown): drops every
/// waiter of this env from the registry without settling it, so that later
/// notifies neither count nor touch them, then frees the state.
///
/// # Safety
/// Called by N-API once, on the env's thread, with the pointer from `init`.
unsafe extern "C" fn cleanup(arg: *mut c_void) {
  let cell = arg.cast::<EnvCell>();
  let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    // SAFETY: arg is the Box<EnvCell> from init, freed only here; N-API
    // runs cleanup hooks when no call from JS is under way, so nothing
    // borrows it.
    let cell = unsafe { Box::from_raw(cell) };
    let state = cell.0.into_inner();
    // SAFETY: cleanup hooks run on the env's thread while it is still live.
    let js = unsafe { Js::new(state.env) };
    // SAFETY: as above; clearing our own instance data, so that a late
    // call from JS finds no state instead of a freed one.
    let _ =
      unsafe { sys::napi_set_instance_data(js.raw(), ptr::null_mut(), None, ptr::null_mut()) };
    teardown(js, state);
  }));
  if let Err(payload) = outcome {
    std::mem::forget(payload); // its Drop could panic, outside the catch
  }
}

fn teardown(js: Js, mut state: EnvState) {
  // Close first: from here on no thread calls the TSFN, and a notify that
  // takes one of this env's waiters passes the wake-up on (mod.rs deliver).
  let undelivered = close(&state.shared);
  let tsfn = state.tsfn;
  // SAFETY: the TSFN is ours and released once; abort makes N-API drop
  // queued calls (our call-js then sees a null env).
  let _ = unsafe {
    sys::napi_release_threadsafe_function(tsfn, sys::ThreadsafeFunctionReleaseMode::abort)
  };
  for pending in state.pending.drain() {
    let _ = core().withdraw(pending.key, pending.id, pending.deadline);
    // A promise in JS goes with the env's heap; a deferred is left to
    // the env's teardown (concluding it needs JS, which may no longer run).
  }
  for (_, held) in state.buffers.drain().chain(state.first_buffer.take()) {
    js.delete_reference(held.reference);
  }
  if let Some((_, idle)) = state.idle_buffer.take() {
    js.delete_reference(idle);
  }
  if let Some((array, _)) = state.last_array.take() {
    js.delete_reference(array);
  }
  if let Some(settler) = state.settler.take() {
    js.delete_reference(settler.function);
    js.delete_reference(settler.outcomes);
  }
  // Wake-ups a notify counted that this thread's JS never saw: delivered
  // but not settled; a sync waiter a notify took before its wait returned;
  // a sync wait that returned "ok" but was terminated at its interrupt
  // point. They go to the next waiters (this env's own are gone by now).
  // One more try if the core panicked: a waiter left queued with nobody
  // parked would take a later notify's wake-up.
  if state.abandon_sync_wait().is_err() {
    let _ = state.abandon_sync_wait();
  }
  // What this thread still holds, after its own sync wait has left its
  // queue (the teardown's wake-up must not go to it). The memory is held
  // by the registry's own references (`held::Held`).
  held::release_all(js, &state.held);
  let mut unseen: Vec<usize> = undelivered.iter().filter_map(Woken::unseen_key).collect();
  unseen.append(&mut state.unpassed);
  pass_on(unseen);
}

/// Closes the env's mailbox for good ([`CoreApi::close`](crate::core::CoreApi::close))
/// and returns what it held. An unfinished close cannot be recovered from:
/// the mailbox may still be open, so other threads may still call the TSFN
/// the caller is about to release (a use-after-free), and the wake-ups
/// they deliver would be lost. So if the core panics, it tries once more,
/// and then aborts the process (as a panic unwinding across copies of the
/// package did before `CoreApi` caught them).
fn close(shared: &EnvShared) -> Vec<Woken> {
  for _ in 0..2 {
    if let Ok(undelivered) = core().close(shared) {
      return undelivered;
    }
  }
  use std::io::Write;
  let _ = writeln!(
    std::io::stderr(),
    "atomics-waitasync: closing an environment's mailbox panicked twice; aborting"
  );
  std::process::abort();
}
