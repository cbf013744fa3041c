//! Settling async waiters on their own env's thread.
//!
//! Each env has one raw ThreadsafeFunction with no JS function: its call-js
//! callback ([`settle`]) drains the env's mailbox and settles every waiter in
//! it: resolves its N-API deferred, or hands its outcome to lib/pending.js,
//! which resolves the promise it keeps (one JS call per 256 waiters). Any thread that takes async waiters out of the
//! registry (a notify, the notifier thread) puts them in their env's mailbox;
//! only the transition from empty to non-empty calls the TSFN, so every
//! waiter woken before the env's thread gets round to it is settled in one
//! call (v8 likewise keeps a per-isolate resolve list and posts one task).
//!
//! The mailbox is the wake-up core's (`crate::wake::Mailbox`), with the
//! TSFN as its signal. Its mutex also guards the TSFN's life: the env
//! cleanup hook closes the mailbox under it before releasing the TSFN, and
//! the mailbox only signals under it while open, so no thread ever calls a
//! released TSFN. A call that fails (`closing` during teardown, say)
//! queues nothing: the mailbox takes the batch back and the notify passes
//! its wake-ups on.

use std::ffi::c_void;
use std::ptr;

use napi::sys;

use smallvec::SmallVec;

use super::env::{EnvCell, EnvState, Pending, Promise};
use super::ffi::{check, Failure, Js, NResult};
use super::shared::{core, pass_on};
use crate::wake::{Settled, Woken};

/// Creates the env's TSFN, unref'd: it is ref'd only while the env has
/// pending async waiters (see `EnvState::update_keep_alive`).
///
/// # Safety
/// `state` points to the env's state, which outlives every call of
/// [`settle`] with a non-null env (it is freed by the cleanup hook, after
/// the TSFN is aborted).
pub unsafe fn create_tsfn(js: Js, state: *mut EnvCell) -> NResult<sys::napi_threadsafe_function> {
  let name = js.latin1("atomics-waitasync")?;
  let mut tsfn = ptr::null_mut();
  // SAFETY: live env on its thread; no JS function is given, so call_js_cb
  // is required and given; context is the env state, valid as stated
  // above; tsfn is a live local.
  check(unsafe {
    sys::napi_create_threadsafe_function(
      js.raw(),
      ptr::null_mut(),
      ptr::null_mut(),
      name,
      0,
      1,
      ptr::null_mut(),
      None,
      state.cast(),
      Some(settle),
      &mut tsfn,
    )
  })?;
  // SAFETY: tsfn was just created on this env's thread.
  check(unsafe { sys::napi_unref_threadsafe_function(js.raw(), tsfn) })?;
  Ok(tsfn)
}

/// The TSFN's call-js: settles every waiter in the env's mailbox.
///
/// # Safety
/// Called by N-API. A null `env` means the TSFN is being torn down: then
/// `context` may already be freed and is not touched.
unsafe extern "C" fn settle(
  env: sys::napi_env,
  _js_callback: sys::napi_value,
  context: *mut c_void,
  _data: *mut c_void,
) {
  if env.is_null() || context.is_null() {
    return;
  }
  // A panic must not unwind into N-API; there is nothing to report it to here.
  let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    // SAFETY: with a non-null env the cleanup hook has not run (it aborts
    // the TSFN first, after which call-js only sees a null env), so the
    // cell is alive; it is only touched on this thread, through
    // `EnvCell::with`, and the shared reference ends with this call.
    let cell = unsafe { &*context.cast::<EnvCell>() };
    // SAFETY: N-API runs call-js on the env's thread with a live env.
    let js = unsafe { Js::new(env) };
    let _ = settle_all(js, cell);
  }));
  if let Err(payload) = outcome {
    std::mem::forget(payload); // its Drop could panic, outside the catch
  }
}

/// Number of waiters settled under one handle scope, and at most in one
/// call to lib/pending.js's `settle`.
pub const SCOPE_CHUNK: usize = 256;

