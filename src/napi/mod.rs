//! The N-API surface: `wait`, `waitAsync`, `notify` and their helpers, as
//! raw callbacks (a `#[napi]` function costs ~100 ns of argument conversion,
//! more than the rest of a notify).
//!
//! index.js calls these with the caller's own arguments when they are
//! primitives of the right types (coercing a primitive has no side effects,
//! so nothing can be observed twice), or else with what its spec-exact slow
//! path has validated and coerced. Either way they accept only: a waitable
//! typed array over a SharedArrayBuffer, an integral index in range, a
//! Number value for an Int32Array or a BigInt for a BigInt64Array, and a
//! Number timeout or count; anything else throws, and index.js then takes
//! its slow path, which throws the spec's error. What they do with accepted
//! arguments is the spec's coercion: ToInt32 or ToBigInt64 of the value,
//! NaN timeout → +∞, negative → 0, count truncated and clamped at 0.
//!
//! Outcomes cross to JS as small integers (see `code`); index.js turns them
//! into the spec's strings and result objects. A queued `waitAsync` returns
//! `-1 - slot`: lib/pending.js makes its promise and keeps it in that slot
//! until `settle` is called with its outcome.

// Who calls whom, bottom to top; each module uses only those below it:
//
//   ffi       raw N-API, made safe for one callback; `Tsfn`
//   memory    typed-array elements as addresses (ffi)
//   shared    the process's waiter core, and a word's robust wake-up (ffi)
//   locks     an AsyncLock's word: release, owner, teardown (ffi, memory, shared)
//   stakes    the stake of a Semaphore, RwLock, Barrier, Latch, Condition (ffi, memory)
//   held      the one teardown registry, of every kind (ffi, memory, shared, locks, stakes)
//   env       per-env state and its cleanup hook, which calls held (ffi, memory, shared, held)
//   diag      who holds and waits: the binding's side of crate::diag (ffi, memory, shared, held, env)
//   resolver  settling pending promises on the env's thread (ffi, shared, env)
//   mod.rs    the callbacks JS calls, and module init (all of them)
mod diag;
mod env;
mod ffi;
mod held;
mod locks;
mod memory;
mod resolver;
mod shared;
mod stakes;

use std::cell::Cell;
use std::ptr::NonNull;
use std::time::Duration;

use napi::bindgen_prelude::{Env, JsValue, Object};
use napi::sys;
use napi_derive::napi;

use self::diag::{
  flags as diag_flags, key as diag_key, page as diag_page, snapshot as diag_snapshot,
  took as diag_took, wait as diag_wait, wait_end as diag_wait_end,
};
use self::env::{Pending, Promise, Settler};
use self::ffi::{entry, Callback, Failure, Js, NResult};
use self::locks::release_lock;
use self::memory::{expected, holds, locate, Location};
use self::shared::{core, Core, Waiter};
use crate::core::Slice;
use crate::registry::Enqueued;

/// Results as they cross to JS; index.js maps them to the spec's strings.
mod code {
  pub const OK: f64 = 0.0;
  pub const NOT_EQUAL: f64 = 1.0;
  pub const TIMED_OUT: f64 = 2.0;
  /// Sync wait: the slice ended, call `waitContinue()`.
  pub const PENDING: f64 = 3.0;
  /// Sync wait: woken ("ok"), but this env is stopping (its worker's
  /// `terminate()` was called): JS stops at its interrupt point before the
  /// caller sees "ok", and the teardown passes the wake-up on.
  pub const OK_STOPPING: f64 = 4.0;
}

/// A sync wait blocks in slices this long, returning to JS between them so
/// that `worker.terminate()` can interrupt it (a condvar wait is not
/// interruptible). 10 ms measured ~3 ms terminate latency; 50 ms, 29-48 ms.
const SYNC_SLICE: Duration = Duration::from_millis(10);

/// The largest slot a pending `waitAsync` may have (see `wait_async`).
const MAX_SLOT: u32 = (1 << 31) - 1;

/// DoWait step 9: ToNumber(timeout) has been done; NaN → +∞, negative → 0.
fn timeout_ms(js: Js, timeout: sys::napi_value) -> NResult<f64> {
  let t = js.f64(timeout)?;
  Ok(if t.is_nan() {
    f64::INFINITY
  } else {
    t.max(0.0)
  })
}

