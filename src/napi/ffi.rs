//! Raw N-API, made safe to call for the length of one callback.
//!
//! [`Js`] is a live env on its own thread. Creating one is the single unsafe
//! promise ("this env is live and this is its thread, for as long as the
//! value is used"); its methods wrap one N-API call each, so the callbacks in
//! `mod.rs` are ordinary safe Rust. [`entry`] is the panic guard that every
//! callback from JS goes through. [`Tsfn`] is the one handle used off the
//! env's thread: an env's ThreadsafeFunction, as the signal the core calls
//! from any thread.

use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::AtomicI32;
use std::sync::Arc;

use napi::sys;

use crate::wake::Signal;

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

/// What a panic in the addon is thrown as.
const PANICKED: &str = "atomics-waitasync: internal error (panic in the addon)";

/// A panic caught in the core (of whichever copy owns it) is thrown as any
/// panic in the addon is (see [`entry`]).
impl From<crate::core::Panicked> for Failure {
  fn from(_: crate::core::Panicked) -> Self {
    Failure::Error(PANICKED.into())
  }
}

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

/// What `napi_get_typedarray_info` says about a typed array.
pub struct TypedArrayInfo {
  pub kind: sys::napi_typedarray_type,
  pub length: usize,
  pub data: *mut c_void,
  pub buffer: sys::napi_value,
  pub byte_offset: usize,
}

/// A live env, used on its own thread within one callback (or one call-js,
/// or one cleanup hook). Handles passed to its methods must belong to it.
#[derive(Clone, Copy)]
pub struct Js {
  env: sys::napi_env,
}

impl Js {
  /// # Safety
  /// `env` is live, this is its thread, and the value is not used after the
  /// callback that received `env` returns.
  pub unsafe fn new(env: sys::napi_env) -> Js {
    Js { env }
  }

  pub fn raw(self) -> sys::napi_env {
    self.env
  }

  pub fn f64(self, value: sys::napi_value) -> NResult<f64> {
    let mut out = 0f64;
    // SAFETY: live env on its thread (Js::new); out is a live local.
    check(unsafe { sys::napi_get_value_double(self.env, value, &mut out) })?;
    Ok(out)
  }

  pub fn i32(self, value: sys::napi_value) -> NResult<i32> {
    let mut out = 0i32;
    // SAFETY: live env on its thread (Js::new); out is a live local.
    check(unsafe { sys::napi_get_value_int32(self.env, value, &mut out) })?;
    Ok(out)
  }

  pub fn bigint_i64(self, value: sys::napi_value) -> NResult<i64> {
    let (mut out, mut lossless) = (0i64, false);
    // SAFETY: live env on its thread (Js::new); out and lossless are live locals.
    check(unsafe { sys::napi_get_value_bigint_int64(self.env, value, &mut out, &mut lossless) })?;
    Ok(out)
  }

  pub fn bool(self, value: sys::napi_value) -> NResult<bool> {
    let mut out = false;
    // SAFETY: live env on its thread (Js::new); out is a live local.
    check(unsafe { sys::napi_get_value_bool(self.env, value, &mut out) })?;
    Ok(out)
  }

  pub fn is_number(self, value: sys::napi_value) -> NResult<bool> {
    let mut kind = 0;
    // SAFETY: live env on its thread (Js::new); kind is a live local.
    check(unsafe { sys::napi_typeof(self.env, value, &mut kind) })?;
    Ok(kind == sys::ValueType::napi_number)
  }