fn settle_all(js: Js, cell: &EnvCell) -> NResult<()> {
  let mut woken = cell.with(|state| {
    let mut woken = std::mem::take(&mut state.spare);
    if let Err(panicked) = core().drain(&state.shared, &mut woken) {
      // The mailbox may still hold everything, and no signal is on its
      // way (it signals only when it goes from empty to not): without
      // one, nothing here would ever settle again. So this thread signals
      // itself, to try again on a later turn.
      state.resignal();
      return Err(panicked.into());
    }
    Ok(woken)
  })?;
  // Wake-ups of cancelled waiters (see `EnvState::cancelled`): empty, so
  // free, unless there are some.
  let mut unseen = Vec::new();
  for (index, chunk) in woken.chunks(SCOPE_CHUNK).enumerate() {
    let mut taken = Unsettled::with_capacity(chunk.len());
    // Where this chunk's ids start in `settling`: JS that spins the event
    // loop from inside a chunk can settle another chunk nested in this one,
    // which must take back only its own ids.
    let mut mark = 0;
    let how = cell.with(|state| {
      mark = state.settling.len();
      for woken in chunk {
        match state.pending.get_mut(woken.slot) {
          Some(pending) if pending.id == woken.id => {
            taken.push(*woken, pending.promise);
            state.settling.push(woken.id);
          }
          _ => {
            if state.cancelled.arrived(woken.id) {
              unseen.extend(woken.unseen_key());
            }
          }
        }
      }
      Ok(HowToSettle {
        settler: state.settler.as_ref().map(|s| (s.function, s.outcomes)),
        fail_for_testing: std::mem::take(&mut state.fail_settle_for_testing),
      })
    });
    // JS runs in here (promise hooks, lib/pending.js), with the state not
    // borrowed, and may call the binding. The chunk's waiters keep their
    // slots until it is done, so a waiter it queues gets a slot of its own
    // (an old outcome must never reach a new waiter in a reused slot); and
    // they are listed in `settling`, so that a `cancel` of one of them
    // leaves it alone (it would conclude a deferred this then resolves
    // again: a use-after-free).
    // An error means the env is dying under us: what is left in `taken`
    // goes on when it is dropped.
    if let Ok(how) = how {
      if index == 0 {
        // The runtime calls call-js inside a handle scope of its own
        // (Node: one per call, in ThreadSafeFunction::DispatchOne; Bun
        // 1.4.5 and Deno 2.9.6 too, measured: 64 extra unscoped objects per
        // call-js over 500,000 calls, main thread and worker, left rss and
        // heapUsed flat), which holds the first chunk's handles until this
        // returns: each napi_resolve_deferred leaves one in it (two on
        // Node 12/14), so a 256-waiter chunk holds ~258 (~514). One of our
        // own cost ~250 of ~8,600 instructions per waitAsync → notify →
        // settle. Later chunks each get one, so a large batch holds at
        // most two chunks' handles at a time.
        let _ = settle_chunk(js, how, &mut taken);
      } else {
        let _ = js.scoped(|| settle_chunk(js, how, &mut taken));
      }
    }
    // Now the slots are free (and so, at least, the counts and keep-alive
    // stay true).
    let _ = cell.with(|state| {
      state.settling.truncate(mark);
      for woken in chunk {
        if let Some(pending) = take_pending(state, woken) {
          if let Promise::Deferred { buffer, .. } = pending.promise {
            state.release_buffer(js, buffer);
          }
        }
      }
      Ok(())
    });
  }
  woken.clear();
  cell.with(|state| {
    state.spare = woken;
    state.update_keep_alive();
    Ok(())
  })?;
  if !unseen.is_empty() {
    pass_on(unseen);
  }
  Ok(())
}

/// What settling a chunk needs from the env's state, taken out of it so
/// that the state is not borrowed while JS runs.
struct HowToSettle {
  /// lib/pending.js's `settle` function and outcomes array, if registered.
  settler: Option<(sys::napi_ref, sys::napi_ref)>,
  /// See `EnvState::fail_settle_for_testing`.
  fail_for_testing: bool,
}

/// Waiters whose promises are not settled yet. Whatever is still in it
/// when it is dropped will never be settled (a failure ended settling
/// early): those waiters' wake-ups go on to the next waiters. So every way
/// out of settling a chunk either settles a waiter or passes its wake-up on.
///
/// Not an inline array of `SCOPE_CHUNK`: that one was ~10 KB, zeroed and
/// moved on every settle, most of the cost of a single `waitAsync` →
/// `notify` → settle (callgrind: ~10,000 of ~20,000 instructions, in
/// memcpy); one waiter inline (a chunk of one, the usual case, allocates
/// nothing), more on the heap.
struct Unsettled {
  waiters: SmallVec<[Option<(Woken, Promise)>; 1]>,
  /// How many of `waiters` are `Some`.
  left: usize,
}

