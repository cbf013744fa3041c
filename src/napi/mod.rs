//! The N-API surface: `wait`, `waitAsync`, `notify` and their helpers, as
//! raw callbacks (a `#[napi]` function costs ~100 ns of argument conversion,
//! more than the rest of a notify).
//!
//! index.js has already done the spec's validation and coercion, in the
//! spec's order, and calls these with: the typed array, an integer index in
//! range, the coerced value (a Number for Int32Array, a BigInt for
//! BigInt64Array), and a timeout in milliseconds (>= 0 or +Infinity). They
//! still check what they need to stay memory-safe.
//!
//! Outcomes cross to JS as small integers (see `code`); index.js turns them
//! into the spec's strings and result objects.

mod env;
mod ffi;
mod memory;
mod resolver;

use std::ffi::CString;
use std::ptr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use napi::bindgen_prelude::{Env, JsValue, Object};
use napi::sys;
use napi_derive::napi;
use once_cell::sync::{Lazy, OnceCell};

use self::env::{Pending, SyncWait};
use self::ffi::{check, entry, get_f64, number, undefined, Failure};
use self::memory::{expected, holds, locate};
use self::resolver::{EnvShared, Settled};
use crate::parker::{ParkState, Parker};
use crate::registry::{Enqueued, Registry, WaiterId};
use crate::timer::{Deadline, Timer};

/// What a queue entry is: a parked thread, or an env's pending promise.
pub enum Waiter {
  Sync(Arc<Parker>),
  Async {
    env: Arc<EnvShared>,
    deadline: Option<Instant>,
  },
}

/// The process-wide registry: shared by every env (main thread and workers),
/// so that any thread's notify finds any thread's waiters.
pub static REGISTRY: Lazy<Registry<Waiter>> = Lazy::new(Registry::new);

static TIMER: OnceCell<Timer> = OnceCell::new();

/// The notifier thread, started on first use.
fn timer() -> &'static Timer {
  TIMER.get_or_init(|| {
    // The thread outlives any one env; keep this image mapped even if the
    // env that loaded it unloads it.
    napi::bindgen_prelude::retain_current_module_for_unload_safety();
    Timer::start(expire).expect("atomics-waitasync: cannot start the notifier thread")
  })
}

/// Results as they cross to JS; index.js maps them to the spec's strings.
mod code {
  pub const OK: f64 = 0.0;
  pub const NOT_EQUAL: f64 = 1.0;
  pub const TIMED_OUT: f64 = 2.0;
  /// Sync wait: the slice ended, call `waitContinue()`.
  pub const PENDING: f64 = 3.0;
}

/// A sync wait blocks in slices this long, returning to JS between them so
/// that `worker.terminate()` can interrupt it (a condvar wait is not
/// interruptible). 10 ms measured ~3 ms terminate latency; 50 ms, 29-48 ms.
const SYNC_SLICE: Duration = Duration::from_millis(10);

/// Timeouts above this (~31 years) are treated as +Infinity.
const MAX_TIMEOUT_MS: f64 = 1e12;

fn deadline_after(timeout_ms: f64) -> Option<Instant> {
  if timeout_ms.is_finite() && timeout_ms <= MAX_TIMEOUT_MS {
    Instant::now().checked_add(Duration::from_secs_f64(timeout_ms.max(0.0) / 1000.0))
  } else {
    None
  }
}

/// Wakes waiters taken off their queues, after the registry lock is gone:
/// unparks sync ones, and hands async ones to their envs, one batch per env
/// run.
fn wake(woken: Vec<(WaiterId, Waiter)>, how: Settled) {
  let mut batch: Vec<(WaiterId, Settled)> = Vec::new();
  let mut batch_env: Option<Arc<EnvShared>> = None;
  for (id, waiter) in woken {
    match waiter {
      Waiter::Sync(parker) => parker.unpark(),
      Waiter::Async { env, deadline } => {
        if how == Settled::Woken {
          if let Some(at) = deadline {
            timer().cancel(at, id);
          }
        }
        if let Some(current) = &batch_env {
          if !Arc::ptr_eq(current, &env) {
            current.deliver(&batch);
            batch.clear();
            batch_env = Some(env);
          }
        } else {
          batch_env = Some(env);
        }
        batch.push((id, how));
      }
    }
  }
  if let Some(current) = batch_env {
    current.deliver(&batch);
  }
}

/// The notifier thread's expire callback: whichever deadline's waiter is
/// still queued has timed out; the others were notified and are skipped.
fn expire(due: Vec<Deadline>) {
  let timed_out: Vec<(WaiterId, Waiter)> = due
    .into_iter()
    .filter_map(|d| REGISTRY.remove(d.key, d.id).map(|w| (d.id, w)))
    .collect();
  let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    wake(timed_out, Settled::TimedOut)
  }));
}