/// A notify's `count`, a Number >= 0 (+Infinity for all), as a `usize`.
fn count_arg(js: Js, count: sys::napi_value) -> NResult<usize> {
  let count = js.f64(count)?;
  Ok(if count >= usize::MAX as f64 {
    usize::MAX
  } else {
    count.max(0.0) as usize
  })
}

/// `waitAsync(typedArray, index, value, timeoutMs)` → `-1 - slot` for a
/// queued waiter (lib/pending.js makes its promise), or `code::NOT_EQUAL` /
/// `code::TIMED_OUT` for the synchronous results.
fn wait_async(
  js: Js,
  [array, index, value, timeout]: [sys::napi_value; 4],
) -> NResult<sys::napi_value> {
  let index = js.f64(index)?;
  env::with_env(js, |cell| {
    let location = locate_cached(js, cell, array, index)?;
    let want = expected(js, &location, value)?;
    let timeout_ms = timeout_ms(js, timeout)?;
    // SAFETY: `array`, a JS argument of this call, roots the buffer.
    let still_expected = || unsafe { holds(&location, want) };
    // ECMA-262 DoWait 19-21, in the critical section: unequal → "not-equal";
    // an immediate timeout enqueues nothing. Reading first, outside the lock,
    // gives the same observable result and spares a promise.
    if !still_expected() {
      return js.number(code::NOT_EQUAL);
    }
    if timeout_ms == 0.0 {
      return js.number(code::TIMED_OUT);
    }
    // The notifier starts here, before any lock, if this is the first
    // deadline.
    let core = core();
    let deadline = core.async_deadline(timeout_ms)?.map_err(Failure::Error)?;
    // The promise: made here as a deferred, or by lib/pending.js once this
    // returns the slot (see `env::Promise`). Making it runs promise hooks,
    // which may call back in: the state is not borrowed meanwhile.
    let in_js = cell.with(|state| Ok(state.settler.is_some()))?;
    let made = if in_js {
      None
    } else {
      let (deferred, promise) = js.create_promise()?;
      let Some(deferred) = NonNull::new(deferred) else {
        return Err(Failure::Error("atomics-waitasync: no deferred".into()));
      };
      Some((deferred, promise))
    };
    let mut conclude = None;
    let queued = cell.with(|state| {
      let promise = match made {
        Some((deferred, _)) => {
          // (The buffer object is needed only to make a reference.)
          let buffer = || match location.buffer {
            Some(buffer) => Ok(buffer),
            None => Ok(js.typedarray_info(array)?.buffer),
          };
          if let Err(failure) = state.hold_buffer(js, location.buffer_base, buffer) {
            conclude = Some(deferred);
            return Err(failure);
          }
          let buffer = location.buffer_base;
          Promise::Deferred { deferred, buffer }
        }
        None => Promise::InJs,
      };
      let waiter = (location.key, deadline, promise);
      enqueue_async(js, core, state, waiter, still_expected, &mut conclude)
    });
    if let Some(deferred) = conclude {
      conclude_deferred(js, deferred);
    }
    match (queued?, made) {
      (None, _) => js.number(code::NOT_EQUAL),
      (Some(_), Some((_, promise))) => Ok(promise),
      (Some(slot), None) => js.number(-1.0 - f64::from(slot)),
    }
  })
}

/// [`locate`] for `waitAsync` and `wait`: through the env's `last_array` when `array`
/// is that array (see `EnvState::last_array`), then without its buffer
/// object; else through N-API, and the array may become `last_array`.
fn locate_cached(
  js: Js,
  cell: &env::EnvCell,
  array: sys::napi_value,
  index: f64,
) -> NResult<Location> {
  // (A hit also ends a run of misses: see `EnvState::missed_array`.)
  let (last, missed) = cell.with(|state| Ok((state.last_array, state.take_missed_array())))?;
  if let Some((reference, described)) = last {
    // (Gone: the array was collected, so `array` is another.) An index
    // beyond the length it had then: it may have grown since.
    if described.covers(index) {
      if let Ok(last) = js.reference_value(reference) {
        if matches!(js.strict_equals(last, array), Ok(true)) {
          return described.locate(index);
        }
      }
    }
  }
  let (described, buffer) = memory::inspect(js, array)?;
  let mut location = described.locate(index)?;
  location.buffer = Some(buffer);
  cell.with(|state| {
    state.missed_array(js, array, described, missed);
    Ok(())
  })?;
  Ok(location)
}

