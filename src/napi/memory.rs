//! The only place that turns a typed array and an index into an address in
//! shared memory, and the only place that reads that memory.

use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicI64, Ordering};

use napi::sys;

use super::ffi::{check, Failure, NResult};

/// The element type of a waitable typed array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
  Int32,
  BigInt64,
}

/// One element of a SharedArrayBuffer: its absolute address, which is the
/// registry key (the same bytes have the same address in every thread), and
/// how to read it.
#[derive(Debug, Clone, Copy)]
pub struct Location {
  pub key: usize,
  pub element: Element,
}

/// The value a waiter expects to find, already coerced by index.js.
#[derive(Debug, Clone, Copy)]
pub enum Expected {
  Int32(i32),
  BigInt64(i64),
}

/// Resolves `array[index]` to a [`Location`]. index.js has validated the
/// arguments in the spec's order; this checks again, cheaply, so that a bad
/// call to the binding can never read outside a live SharedArrayBuffer.
///
/// # Safety
/// `env` is the current env, on its own thread; `array` is a handle of it.
pub unsafe fn locate(env: sys::napi_env, array: sys::napi_value, index: f64) -> NResult<Location> {
  let mut kind: sys::napi_typedarray_type = 0;
  let mut length = 0usize;
  let mut data: *mut std::ffi::c_void = ptr::null_mut();
  let mut buffer: sys::napi_value = ptr::null_mut();
  let mut byte_offset = 0usize;
  // SAFETY: every out-pointer is a live local; env and array come from the caller.
  let status = unsafe {
    sys::napi_get_typedarray_info(
      env,
      array,
      &mut kind,
      &mut length,
      &mut data,
      &mut buffer,
      &mut byte_offset,
    )
  };
  if status != sys::Status::napi_ok {
    return Err(Failure::Type(
      "typedArray must be an Int32Array or BigInt64Array".into(),
    ));
  }
  let (element, size) = match kind {
    sys::TypedarrayType::int32_array => (Element::Int32, 4),
    sys::TypedarrayType::bigint64_array => (Element::BigInt64, 8),
    _ => {
      return Err(Failure::Type(
        "typedArray must be an Int32Array or BigInt64Array".into(),
      ))
    }
  };
  let mut is_plain_buffer = false;
  // SAFETY: buffer is the handle napi_get_typedarray_info just returned.
  check(unsafe { sys::napi_is_arraybuffer(env, buffer, &mut is_plain_buffer) })?;
  // napi_is_arraybuffer is false for a SharedArrayBuffer on every runtime we support.
  if is_plain_buffer {
    return Err(Failure::Type(
      "typedArray must be backed by a SharedArrayBuffer".into(),
    ));
  }
  if !(index >= 0.0 && index < length as f64) || data.is_null() {
    return Err(Failure::Range(format!("index {index} is out of range")));
  }
  Ok(Location {
    key: data as usize + index as usize * size,
    element,
  })
}

/// Reads the expected value for `location` from a JS number or BigInt.
///
/// # Safety
/// As for [`locate`]; `value` is a handle of `env`.
pub unsafe fn expected(
  env: sys::napi_env,
  location: &Location,
  value: sys::napi_value,
) -> NResult<Expected> {
  match location.element {
    Element::Int32 => {
      let mut v = 0i32;
      // SAFETY: env and value from the caller; v is a live local.
      check(unsafe { sys::napi_get_value_int32(env, value, &mut v) })?;
      Ok(Expected::Int32(v))
    }
    Element::BigInt64 => {
      let mut v = 0i64;
      let mut lossless = false;
      // SAFETY: env and value from the caller; v and lossless are live locals.
      check(unsafe { sys::napi_get_value_bigint_int64(env, value, &mut v, &mut lossless) })?;
      Ok(Expected::BigInt64(v))
    }
  }
}

/// Whether the element at `location` currently holds `expected`
/// (a sequentially consistent load, as the spec's critical section reads).
///
/// # Safety
/// The SharedArrayBuffer behind `location` must be alive for the call: its
/// typed array is rooted by the caller (a JS argument or a reference).
pub unsafe fn holds(location: &Location, expected: Expected) -> bool {
  match expected {
    Expected::Int32(v) => {
      // SAFETY: key is the address of an aligned i32 inside a live
      // SharedArrayBuffer (locate checked kind and bounds); other threads
      // only touch it atomically.
      let cell = unsafe { AtomicI32::from_ptr(location.key as *mut i32) };
      cell.load(Ordering::SeqCst) == v
    }
    Expected::BigInt64(v) => {
      // SAFETY: as above, for an aligned i64 of a BigInt64Array.
      let cell = unsafe { AtomicI64::from_ptr(location.key as *mut i64) };
      cell.load(Ordering::SeqCst) == v
    }
  }
}