/// `waitAsync(typedArray, index, value, timeoutMs)` → Promise, or
/// `code::NOT_EQUAL` / `code::TIMED_OUT` for the synchronous results.
unsafe extern "C" fn js_wait_async(
  env: sys::napi_env,
  info: sys::napi_callback_info,
) -> sys::napi_value {
  // SAFETY: env and info come from N-API for this call.
  unsafe {
    entry(
      env,
      info,
      |env, [array, index, value, timeout]: [sys::napi_value; 4]| {
        let state = env::state(env)?;
        let location = locate(env, array, get_f64(env, index)?)?;
        let want = expected(env, &location, value)?;
        let timeout_ms = get_f64(env, timeout)?;
        // ECMA-262 DoWait 19-21, in the critical section: unequal → "not-equal";
        // an immediate timeout enqueues nothing. Reading first, outside the
        // lock, is the same observable result and spares a promise.
        if !holds(&location, want) {
          return number(env, code::NOT_EQUAL);
        }
        if timeout_ms == 0.0 {
          return number(env, code::TIMED_OUT);
        }
        let deadline = deadline_after(timeout_ms);
        let mut deferred = ptr::null_mut();
        let mut promise = ptr::null_mut();
        check(sys::napi_create_promise(env, &mut deferred, &mut promise))?;
        // DoWait 22-28: enqueue at the tail, under the bucket lock, if the
        // value still holds. The deadline goes to the notifier thread under
        // that same lock, so its add precedes any notify's cancel.
        let shared = &state.shared;
        let enqueued = REGISTRY.enqueue_if(
          location.key,
          || holds(&location, want),
          |id| {
            if let Some(at) = deadline {
              timer().add(Deadline {
                at,
                id,
                key: location.key,
              });
            }
            Waiter::Async {
              env: shared.clone(),
              deadline,
            }
          },
        );
        let id = match enqueued {
          Enqueued::Queued(id) => id,
          Enqueued::NotEqual => {
            // The value changed between the two reads: conclude the unused
            // deferred so it is freed; nobody sees its promise.
            let _ = sys::napi_resolve_deferred(env, deferred, undefined(env)?);
            return number(env, code::NOT_EQUAL);
          }
        };
        let mut array_ref = ptr::null_mut();
        if let Err(failure) = check(sys::napi_create_reference(env, array, 1, &mut array_ref)) {
          // Cannot keep the memory alive: take the waiter back out.
          if REGISTRY.remove(location.key, id).is_some() {
            if let Some(at) = deadline {
              timer().cancel(at, id);
            }
          }
          let _ = sys::napi_resolve_deferred(env, deferred, undefined(env)?);
          return Err(failure);
        }
        state.pending.insert(
          id,
          Pending {
            deferred,
            array: array_ref,
            key: location.key,
            deadline,
          },
        );
        state.update_keep_alive();
        Ok(promise)
      },
    )
  }
}

/// `notify(typedArray, index, count)` → how many waiters it woke.
/// `count` is a Number >= 0 (+Infinity for all).
unsafe extern "C" fn js_notify(
  env: sys::napi_env,
  info: sys::napi_callback_info,
) -> sys::napi_value {
  // SAFETY: env and info come from N-API for this call.
  unsafe {
    entry(
      env,
      info,
      |env, [array, index, count]: [sys::napi_value; 3]| {
        let location = locate(env, array, get_f64(env, index)?)?;
        let count = get_f64(env, count)?;
        let count = if count >= usize::MAX as f64 {
          usize::MAX
        } else {
          count.max(0.0) as usize
        };
        let woken = REGISTRY.dequeue(location.key, count);
        let n = woken.len();
        wake(woken, Settled::Woken);
        number(env, n as f64)
      },
    )
  }
}

/// `wait(typedArray, index, value, timeoutMs)` → `code::*`. Blocks for at
/// most one slice; `code::PENDING` means "call `waitContinue()`".
unsafe extern "C" fn js_wait(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  // SAFETY: env and info come from N-API for this call.
  unsafe {
    entry(
      env,
      info,
      |env, [array, index, value, timeout]: [sys::napi_value; 4]| {
        let state = env::state(env)?;
        let location = locate(env, array, get_f64(env, index)?)?;
        let want = expected(env, &location, value)?;
        let timeout_ms = get_f64(env, timeout)?;
        if let Some(stale) = state.sync_wait.take() {
          // Only possible if a previous wait's JS loop was abandoned.
          let _ = REGISTRY.remove(stale.key, stale.id);
        }
        let parker = Arc::new(Parker::new());
        let enqueued = REGISTRY.enqueue_if(
          location.key,
          || holds(&location, want),
          |_| Waiter::Sync(parker.clone()),
        );
        let Enqueued::Queued(id) = enqueued else {
          return number(env, code::NOT_EQUAL);
        };
        let deadline = if timeout_ms == 0.0 {
          Some(Instant::now())
        } else {
          deadline_after(timeout_ms)
        };
        state.sync_wait = Some(SyncWait {
          key: location.key,
          id,
          parker,
          deadline,
        });
        number(env, park_slice(state))
      },
    )
  }
}