/// DoWait 22-28 for `waitAsync`: records the waiter in the env's slab and
/// queues it, if the value still holds; its slot, or `None` for
/// "not-equal". A deferred that must be concluded (a failure, or the value
/// changed) is left in `conclude`, for after the state is released.
fn enqueue_async(
  js: Js,
  core: &'static Core,
  state: &mut env::EnvState,
  (key, deadline, promise): (usize, Option<crate::core::AsyncDeadline>, Promise),
  mut still_expected: impl FnMut() -> bool,
  conclude: &mut Option<NonNull<sys::napi_deferred__>>,
) -> NResult<Option<u32>> {
  let slot = state.pending.insert(Pending {
    id: 0,
    key,
    deadline: deadline.map(crate::core::AsyncDeadline::when),
    promise,
  });
  if slot > MAX_SLOT {
    // lib/pending.js reads outcomes as `slot << 1 | timed_out` in a u32.
    // (2^31 pending waiters would take hundreds of GB first.)
    *conclude = discard(js, state, slot);
    return Err(Failure::Range(
      "atomics-waitasync: too many pending waits".into(),
    ));
  }
  // Enqueue at the tail, under the bucket lock, if the value still holds.
  let enqueued = core.enqueue_async(key, deadline, &mut still_expected, &state.shared, slot);
  match enqueued {
    Err(panicked) => {
      // Nothing was queued for the slot: free it, or it would keep the env
      // alive (and its buffer held) for good.
      *conclude = discard(js, state, slot);
      return Err(panicked.into());
    }
    Ok(Enqueued::Queued(id)) => {
      if let Some(pending) = state.pending.get_mut(slot) {
        pending.id = id;
      }
      state.last_queued = (slot, id);
    }
    Ok(Enqueued::NotEqual) => {
      // The value changed between the two reads.
      *conclude = discard(js, state, slot);
      return Ok(None);
    }
  }
  state.update_keep_alive();
  Ok(Some(slot))
}

/// Frees `slot`, which holds a waiter no promise was handed out for (or one
/// taken back), and its buffer; returns its deferred, if it has one, which
/// the caller concludes ([`conclude_deferred`]) once the state is released.
fn discard(js: Js, state: &mut env::EnvState, slot: u32) -> Option<NonNull<sys::napi_deferred__>> {
  let pending = state.pending.take(slot)?;
  match pending.promise {
    Promise::Deferred { deferred, buffer } => {
      state.release_buffer(js, buffer);
      Some(deferred)
    }
    Promise::InJs => None,
  }
}

/// Resolves a deferred nobody holds the promise of, so that it is freed.
/// Runs promise hooks: call it with the env state not borrowed.
fn conclude_deferred(js: Js, deferred: NonNull<sys::napi_deferred__>) {
  if let Ok(undefined) = js.undefined() {
    let _ = js.resolve(deferred.as_ptr(), undefined);
  }
}

/// `cancel(slot[, id])` → whether it took the waiter back.
///
/// Without `id` (lib/pending.js, when it could not make the promise): takes
/// the queued `waitAsync` in `slot` back. One a notify took first is
/// already counted: its outcome is on its way, and its wake-up goes on to
/// the next waiter when it arrives (see `EnvState::cancelled`).
///
/// With `id` (from `lastQueued`; lib/atomics.js, when the signal of a
/// cancellable wait aborts): only if the waiter in `slot` is still that one
/// (a slot is reused once its waiter has settled), and only if it is still
/// queued: one a notify or its timeout took first keeps its outcome, which
/// settles its promise as usual.
///
/// A waiter whose chunk is being settled (`EnvState::settling`) is left
/// alone. A deferred taken back resolves with `undefined`.
fn cancel(js: Js, [slot, id]: [sys::napi_value; 2]) -> NResult<sys::napi_value> {
  let slot = js.f64(slot)?;
  if !(0.0..=f64::from(u32::MAX)).contains(&slot) || slot.fract() != 0.0 {
    return Err(Failure::Range(format!("slot {slot} is out of range")));
  }
  let slot = slot as u32;
  let only = if js.is_number(id)? {
    Some(js.f64(id)?)
  } else {
    None
  };
  let (taken, conclude) = env::with_state(js, |state| {
    let mut conclude = None;
    let mut taken = false;
    if let Some(pending) = state.pending.get_mut(slot) {
      let (key, id, deadline) = (pending.key, pending.id, pending.deadline);
      if only.is_some_and(|only| only != id as f64) {
        // Another waiter, in a slot reused since.
        return Ok((false, None));
      }
      if state.settling.contains(&id) {
        // Woken, and being settled right now (from a promise hook, say):
        // no longer ours to take back; its promise settles as it is.
        return Ok((false, None));
      }
      if only.is_some() {
        if !core().withdraw(key, id, deadline)? {
          return Ok((false, None)); // woken or timed out: its outcome is on its way
        }
      } else {
        core().take_back(&mut state.cancelled, key, id, deadline)?;
      }
      conclude = discard(js, state, slot);
      taken = true;
    }
    state.update_keep_alive();
    Ok((taken, conclude))
  })?;
  if let Some(deferred) = conclude {
    conclude_deferred(js, deferred);
  }
  js.boolean(taken)
}

