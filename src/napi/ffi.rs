//! Small raw N-API helpers: status checks, throwing, argument fetching, and
//! the panic guard every callback from JS goes through.

use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi::sys;

/// Why a call from JS failed; thrown as the matching JS error.
#[derive(Debug)]
pub enum Failure {
  Type(String),
  Range(String),
  Error(String),
  /// An N-API call failed and left its own exception pending.
  Pending,
}

pub type NResult<T> = Result<T, Failure>;

/// Turns an N-API status into a [`Failure`].
pub fn check(status: sys::napi_status) -> NResult<()> {
  match status {
    sys::Status::napi_ok => Ok(()),
    sys::Status::napi_pending_exception => Err(Failure::Pending),
    other => Err(Failure::Error(format!(
      "atomics-waitasync: N-API call failed with status {other}"
    ))),
  }
}

/// Throws `failure` into `env` unless an exception is already pending.
///
/// # Safety
/// `env` is the current env, on its own thread.
unsafe fn throw(env: sys::napi_env, failure: Failure) {
  let mut pending = false;
  // SAFETY: env from the caller; pending is a live local.
  unsafe { sys::napi_is_exception_pending(env, &mut pending) };
  if pending {
    return;
  }
  let (kind, message) = match failure {
    Failure::Type(m) => (0, m),
    Failure::Range(m) => (1, m),
    Failure::Error(m) => (2, m),
    Failure::Pending => (2, "atomics-waitasync: N-API call failed".to_string()),
  };
  let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
  // SAFETY: env from the caller; message is a NUL-terminated string that
  // outlives the call; a null code is allowed.
  let _ = unsafe {
    match kind {
      0 => sys::napi_throw_type_error(env, ptr::null(), message.as_ptr()),
      1 => sys::napi_throw_range_error(env, ptr::null(), message.as_ptr()),
      _ => sys::napi_throw_error(env, ptr::null(), message.as_ptr()),
    }
  };
}

/// Runs the body of a JS-facing callback: fetches up to `N` arguments
/// (missing ones are `undefined`), runs `body`, and turns a failure or a
/// panic into a thrown JS error, so that nothing unwinds across the FFI
/// boundary.
///
/// # Safety
/// `env` and `info` are the ones N-API passed to the callback.
pub unsafe fn entry<const N: usize>(
  env: sys::napi_env,
  info: sys::napi_callback_info,
  body: impl FnOnce(sys::napi_env, [sys::napi_value; N]) -> NResult<sys::napi_value>,
) -> sys::napi_value {
  let outcome = catch_unwind(AssertUnwindSafe(|| {
    let mut argc = N;
    let mut argv = [ptr::null_mut(); N];
    // SAFETY: argv holds N slots and argc says so; env and info come from N-API.
    check(unsafe {
      sys::napi_get_cb_info(
        env,
        info,
        &mut argc,
        argv.as_mut_ptr(),
        ptr::null_mut(),
        ptr::null_mut(),
      )
    })?;
    if argc < N {
      let mut undefined = ptr::null_mut();
      // SAFETY: env from N-API; undefined is a live local.
      check(unsafe { sys::napi_get_undefined(env, &mut undefined) })?;
      for slot in &mut argv[argc..] {
        *slot = undefined;
      }
    }
    body(env, argv)
  }));
  let failure = match outcome {
    Ok(Ok(value)) => return value,
    Ok(Err(failure)) => failure,
    Err(_) => Failure::Error("atomics-waitasync: internal error (panic in the addon)".into()),
  };
  // SAFETY: env from N-API, on its thread.
  unsafe { throw(env, failure) };
  ptr::null_mut()
}

/// # Safety
/// `env` is the current env, on its own thread; `value` a handle of it.
pub unsafe fn get_f64(env: sys::napi_env, value: sys::napi_value) -> NResult<f64> {
  let mut out = 0f64;
  // SAFETY: env and value from the caller; out is a live local.
  check(unsafe { sys::napi_get_value_double(env, value, &mut out) })?;
  Ok(out)
}

/// # Safety
/// `env` is the current env, on its own thread.
pub unsafe fn number(env: sys::napi_env, n: f64) -> NResult<sys::napi_value> {
  let mut out = ptr::null_mut();
  // SAFETY: env from the caller; out is a live local.
  check(unsafe { sys::napi_create_double(env, n, &mut out) })?;
  Ok(out)
}

/// # Safety
/// `env` is the current env, on its own thread.
pub unsafe fn undefined(env: sys::napi_env) -> NResult<sys::napi_value> {
  let mut out = ptr::null_mut();
  // SAFETY: env from the caller; out is a live local.
  check(unsafe { sys::napi_get_undefined(env, &mut out) })?;
  Ok(out)
}

/// # Safety
/// `env` is the current env, on its own thread.
pub unsafe fn latin1(env: sys::napi_env, text: &str) -> NResult<sys::napi_value> {
  let mut out = ptr::null_mut();
  // SAFETY: text is valid for text.len() bytes; out is a live local.
  check(unsafe {
    sys::napi_create_string_latin1(env, text.as_ptr().cast(), text.len() as isize, &mut out)
  })?;
  Ok(out)
}