/// `waitContinue()` → `code::*`: the next slice of this thread's sync wait.
unsafe extern "C" fn js_wait_continue(
  env: sys::napi_env,
  info: sys::napi_callback_info,
) -> sys::napi_value {
  // SAFETY: env and info come from N-API for this call.
  unsafe {
    entry(env, info, |env, []: [sys::napi_value; 0]| {
      let state = env::state(env)?;
      if state.sync_wait.is_none() {
        return Err(Failure::Error(
          "atomics-waitasync: no wait in progress".into(),
        ));
      }
      number(env, park_slice(state))
    })
  }
}

/// Parks for one slice of the current sync wait and says how it stands.
fn park_slice(state: &mut env::EnvState) -> f64 {
  let Some(sync) = &state.sync_wait else {
    return code::OK;
  };
  let slice_end = Instant::now() + SYNC_SLICE;
  let until = sync.deadline.map_or(slice_end, |d| d.min(slice_end));
  if sync.parker.park_until(until) == ParkState::Woken {
    state.sync_wait = None;
    return code::OK;
  }
  match sync.deadline {
    Some(deadline) if Instant::now() >= deadline => {
      let sync = state.sync_wait.take().expect("checked above");
      if REGISTRY.remove(sync.key, sync.id).is_some() {
        code::TIMED_OUT
      } else {
        // A notify took us off the queue first and owns the outcome; its
        // unpark is imminent.
        sync.parker.park();
        code::OK
      }
    }
    _ => code::PENDING,
  }
}

/// `unref()` / `ref()`: whether this env's pending waits keep it alive.
unsafe extern "C" fn js_set_keep_alive(
  env: sys::napi_env,
  info: sys::napi_callback_info,
) -> sys::napi_value {
  // SAFETY: env and info come from N-API for this call.
  unsafe {
    entry(env, info, |env, [flag]: [sys::napi_value; 1]| {
      let state = env::state(env)?;
      let mut keep = true;
      check(sys::napi_get_value_bool(env, flag, &mut keep))?;
      state.keep_alive = keep;
      state.update_keep_alive();
      undefined(env)
    })
  }
}

/// Test-only counts: `[registry waiters on (array, index) or in all,
/// this env's pending async waiters, deadlines held by the notifier]`.
unsafe extern "C" fn js_counts_for_testing(
  env: sys::napi_env,
  info: sys::napi_callback_info,
) -> sys::napi_value {
  // SAFETY: env and info come from N-API for this call.
  unsafe {
    entry(env, info, |env, [array, index]: [sys::napi_value; 2]| {
      let state = env::state(env)?;
      let mut kind = 0;
      check(sys::napi_typeof(env, array, &mut kind))?;
      let waiters = if kind == sys::ValueType::napi_object {
        REGISTRY.waiters_on(locate(env, array, get_f64(env, index)?)?.key)
      } else {
        REGISTRY.len()
      };
      let mut result = ptr::null_mut();
      check(sys::napi_create_array_with_length(env, 3, &mut result))?;
      let timers = TIMER.get().map_or(0, Timer::pending);
      for (i, n) in [waiters, state.pending.len(), timers]
        .into_iter()
        .enumerate()
      {
        check(sys::napi_set_element(
          env,
          result,
          i as u32,
          number(env, n as f64)?,
        ))?;
      }
      Ok(result)
    })
  }
}

type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// Per env: creates its state, then the binding's functions.
#[napi(module_exports)]
pub fn init(exports: Object, env: Env) -> napi::Result<()> {
  let raw_env = env.raw();
  let to_napi = |failure: Failure| napi::Error::from_reason(format!("{failure:?}"));
  // SAFETY: module init runs on the env's thread with a live env.
  unsafe { env::init(raw_env) }.map_err(to_napi)?;
  let functions: [(&str, Callback); 6] = [
    ("waitAsync", js_wait_async),
    ("wait", js_wait),
    ("waitContinue", js_wait_continue),
    ("notify", js_notify),
    ("setKeepAlive", js_set_keep_alive),
    ("countsForTesting", js_counts_for_testing),
  ];
  for (name, callback) in functions {
    let c_name = CString::new(name).expect("no NUL in names");
    let mut function = ptr::null_mut();
    // SAFETY: env on its thread; the name outlives the call; function is a
    // live local.
    let status = unsafe {
      sys::napi_create_function(
        raw_env,
        c_name.as_ptr(),
        name.len() as isize,
        Some(callback),
        ptr::null_mut(),
        &mut function,
      )
    };
    check(status).map_err(to_napi)?;
    // SAFETY: exports is the live exports object of this env.
    let status =
      unsafe { sys::napi_set_named_property(raw_env, exports.raw(), c_name.as_ptr(), function) };
    check(status).map_err(to_napi)?;
  }
  Ok(())
}