/// `lastQueued()` → `[slot, id]` of the last `waitAsync` this env queued,
/// for a later `cancel(slot, id)`: its deferred's promise came back alone.
fn last_queued(js: Js, []: [sys::napi_value; 0]) -> NResult<sys::napi_value> {
  let (slot, id) = env::with_state(js, |state| Ok(state.last_queued))?;
  js.numbers(&[f64::from(slot), id as f64])
}

/// `setSettler(settle, outcomes)`: lib/pending.js's `settle(n)` and the
/// Uint32Array it reads outcomes from. Once per env: a second JS side
/// would strand the first one's promises.
fn set_settler(js: Js, [function, outcomes]: [sys::napi_value; 2]) -> NResult<sys::napi_value> {
  let already = || {
    Failure::Error("atomics-waitasync: setSettler was already called in this environment".into())
  };
  if env::with_state(js, |state| Ok(state.settler.is_some()))? {
    return Err(already());
  }
  if !js.is_function(function)? {
    return Err(Failure::Type("settle must be a function".into()));
  }
  let length = js.with_u32_elements(outcomes, |elements| elements.len())?;
  if length < resolver::SCOPE_CHUNK {
    return Err(Failure::Range(format!(
      "outcomes must hold at least {} elements",
      resolver::SCOPE_CHUNK
    )));
  }
  let function = js.create_reference(function)?;
  let outcomes = match js.create_reference(outcomes) {
    Ok(reference) => reference,
    Err(failure) => {
      js.delete_reference(function);
      return Err(failure);
    }
  };
  let set = env::with_state(js, |state| {
    if state.settler.is_some() {
      return Err(already());
    }
    state.settler = Some(Settler { function, outcomes });
    Ok(())
  });
  if let Err(failure) = set {
    js.delete_reference(function);
    js.delete_reference(outcomes);
    return Err(failure);
  }
  js.undefined()
}

/// `notify(typedArray, index, count)` → how many waiters it woke.
/// `count` is a Number >= 0 (+Infinity for all).
fn notify(js: Js, [array, index, count]: [sys::napi_value; 3]) -> NResult<sys::napi_value> {
  let location = locate(js, array, js.f64(index)?)?;
  let count = count_arg(js, count)?;
  let n = core().notify(location.key, count)?;
  js.number(n as f64)
}

/// `lockOwner(threadId)` → this env's AsyncLock owner (`crate::robust`):
/// the thread's worker_threads `threadId` + 1, claimed in the core on the
/// first call (see `CoreApi::claim_owner`), the same number after.
fn lock_owner(js: Js, [thread_id]: [sys::napi_value; 1]) -> NResult<sys::napi_value> {
  let owner = locks::owner_of_thread(js, thread_id)?;
  let owner = held::claim_owner(&env::held(js)?, owner)?;
  js.number(f64::from(owner))
}

/// `lockWatch(i32a, index, lock, label?, name?, threadId?)`: the
/// AsyncLock `lock` of this env uses the word `i32a[index]`: should the env
/// end while it holds it, its teardown frees it (see `held`). With
/// `label`, it shows in snapshots too (`diag::shown`).
fn lock_watch(js: Js, args: [sys::napi_value; 6]) -> NResult<sys::napi_value> {
  let [array, index, lock, label, name, thread] = args;
  let word = locks::word_to_watch(js, [array, index, lock])?;
  let shown = diag::shown(js, array, js.f64(index)?, [label, name, thread])?;
  held::watch_word(js, &env::held(js)?, &word, lock, shown)?;
  js.undefined()
}