  pub fn boolean(self, value: bool) -> NResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); out is a live local.
    check(unsafe { sys::napi_get_boolean(self.env, value, &mut out) })?;
    Ok(out)
  }

  pub fn is_object(self, value: sys::napi_value) -> NResult<bool> {
    let mut kind = 0;
    // SAFETY: live env on its thread (Js::new); kind is a live local.
    check(unsafe { sys::napi_typeof(self.env, value, &mut kind) })?;
    Ok(kind == sys::ValueType::napi_object)
  }

  /// `value` as a Rust string if it is a string, `None` if it is not.
  pub fn string(self, value: sys::napi_value) -> NResult<Option<String>> {
    let mut kind = 0;
    // SAFETY: live env on its thread (Js::new); kind is a live local.
    check(unsafe { sys::napi_typeof(self.env, value, &mut kind) })?;
    if kind != sys::ValueType::napi_string {
      return Ok(None);
    }
    let mut len = 0;
    // SAFETY: live env on its thread; a null buffer asks for the length
    // only, into the live local `len`.
    check(unsafe {
      sys::napi_get_value_string_utf8(self.env, value, ptr::null_mut(), 0, &mut len)
    })?;
    let mut buffer = vec![0u8; len + 1];
    // SAFETY: live env on its thread; `buffer` holds `buffer.len()` bytes,
    // which N-API writes at most (NUL included), and `len` is a live local.
    check(unsafe {
      sys::napi_get_value_string_utf8(
        self.env,
        value,
        buffer.as_mut_ptr().cast(),
        buffer.len(),
        &mut len,
      )
    })?;
    Ok(Some(String::from_utf8_lossy(&buffer[..len]).into_owned()))
  }

  /// A JS string of the UTF-8 `text`.
  pub fn utf8(self, text: &str) -> NResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); text is valid UTF-8 for
    // its length; out is a live local.
    check(unsafe {
      sys::napi_create_string_utf8(
        self.env,
        text.as_ptr().cast(),
        text.len() as isize,
        &mut out,
      )
    })?;
    Ok(out)
  }

  /// The elements of the JS array `array`, as numbers (an element that is
  /// not one is skipped), the first `max` at most; empty if `array` is not
  /// an array.
  pub fn f64_elements(self, array: sys::napi_value, max: u32) -> NResult<Vec<f64>> {
    let mut is_array = false;
    // SAFETY: live env on its thread (Js::new); is_array is a live local.
    check(unsafe { sys::napi_is_array(self.env, array, &mut is_array) })?;
    if !is_array {
      return Ok(Vec::new());
    }
    let mut length = 0;
    // SAFETY: as above; length is a live local.
    check(unsafe { sys::napi_get_array_length(self.env, array, &mut length) })?;
    let mut out = Vec::new();
    for i in 0..length.min(max) {
      let mut element = ptr::null_mut();
      // SAFETY: as above; element is a live local.
      check(unsafe { sys::napi_get_element(self.env, array, i, &mut element) })?;
      if let Ok(n) = self.f64(element) {
        out.push(n);
      }
    }
    Ok(out)
  }

  /// A JS array of the values `values`.
  pub fn array(self, values: &[sys::napi_value]) -> NResult<sys::napi_value> {
    let mut array = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); array is a live local.
    check(unsafe { sys::napi_create_array_with_length(self.env, values.len(), &mut array) })?;
    for (i, &element) in values.iter().enumerate() {
      // SAFETY: live env on its thread; array and element are its handles.
      check(unsafe { sys::napi_set_element(self.env, array, i as u32, element) })?;
    }
    Ok(array)
  }

  pub fn number(self, n: f64) -> NResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); out is a live local.
    check(unsafe { sys::napi_create_double(self.env, n, &mut out) })?;
    Ok(out)
  }

  pub fn undefined(self) -> NResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); out is a live local.
    check(unsafe { sys::napi_get_undefined(self.env, &mut out) })?;
    Ok(out)
  }

  /// Whether this env may still run JS. N-API's calls that can run JS
  /// (those with Node's `NAPI_PREAMBLE`) fail, without running any, once
  /// the env cannot call into JS: from the moment a worker's `terminate()`
  /// (or the process's exit, which stops every worker) marks it stopping,
  /// before the engine's termination lands. ToBoolean of `undefined` runs
  /// no JS and is the cheapest of them (~100 instructions against ~1,400
  /// for the engine's `Atomics.wait(…, 0)` interrupt point,
  /// benchmark/instructions/ping-pong.js). What other runtimes' N-API says
  /// here is not relied on (lib/atomics.js `kBindingSeesStop`).
  pub fn can_run_js(self) -> bool {
    let Ok(value) = self.undefined() else {
      return false;
    };
    let mut out = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); value is a live handle of
    // this call; out is a live local.
    let status = unsafe { sys::napi_coerce_to_bool(self.env, value, &mut out) };
    status == sys::Status::napi_ok
  }

  pub fn latin1(self, text: &str) -> NResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); text is valid for its
    // length; out is a live local.
    check(unsafe {
      sys::napi_create_string_latin1(
        self.env,
        text.as_ptr().cast(),
        text.len() as isize,
        &mut out,
      )
    })?;
    Ok(out)
  }

  /// A JS array of numbers.
  pub fn numbers(self, values: &[f64]) -> NResult<sys::napi_value> {
    let mut array = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); array is a live local.
    check(unsafe { sys::napi_create_array_with_length(self.env, values.len(), &mut array) })?;
    for (i, &n) in values.iter().enumerate() {
      let element = self.number(n)?;
      // SAFETY: live env on its thread; array and element are its handles.
      check(unsafe { sys::napi_set_element(self.env, array, i as u32, element) })?;
    }
    Ok(array)
  }

  pub fn typedarray_info(self, array: sys::napi_value) -> NResult<TypedArrayInfo> {
    let mut info = TypedArrayInfo {
      kind: 0,
      length: 0,
      data: ptr::null_mut(),
      buffer: ptr::null_mut(),
      byte_offset: 0,
    };
    // SAFETY: live env on its thread (Js::new); every out-pointer is a live local.
    check(unsafe {
      sys::napi_get_typedarray_info(
        self.env,
        array,
        &mut info.kind,
        &mut info.length,
        &mut info.data,
        &mut info.buffer,
        &mut info.byte_offset,
      )
    })?;
    Ok(info)
  }

  /// True for an ArrayBuffer, false for a SharedArrayBuffer (on Node 12-24
  /// and Bun alike).
  pub fn is_arraybuffer(self, value: sys::napi_value) -> NResult<bool> {
    let mut out = false;
    // SAFETY: live env on its thread (Js::new); out is a live local.
    check(unsafe { sys::napi_is_arraybuffer(self.env, value, &mut out) })?;
    Ok(out)
  }

  pub fn create_promise(self) -> NResult<(sys::napi_deferred, sys::napi_value)> {
    let (mut deferred, mut promise) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: live env on its thread (Js::new); out-pointers are live locals.
    check(unsafe { sys::napi_create_promise(self.env, &mut deferred, &mut promise) })?;
    Ok((deferred, promise))
  }

  /// Resolves and frees `deferred`. The caller must not use it again.
  pub fn resolve(self, deferred: sys::napi_deferred, value: sys::napi_value) -> NResult<()> {
    // SAFETY: live env on its thread (Js::new); deferred was created on it
    // and, by this method's contract, is concluded only here.
    check(unsafe { sys::napi_resolve_deferred(self.env, deferred, value) })
  }

  pub fn create_reference(self, value: sys::napi_value) -> NResult<sys::napi_ref> {
    let mut out = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); out is a live local.
    check(unsafe { sys::napi_create_reference(self.env, value, 1, &mut out) })?;
    Ok(out)
  }

  /// A weak reference (count 0) to the object `value`: it keeps nothing
  /// alive, and reads as gone once `value` is collected.
  pub fn create_weak_reference(self, value: sys::napi_value) -> NResult<sys::napi_ref> {
    let mut out = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); out is a live local.
    check(unsafe { sys::napi_create_reference(self.env, value, 0, &mut out) })?;
    Ok(out)
  }

  /// Runs `finalize(env, data, null)` on this env's thread once `object`
  /// has been collected (or at the env's teardown, after its cleanup
  /// hooks). `finalize` must not unwind.
  pub fn add_finalizer(
    self,
    object: sys::napi_value,
    data: *mut c_void,
    finalize: unsafe extern "C" fn(sys::napi_env, *mut c_void, *mut c_void),
  ) -> NResult<()> {
    // SAFETY: live env on its thread (Js::new); no reference is asked for.
    check(unsafe {
      sys::napi_add_finalizer(
        self.env,
        object,
        data,
        Some(finalize),
        ptr::null_mut(),
        ptr::null_mut(),
      )
    })
  }

  /// `a === b`.
  pub fn strict_equals(self, a: sys::napi_value, b: sys::napi_value) -> NResult<bool> {
    let mut out = false;
    // SAFETY: live env on its thread (Js::new); out is a live local.
    check(unsafe { sys::napi_strict_equals(self.env, a, b, &mut out) })?;
    Ok(out)
  }

  /// Deletes `reference`. The caller must not use it again.
  pub fn delete_reference(self, reference: sys::napi_ref) {
    // SAFETY: live env on its thread (Js::new); the reference was created
    // on it and, by this method's contract, is deleted only here.
    let _ = unsafe { sys::napi_delete_reference(self.env, reference) };
  }

  /// Makes `reference` strong again (its count 0 → 1). Check first that
  /// its value is still there ([`reference_value`](Self::reference_value)):
  /// a weak reference whose value was collected stays empty.
  pub fn reference_ref(self, reference: sys::napi_ref) -> NResult<()> {
    let mut count = 0;
    // SAFETY: live env on its thread (Js::new); the reference was created
    // on it and is not deleted yet (the caller holds it); count is a live
    // local.
    check(unsafe { sys::napi_reference_ref(self.env, reference, &mut count) })
  }

  /// Makes `reference` weak (its count 1 → 0): it no longer keeps its value
  /// alive, and reads as gone once the value is collected.
  pub fn reference_unref(self, reference: sys::napi_ref) -> NResult<()> {
    let mut count = 0;
    // SAFETY: as in `reference_ref`.
    check(unsafe { sys::napi_reference_unref(self.env, reference, &mut count) })
  }

  pub fn reference_value(self, reference: sys::napi_ref) -> NResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); the reference was created
    // on it and is not deleted yet (callers hold it in live state).
    check(unsafe { sys::napi_get_reference_value(self.env, reference, &mut out) })?;
    if out.is_null() {
      return Err(Failure::Error(
        "atomics-waitasync: a reference is gone".into(),
      ));
    }
    Ok(out)
  }

  pub fn is_function(self, value: sys::napi_value) -> NResult<bool> {
    let mut kind = 0;
    // SAFETY: live env on its thread (Js::new); kind is a live local.
    check(unsafe { sys::napi_typeof(self.env, value, &mut kind) })?;
    Ok(kind == sys::ValueType::napi_function)
  }

  /// Calls `function` with `this` undefined. Any JS may run.
  pub fn call(
    self,
    function: sys::napi_value,
    args: &[sys::napi_value],
  ) -> NResult<sys::napi_value> {
    let this = self.undefined()?;
    let mut out = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); args holds args.len()
    // handles of this env; out is a live local.
    check(unsafe {
      sys::napi_call_function(
        self.env,
        this,
        function,
        args.len(),
        args.as_ptr(),
        &mut out,
      )
    })?;
    Ok(out)
  }

  /// Runs `body` on the elements of `array`, which must be a Uint32Array
  /// over a (non-shared) ArrayBuffer. No JS runs while `body` does, so
  /// nothing else reads or writes those elements meanwhile.
  pub fn with_u32_elements<T>(
    self,
    array: sys::napi_value,
    body: impl FnOnce(&mut [u32]) -> T,
  ) -> NResult<T> {
    let info = self.typedarray_info(array)?;
    if info.kind != sys::TypedarrayType::uint32_array || !self.is_arraybuffer(info.buffer)? {
      return Err(Failure::Type(
        "expected a Uint32Array over an ArrayBuffer".into(),
      ));
    }
    if info.length == 0 || info.data.is_null() {
      return Ok(body(&mut []));
    }
    // SAFETY: a Uint32Array's data is 4-aligned and holds `length` elements;
    // its buffer is not shared, so only this thread's JS can touch it, and
    // no JS runs during `body`; `array` (a handle in the caller's scope)
    // keeps the buffer alive for the call.
    let elements = unsafe { std::slice::from_raw_parts_mut(info.data.cast::<u32>(), info.length) };
    Ok(body(elements))
  }

  /// Runs `body` inside a fresh handle scope.
  pub fn scoped<T>(self, body: impl FnOnce() -> T) -> NResult<T> {
    let mut scope = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); scope is a live local.
    check(unsafe { sys::napi_open_handle_scope(self.env, &mut scope) })?;
    let result = body();
    // SAFETY: closes the scope opened above, on the same thread, after
    // every handle made in it is out of use.
    let _ = unsafe { sys::napi_close_handle_scope(self.env, scope) };
    Ok(result)
  }

  /// A new plain object.
  pub fn object(self) -> NResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); out is a live local.
    check(unsafe { sys::napi_create_object(self.env, &mut out) })?;
    Ok(out)
  }

  /// Defines `functions` on `object` as enumerable, read-only,
  /// non-configurable properties: JS can call them, and neither replace
  /// nor delete them.
  pub fn define_functions(
    self,
    object: sys::napi_value,
    functions: &[(&str, Callback)],
  ) -> NResult<()> {
    let names = functions
      .iter()
      .map(|(name, _)| CString::new(*name).map_err(|_| Failure::Error("NUL in a name".into())))
      .collect::<NResult<Vec<_>>>()?;
    let descriptors: Vec<_> = names
      .iter()
      .zip(functions)
      .map(|(name, (_, callback))| sys::napi_property_descriptor {
        utf8name: name.as_ptr(),
        name: ptr::null_mut(),
        method: Some(*callback),
        getter: None,
        setter: None,
        value: ptr::null_mut(),
        attributes: sys::PropertyAttributes::enumerable,
        data: ptr::null_mut(),
      })
      .collect();
    // SAFETY: live env on its thread (Js::new); object is its handle;
    // descriptors holds descriptors.len() entries whose names (in `names`)
    // outlive the call.
    check(unsafe {
      sys::napi_define_properties(self.env, object, descriptors.len(), descriptors.as_ptr())
    })
  }

  /// Throws an Error with `code` (its `code` property) and `message`.
  pub fn throw_with_code(self, code: &std::ffi::CStr, message: &str) {
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: live env on its thread (Js::new); code and message are
    // NUL-terminated and outlive the call.
    let _ = unsafe { sys::napi_throw_error(self.env, code.as_ptr(), message.as_ptr()) };
  }

  /// An ArrayBuffer over `len` bytes at `data`, which the caller keeps
  /// alive and never frees while any env may hold it (nothing finalizes
  /// it). Fails where the runtime forbids external buffers (V8 sandbox).
  ///
  /// # Safety
  /// `data` must be valid for reads and writes of `len` bytes for the
  /// process's lifetime.
  pub unsafe fn static_arraybuffer(
    self,
    data: *mut c_void,
    len: usize,
  ) -> NResult<sys::napi_value> {
    let mut buffer = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); `data` outlives every env
    // (the caller's contract); no finalizer; buffer is a live local.
    check(unsafe {
      sys::napi_create_external_arraybuffer(self.env, data, len, None, ptr::null_mut(), &mut buffer)
    })?;
    Ok(buffer)
  }

  /// A 4-byte ArrayBuffer over `word`'s memory, which the buffer keeps
  /// alive with a count of its own (dropped when it is collected).
  pub fn word_arraybuffer(self, word: &Arc<AtomicI32>) -> NResult<sys::napi_value> {
    /// Drops the buffer's count of the word.
    ///
    /// # Safety
    /// N-API calls it once, with the hint given below.
    unsafe extern "C" fn release(_env: sys::napi_env, _data: *mut c_void, hint: *mut c_void) {
      // SAFETY: `hint` is the `Arc::into_raw` below, released only here.
      drop(unsafe { Arc::from_raw(hint.cast_const().cast::<AtomicI32>()) });
    }
    let data = Arc::as_ptr(word).cast_mut().cast::<c_void>();
    let hint = Arc::into_raw(word.clone()).cast_mut().cast::<c_void>();
    let mut buffer = ptr::null_mut();
    // SAFETY: live env on its thread (Js::new); `data` lives as long as
    // the count in `hint`, which `release` drops when the buffer goes;
    // buffer is a live local.
    let status = unsafe {
      sys::napi_create_external_arraybuffer(self.env, data, 4, Some(release), hint, &mut buffer)
    };
    if let Err(failure) = check(status) {
      // SAFETY: not handed to N-API: the count is still ours to drop.
      drop(unsafe { Arc::from_raw(hint.cast_const().cast::<AtomicI32>()) });
      return Err(failure);
    }
    Ok(buffer)
  }

  /// Defines `object[name]` as a read-only data property holding `value`
  /// (not `[[Set]]`: an accessor a program put on `Object.prototype` never
  /// sees it, and cannot refuse it).
  pub fn define_value(
    self,
    object: sys::napi_value,
    name: &str,
    value: sys::napi_value,
  ) -> NResult<()> {
    let c_name = CString::new(name).map_err(|_| Failure::Error("NUL in a name".into()))?;
    let descriptor = sys::napi_property_descriptor {
      utf8name: c_name.as_ptr(),
      name: ptr::null_mut(),
      method: None,
      getter: None,
      setter: None,
      value,
      attributes: sys::PropertyAttributes::enumerable,
      data: ptr::null_mut(),
    };
    // SAFETY: live env on its thread (Js::new); object and value are its
    // handles; the descriptor and c_name outlive the call.
    check(unsafe { sys::napi_define_properties(self.env, object, 1, &descriptor) })
  }

  /// Throws `failure` as the matching JS error, unless an exception is
  /// already pending.
  fn throw(self, failure: Failure) {
    let mut pending = false;
    // SAFETY: live env on its thread (Js::new); pending is a live local.
    let _ = unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
    if pending {
      return;
    }
    let (kind, message) = match failure {
      Failure::Type(m) => (ErrorKind::Type, m),
      Failure::Range(m) => (ErrorKind::Range, m),
      Failure::Error(m) => (ErrorKind::Error, m),
      Failure::Pending => (
        ErrorKind::Error,
        "atomics-waitasync: N-API call failed".into(),
      ),
    };
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    let (env, code, text) = (self.env, ptr::null(), message.as_ptr());
    // Each call: live env on its thread; message is NUL-terminated and
    // outlives the call; a null code is allowed.
    let _ = match kind {
      // SAFETY: as above.
      ErrorKind::Type => unsafe { sys::napi_throw_type_error(env, code, text) },
      // SAFETY: as above.
      ErrorKind::Range => unsafe { sys::napi_throw_range_error(env, code, text) },
      // SAFETY: as above.
      ErrorKind::Error => unsafe { sys::napi_throw_error(env, code, text) },
    };
  }
}

