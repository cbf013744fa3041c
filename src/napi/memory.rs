//! The only place that turns a typed array and an index into an address in
//! shared memory, and the only place that reads that memory.

use std::sync::atomic::{AtomicI32, AtomicI64, Ordering};

use napi::sys;

use super::ffi::{Failure, Js, NResult};

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
  /// The SharedArrayBuffer object, if at hand (not when the array was
  /// found in a cache: [`Array`]), and the address its memory starts at
  /// (unique among live buffers): what a pending waiter keeps alive.
  pub buffer: Option<sys::napi_value>,
  pub buffer_base: usize,
}

/// A waitable typed array over a SharedArrayBuffer, as N-API described
/// it: what [`locate`] needs to find its elements. True of that array
/// object for as long as it lives, except that its length may have grown
/// since (a length-tracking array over a growable SharedArrayBuffer; a
/// SharedArrayBuffer never shrinks, moves or detaches), so it may be kept
/// with a (weak) reference to the array and used again for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Array {
  /// The address of element 0.
  data: usize,
  element: Element,
  size: usize,
  /// Its length in elements when it was described (at least that now).
  length: usize,
  buffer_base: usize,
}

impl Array {
  /// Where `array[index]` is, if `index` is an integer below the length
  /// this description has (a `Range` failure otherwise).
  pub fn locate(&self, index: f64) -> NResult<Location> {
    if !(index >= 0.0 && index < self.length as f64 && index.fract() == 0.0) {
      return Err(Failure::Range(format!("index {index} is out of range")));
    }
    Ok(Location {
      key: self.data + index as usize * self.size,
      element: self.element,
      buffer: None,
      buffer_base: self.buffer_base,
    })
  }

  /// Whether `index` is below the length this description has.
  pub fn covers(&self, index: f64) -> bool {
    index < self.length as f64
  }

  /// The address of element 0.
  pub fn data(&self) -> usize {
    self.data
  }
}

/// Describes `array`, which must be a waitable typed array over a
/// SharedArrayBuffer (a `Type` failure otherwise); also returns its buffer.
pub fn inspect(js: Js, array: sys::napi_value) -> NResult<(Array, sys::napi_value)> {
  let not_waitable = || Failure::Type("typedArray must be an Int32Array or BigInt64Array".into());
  let info = js.typedarray_info(array).map_err(|_| not_waitable())?;
  let (element, size) = match info.kind {
    sys::TypedarrayType::int32_array => (Element::Int32, 4),
    sys::TypedarrayType::bigint64_array => (Element::BigInt64, 8),
    _ => return Err(not_waitable()),
  };
  if js.is_arraybuffer(info.buffer)? {
    return Err(Failure::Type(
      "typedArray must be backed by a SharedArrayBuffer".into(),
    ));
  }
  // (No memory: no element is in range.)
  let length = if info.data.is_null() { 0 } else { info.length };
  let described = Array {
    data: info.data as usize,
    element,
    size,
    length,
    buffer_base: (info.data as usize).wrapping_sub(info.byte_offset),
  };
  Ok((described, info.buffer))
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
pub fn locate(js: Js, array: sys::napi_value, index: f64) -> NResult<Location> {
  let (described, buffer) = inspect(js, array)?;
  let mut location = described.locate(index)?;
  location.buffer = Some(buffer);
  Ok(location)
}

/// Reads the expected value for `location` from a JS number or BigInt.
pub fn expected(js: Js, location: &Location, value: sys::napi_value) -> NResult<Expected> {
  Ok(match location.element {
    Element::Int32 => Expected::Int32(js.i32(value)?),
    Element::BigInt64 => Expected::BigInt64(js.bigint_i64(value)?),
  })
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

/// The AsyncLock word at `location`: the i32 of its Int32Array element; a
/// `Type` failure for any other element. `crate::robust` does the rest.
///
/// # Safety
/// As [`holds`]: the SharedArrayBuffer behind `location` must be alive
/// while the result is used.
pub unsafe fn lock_word(location: &Location) -> NResult<&AtomicI32> {
  if location.element != Element::Int32 {
    return Err(Failure::Type("typedArray must be an Int32Array".into()));
  }
  // SAFETY: as in `holds`, for the i32 of an Int32Array element.
  Ok(unsafe { AtomicI32::from_ptr(location.key as *mut i32) })
}

/// The Int32 at `at` of a watched stake (`stakes::Stake`) at `key`.
///
/// # Safety
/// `key` must be the address of element 0 of an Int32Array of more than
/// `at` elements over a SharedArrayBuffer that stays alive for the call (a
/// stake's buffer is held by a strong reference while it is watched).
pub unsafe fn stake_int(key: usize, at: usize) -> i32 {
  // SAFETY: as the caller promises: an aligned i32 in live memory.
  unsafe { AtomicI32::from_ptr((key + 4 * at) as *mut i32) }.load(Ordering::SeqCst)
}

/// The AsyncLock word at `key`, the address of a watched Int32Array
/// element (held.rs `Held`). `crate::robust` does the rest.
///
/// # Safety
/// `key` must be the address of an Int32Array element of a
/// SharedArrayBuffer that stays alive for `'a` (a watched word's buffer is
/// held by a strong reference while the word is watched: until its last
/// watcher's finalizer, or the env's teardown).
pub unsafe fn watched_word<'a>(key: usize) -> &'a AtomicI32 {
  // SAFETY: as the caller promises; other threads only touch it atomically.
  unsafe { AtomicI32::from_ptr(key as *mut i32) }
}