/// `stakeWatch(i32a, index, kind, stake, instance, label?, name?,
/// threadId?)`: `instance`, of this env, keeps its stake of the primitive
/// whose word is `i32a[index]`: should the env end while the stake holds
/// something, its teardown gives it back (see `stakes`, `held`). With
/// `label`, it shows in snapshots too (`diag::shown`).
fn stake_watch(js: Js, args: [sys::napi_value; 8]) -> NResult<sys::napi_value> {
  let [array, index, kind, cell, instance, label, name, thread] = args;
  let (stake, buffers) = stakes::stake_to_watch(js, [array, index, kind, cell, instance])?;
  let shown = diag::shown(js, array, js.f64(index)?, [label, name, thread])?;
  held::watch_stake(js, &env::held(js)?, stake, buffers, instance, shown)?;
  js.undefined()
}

thread_local! {
  /// Whether this thread's `takeNotifyCounts` has handed the kit over (see
  /// there). Per thread and per copy of the binary (each copy has its own
  /// thread-locals): a fresh instance of this binary in the same thread
  /// (`delete require.cache`, `process.dlopen`) finds it taken too.
  static FAST_NOTIFY_TAKEN: Cell<bool> = const { Cell::new(false) };
}

/// `takeNotifyCounts()` → `{ counts, addressOf, notifyAt, notifyOneAt }` the first time
/// in this thread, `undefined` ever after: what lib/atomics.js's notify
/// needs to return 0 without a native call when nobody may be waiting,
/// and to notify by address when someone may.
///
/// Handed over once, never left on the binding object, because both are
/// dangerous in other hands: zeroing the counts makes every notify in the
/// process skip its waiters, and `notifyAt` wakes whatever element an
/// address names, one the caller has no reference to included. The first
/// taker is the package's own lib/atomics.js, which loads right after the
/// binding; anything that asks later gets nothing. A later copy of
/// lib/atomics.js in the same thread (a second module registry) gets
/// nothing too, and notifies through the plain `notify`: correct, slower.
/// Also `undefined` where the runtime forbids external buffers.
///
/// The name says the layout: 2^23 one-byte counts (`MAY_WAIT_SLOTS`,
/// `registry::may_wait_slot`). A binary with another layout must not be
/// read with this one's formula, or notifies skip their waiters; so it
/// gets another name (the 16,384-word layout was `takeFastNotify`), and a
/// JS that does not know it takes the plain `notify`.
fn take_notify_counts(js: Js, []: [sys::napi_value; 0]) -> NResult<sys::napi_value> {
  if FAST_NOTIFY_TAKEN.with(|taken| taken.replace(true)) {
    return js.undefined();
  }
  let (counts, len) = core().may_wait_counts()?;
  // SAFETY: the counts live as long as the core, which is 'static (its
  // owner copy is pinned, never unloaded) and never moves; JS only reads
  // and writes them atomically.
  let Ok(buffer) = (unsafe { js.static_arraybuffer(counts.cast_mut().cast(), len) }) else {
    return js.undefined();
  };
  let kit = js.object()?;
  js.define_value(kit, "counts", buffer)?;
  js.define_functions(
    kit,
    &[
      ("addressOf", js_address_of),
      ("notifyAt", js_notify_at),
      ("notifyOneAt", js_notify_one_at),
    ],
  )?;
  Ok(kit)
}

/// `addressOf(typedArray)` (from [`take_notify_counts`]) → the address of its
/// element 0 (exact: below 2^53): what lib/atomics.js needs to find an
/// element's "may be waiting" count (`Registry::may_wait`, `may_wait_slot`,
/// from its low 32 bits) and to call `notifyAt`. Throws, as `notify` does,
/// for an array it would not take.
fn address_of(js: Js, [array]: [sys::napi_value; 1]) -> NResult<sys::napi_value> {
  let location = locate(js, array, 0.0)?;
  let address = location.key as u64;
  if address >= 1 << 53 {
    return Err(Failure::Range(
      "atomics-waitasync: address beyond 2^53".into(),
    ));
  }
  js.number(address as f64)
}