impl Unsettled {
  fn with_capacity(capacity: usize) -> Self {
    Unsettled {
      waiters: SmallVec::with_capacity(capacity.min(SCOPE_CHUNK)),
      left: 0,
    }
  }

  /// Adds a waiter; at most `SCOPE_CHUNK` of them.
  fn push(&mut self, woken: Woken, promise: Promise) {
    if self.waiters.len() < SCOPE_CHUNK {
      self.waiters.push(Some((woken, promise)));
      self.left += 1;
    }
  }

  /// The waiter at `at` is settled.
  fn settled(&mut self, at: usize) {
    if let Some(waiter) = self.waiters.get_mut(at) {
      if waiter.take().is_some() {
        self.left -= 1;
      }
    }
  }
}

impl Drop for Unsettled {
  fn drop(&mut self) {
    if self.left > 0 {
      let unsettled = self.waiters.iter().flatten();
      pass_on(unsettled.filter_map(|(woken, _)| woken.unseen_key()));
    }
  }
}

/// Settles a chunk of waiters, marking each in `chunk` as it goes; the
/// caller passes on whatever is left. Runs JS; touches no env state.
fn settle_chunk(js: Js, how: HowToSettle, chunk: &mut Unsettled) -> NResult<()> {
  if how.fail_for_testing {
    return Err(Failure::Error("failSettleForTesting".into()));
  }
  // Only the string that is needed: making one is ~200 instructions. (A
  // reference cannot keep one for later: N-API 8 refers to objects only.)
  let (mut ok, mut timed_out) = (None, None);
  let mut string = |timed: bool| -> NResult<sys::napi_value> {
    let (made, text) = if timed {
      (&mut timed_out, "timed-out")
    } else {
      (&mut ok, "ok")
    };
    if let Some(value) = *made {
      return Ok(value);
    }
    let value = js.latin1(text)?;
    *made = Some(value);
    Ok(value)
  };
  // Outcomes for lib/pending.js, and where each waiter is in `chunk`
  // (workers; a few inline, no allocation).
  let mut in_js: SmallVec<[u32; 4]> = SmallVec::new();
  let mut in_js_at: SmallVec<[usize; 4]> = SmallVec::new();
  for at in 0..chunk.left {
    let Some((woken, promise)) = chunk.waiters[at] else {
      continue;
    };
    let timed = woken.how == Settled::TimedOut;
    match promise {
      Promise::Deferred { deferred, .. } => {
        // Runs promise hooks, if any.
        let resolved = js.resolve(deferred.as_ptr(), string(timed)?);
        if resolved.is_ok() {
          chunk.settled(at);
        }
      }
      Promise::InJs => {
        in_js.push(woken.slot << 1 | u32::from(timed));
        in_js_at.push(at);
      }
    }
  }
  if in_js.is_empty() {
    return Ok(());
  }
  let Some((function, outcomes)) = how.settler else {
    return Ok(()); // not reached: promises are made in JS only once it registered
  };
  let function = js.reference_value(function)?;
  let outcomes = js.reference_value(outcomes)?;
  // setSettler checked that the array holds SCOPE_CHUNK elements; `min`
  // only guards against a buffer that has changed since.
  let count = js.with_u32_elements(outcomes, |elements| {
    let count = in_js.len().min(elements.len());
    elements[..count].copy_from_slice(&in_js[..count]);
    count
  })?;
  // If this fails, JS cannot run any more (the thread is being
  // terminated): these promises will never settle, and their wake-ups go
  // on (`Unsettled`).
  js.call(function, &[js.number(count as f64)?])?;
  for &at in &in_js_at[..count] {
    chunk.settled(at);
  }
  Ok(())
}

/// Takes `woken`'s waiter out of the slab, if its slot still holds it.
fn take_pending(state: &mut EnvState, woken: &Woken) -> Option<Pending> {
  let current = state.pending.get_mut(woken.slot).map(|p| p.id);
  if current != Some(woken.id) {
    return None;
  }
  state.pending.take(woken.slot)
}