/// Which JS error [`Js::throw`] throws. (Not a table of N-API's throw
/// functions: with napi's dyn-symbols those are Rust functions, without it
/// the host's `extern "C"` ones.)
enum ErrorKind {
  Type,
  Range,
  Error,
}

/// A raw N-API callback.
pub type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// Runs the body of a JS-facing callback: fetches up to `N` arguments
/// (missing ones are `undefined`), runs `body`, and turns a failure or a
/// panic into a thrown JS error, so that nothing unwinds across the FFI
/// boundary.
///
/// # Safety
/// `env` and `info` are the ones N-API passed to the callback, which is
/// running now.
pub unsafe fn entry<const N: usize>(
  env: sys::napi_env,
  info: sys::napi_callback_info,
  body: impl FnOnce(Js, [sys::napi_value; N]) -> NResult<sys::napi_value>,
) -> sys::napi_value {
  // SAFETY: N-API calls a callback on its env's thread with a live env;
  // `js` does not outlive this call.
  let js = unsafe { Js::new(env) };
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
      let undefined = js.undefined()?;
      for slot in &mut argv[argc..] {
        *slot = undefined;
      }
    }
    body(js, argv)
  }));
  match outcome {
    Ok(Ok(value)) => return value,
    Ok(Err(failure)) => js.throw(failure),
    Err(payload) => {
      // Not dropped: its Drop could panic, here outside the catch, and
      // unwind into N-API (an abort).
      std::mem::forget(payload);
      js.throw(Failure::Error(PANICKED.into()));
    }
  }
  ptr::null_mut()
}

/// An env's ThreadsafeFunction, as the signal of its mailbox
/// (`crate::wake::Mailbox`): what the core calls, from any thread, to have
/// the env drain it (resolver.rs).
#[derive(Clone, Copy)]
pub struct Tsfn(pub sys::napi_threadsafe_function);

// SAFETY: N-API allows any thread to call a ThreadsafeFunction; the
// mailbox calls it only under its lock, while open (before the cleanup
// hook closes it and releases the function).
unsafe impl Send for Tsfn {}
// SAFETY: as above.
unsafe impl Sync for Tsfn {}

impl Signal for Tsfn {
  fn signal(&self) -> bool {
    // SAFETY: the mailbox signals only while open, under its lock, and the
    // cleanup hook closes it under that lock before releasing the TSFN; a
    // non-blocking call may be made from any thread.
    let status = unsafe {
      sys::napi_call_threadsafe_function(
        self.0,
        ptr::null_mut(),
        sys::ThreadsafeFunctionCallMode::nonblocking,
      )
    };
    // Any failure (`closing`, or the queue could not grow): no call is
    // queued, so the mailbox takes the batch back and the caller passes
    // its wake-ups on (`Mailbox::deliver`).
    status == sys::Status::napi_ok
  }
}