/// `notifyAt(address, count)` (from [`take_notify_counts`]): `notify` by the
/// element's address, which lib/atomics.js computed from `addressOf` for an
/// array and index it has validated, without the typed-array look-up. The
/// address is only a registry key, never read through; it wakes whatever
/// waits there, which is why only lib/atomics.js may have this function.
fn notify_at(js: Js, [address, count]: [sys::napi_value; 2]) -> NResult<sys::napi_value> {
  let address = address_arg(js, address)?;
  let count = count_arg(js, count)?;
  let n = core().notify(address, count)?;
  js.number(n as f64)
}

/// `notifyOneAt(address)` (from [`take_notify_counts`]): `notifyAt(address,
/// 1)` with one argument fewer to read (~40 instructions of a notify's
/// ~2,500 in a fresh worker): a notify of one, a lock's release or a
/// job's, is the common one.
fn notify_one_at(js: Js, [address]: [sys::napi_value; 1]) -> NResult<sys::napi_value> {
  let address = address_arg(js, address)?;
  let n = core().notify(address, 1)?;
  js.number(n as f64)
}

/// The address argument of `notifyAt` and `notifyOneAt`: an integer below
/// 2^53, else a RangeError.
fn address_arg(js: Js, address: sys::napi_value) -> NResult<usize> {
  let address = js.f64(address)?;
  if !(0.0..9_007_199_254_740_992.0).contains(&address) || address.fract() != 0.0 {
    return Err(Failure::Range(format!("address {address} is out of range")));
  }
  Ok(address as usize)
}

/// `wait(typedArray, index, value, timeoutMs)` → `code::*`. Blocks for at
/// most one slice; `code::PENDING` means "call `waitContinue()`". The
/// array is found through the env's `last_array`, as for `waitAsync`:
/// ~200 of ~1,400 instructions per call on a thread that waits on one
/// array (benchmark/instructions/wait-not-equal.js).
fn wait(js: Js, [array, index, value, timeout]: [sys::napi_value; 4]) -> NResult<sys::napi_value> {
  let index = js.f64(index)?;
  let code = env::with_env(js, |cell| {
    let location = locate_cached(js, cell, array, index)?;
    let want = expected(js, &location, value)?;
    let timeout_ms = timeout_ms(js, timeout)?;
    let core = core();
    cell.with(|state| {
      // Only if a previous wait's JS loop was abandoned and `waitAbandon`
      // could not say so, or could not finish (the core panicked).
      state.abandon_sync_wait()?;
      // SAFETY: `array`, a JS argument of this call, roots the buffer.
      let mut still_expected = || unsafe { holds(&location, want) };
      let enqueued =
        core.enqueue_sync(location.key, timeout_ms, &mut still_expected, &state.parker);
      let Some(sync) = enqueued.inspect_err(|_| state.retire_parker())? else {
        return Ok(code::NOT_EQUAL);
      };
      state.sync_wait = Some(sync);
      park_slice(js, core, state)
    })
  })?;
  js.number(code)
}

/// `waitContinue()` → `code::*`: the next slice of this thread's sync wait.
fn wait_continue(js: Js, []: [sys::napi_value; 0]) -> NResult<sys::napi_value> {
  let code = env::with_state(js, |state| {
    if state.sync_wait.is_none() {
      return Err(Failure::Error(
        "atomics-waitasync: no wait in progress".into(),
      ));
    }
    park_slice(js, core(), state)
  })?;
  js.number(code)
}

/// Parks for one slice of the current sync wait and says how it stands.
/// (If the core panics, the wait stays in `state`, for `waitAbandon`, the
/// next wait or the env's teardown to end; and the next wait gets a new
/// parker: see `EnvState::retire_parker`.)
///
/// A woken wait whose env is already stopping says so (`OK_STOPPING`),
/// its wake-up still unconfirmed: a notify that came after `terminate()`
/// must not end in a dying thread's "ok". Asked here, in the call that
/// woke, with a cheap N-API check, so that JS need not run the engine's
/// interrupt point after every wake-up to find out.
fn park_slice(js: Js, core: &'static Core, state: &mut env::EnvState) -> NResult<f64> {
  let slice = core.wait_slice(&mut state.sync_wait, SYNC_SLICE);
  Ok(match slice.inspect_err(|_| state.retire_parker())? {
    None => code::OK,
    Some(Slice::Woken { key }) => {
      if state.woken.woken(key, || js.can_run_js()) {
        code::OK
      } else {
        code::OK_STOPPING
      }
    }
    Some(Slice::TimedOut) => code::TIMED_OUT,
    Some(Slice::Pending) => code::PENDING,
  })
}

/// `waitDone()`: JS confirms that the sync wait that just returned "ok"
/// got past the binding's stop check (or the interrupt point), so its
/// wake-up reached the caller (see
/// `sync_wait::WokenMark`). Only where there is no `waitSeen` buffer.
fn wait_done(js: Js, []: [sys::napi_value; 0]) -> NResult<sys::napi_value> {
  env::with_state(js, |state| {
    state.woken.confirm();
    Ok(())
  })?;
  js.undefined()
}

/// `waitAbandon()`: the JS loop of this thread's sync wait ended with an
/// exception, so its caller sees neither "ok" nor "timed-out": the waiter
/// leaves its queue, and a wake-up it already got goes on to the next
/// waiter (see `EnvState::abandon_sync_wait`).
fn wait_abandon(js: Js, []: [sys::napi_value; 0]) -> NResult<sys::napi_value> {
  env::with_state(js, |state| Ok(state.abandon_sync_wait()?))?;
  js.undefined()
}

/// `setKeepAlive(bool)`: whether this env's pending waits keep it alive.
fn set_keep_alive(js: Js, [flag]: [sys::napi_value; 1]) -> NResult<sys::napi_value> {
  let flag = js.bool(flag)?;
  env::with_state(js, |state| {
    state.keep_alive = flag;
    state.update_keep_alive();
    Ok(())
  })?;
  js.undefined()
}

/// Test-only counts: `[registry waiters on (array, index) or in all,
/// this env's pending async waiters, deadlines held by the notifier]`.
fn counts_for_testing(js: Js, [array, index]: [sys::napi_value; 2]) -> NResult<sys::napi_value> {
  let pending = env::with_state(js, |state| Ok(state.pending.len()))?;
  let key = if js.is_object(array)? {
    Some(locate(js, array, js.f64(index)?)?.key)
  } else {
    None
  };
  let waiters = core().waiters(key)?;
  let timers = core().deadlines()?;
  let retriers = core().retriers()?;
  js.numbers(&[
    waiters as f64,
    pending as f64,
    timers as f64,
    retriers as f64,
  ])
}

/// Test-only: settling the next chunk of outcomes in this env fails after
/// its waiters left the slab, as when an N-API call fails there (the env is
/// dying, say).
fn fail_settle_for_testing(js: Js, []: [sys::napi_value; 0]) -> NResult<sys::napi_value> {
  env::with_state(js, |state| {
    state.fail_settle_for_testing = true;
    Ok(())
  })?;
  js.undefined()
}

/// Test-only: from now on, starting the notifier thread fails (it starts
/// on the first waitAsync with a finite timeout).
fn fail_notifier_start_for_testing(js: Js, []: [sys::napi_value; 0]) -> NResult<sys::napi_value> {
  core().fail_timer_start_for_testing()?;
  js.undefined()
}

/// Test-only: `panicForTesting()` panics inside this callback, to show that
/// a panic in the addon reaches JS as an Error and never unwinds across the
/// FFI boundary; `panicForTesting(method, times = 1)` makes the next
/// `times` calls of the core's `method` (a `CoreApi` method's name) panic
/// in the core, in the code of the copy of the package that owns it.
fn panic_for_testing(js: Js, [method, times]: [sys::napi_value; 2]) -> NResult<sys::napi_value> {
  let Some(method) = js.string(method)? else {
    panic!("panicForTesting");
  };
  // 1 unless a Number says otherwise.
  let times = js
    .f64(times)
    .map_or(1, |times| times.clamp(0.0, 1e9) as u32);
  core().panic_for_testing(&method, times)?;
  js.undefined()
}

/// Declares the raw N-API callback `$name` that runs `$body` through
/// [`entry`] (argument fetching, panic guard, error throwing).
macro_rules! callbacks {
  ($($name:ident => $body:ident;)*) => {$(
    unsafe extern "C" fn $name(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
      // SAFETY: N-API passes this callback's own env and info.
      unsafe { entry(env, info, $body) }
    }
  )*};
}

callbacks! {
  js_wait_async => wait_async;
  js_wait => wait;
  js_wait_continue => wait_continue;
  js_wait_done => wait_done;
  js_wait_abandon => wait_abandon;
  js_notify => notify;
  js_release_lock => release_lock;
  js_lock_owner => lock_owner;
  js_lock_watch => lock_watch;
  js_stake_watch => stake_watch;
  js_diag_wait => diag_wait;
  js_diag_wait_end => diag_wait_end;
  js_diag_snapshot => diag_snapshot;
  js_diag_flags => diag_flags;
  js_diag_took => diag_took;
  js_diag_page => diag_page;
  js_diag_key => diag_key;
  js_take_notify_counts => take_notify_counts;
  js_address_of => address_of;
  js_notify_at => notify_at;
  js_notify_one_at => notify_one_at;
  js_set_keep_alive => set_keep_alive;
  js_cancel => cancel;
  js_last_queued => last_queued;
  js_set_settler => set_settler;
  js_counts_for_testing => counts_for_testing;
  js_panic_for_testing => panic_for_testing;
  js_fail_settle_for_testing => fail_settle_for_testing;
  js_fail_notifier_start_for_testing => fail_notifier_start_for_testing;
}

/// Per env: creates its state, then the binding's functions.
#[napi(module_exports)]
pub fn init(exports: Object, env: Env) -> napi::Result<()> {
  // SAFETY: module init runs on the env's thread with a live env.
  let js = unsafe { Js::new(env.raw()) };
  if let Err(message) = shared::chosen() {
    // Thrown: this copy does not load (binding.js tries its next binary).
    js.throw_with_code(shared::ABI_MISMATCH, message);
    return Err(napi::Error::new(napi::Status::PendingException, message));
  }
  let to_napi = |failure: Failure| napi::Error::from_reason(format!("{failure:?}"));
  env::init(js, resolver::create_tsfn).map_err(to_napi)?;
  // Read-only, so that code that gets the binding after load cannot
  // replace what a later copy of lib/atomics.js would take from it.
  let functions: [(&str, Callback); 26] = [
    ("takeNotifyCounts", js_take_notify_counts),
    ("waitAsync", js_wait_async),
    ("wait", js_wait),
    ("waitContinue", js_wait_continue),
    ("waitDone", js_wait_done),
    ("waitAbandon", js_wait_abandon),
    ("notify", js_notify),
    ("releaseLock", js_release_lock),
    ("lockOwner", js_lock_owner),
    ("lockWatch", js_lock_watch),
    ("stakeWatch", js_stake_watch),
    ("diagWait", js_diag_wait),
    ("diagWaitEnd", js_diag_wait_end),
    ("diagSnapshot", js_diag_snapshot),
    ("diagFlags", js_diag_flags),
    ("diagTook", js_diag_took),
    ("diagPage", js_diag_page),
    ("diagKey", js_diag_key),
    ("setKeepAlive", js_set_keep_alive),
    ("cancel", js_cancel),
    ("lastQueued", js_last_queued),
    ("setSettler", js_set_settler),
    ("countsForTesting", js_counts_for_testing),
    ("panicForTesting", js_panic_for_testing),
    ("failSettleForTesting", js_fail_settle_for_testing),
    (
      "failNotifierStartForTesting",
      js_fail_notifier_start_for_testing,
    ),
  ];
  js.define_functions(exports.raw(), &functions)
    .map_err(to_napi)?;
  // This env's "the woken outcome reached JS" word
  // (`crate::sync_wait::WokenMark`), read-only like the functions. Left
  // out where external buffers are not allowed: JS then calls `waitDone`.
  let word = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
  if let Ok(buffer) = js.word_arraybuffer(&word) {
    env::with_state(js, |state| {
      state.woken.set_word(word);
      Ok(())
    })
    .map_err(to_napi)?;
    js.define_value(exports.raw(), "waitSeen", buffer)
      .map_err(to_napi)?;
  }
  // A woken sync wait asks N-API whether its env is stopping and says so
  // (`code::OK_STOPPING`): lib/atomics.js may then skip the engine's
  // interrupt point after an OK (on Node; see `Js::can_run_js`).
  let yes = js.boolean(true).map_err(to_napi)?;
  js.define_value(exports.raw(), "waitSeesStop", yes)
    .map_err(to_napi)?;
  Ok(())
}

// Every pending async waiter has one `Waiter` in the registry (next to its
// id) and one `Pending` in its env's slab: their size is most of what a
// waiter costs outside the JS heap. (Checked at build time: this module is
// not compiled for `cargo test`.)
const _: () = assert!(std::mem::size_of::<Waiter>() <= 24);
const _: () = assert!(std::mem::size_of::<Pending>() <= 40);
