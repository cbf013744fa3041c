//! The process's waiter core ([`core`]), and the robust wake-ups of a
//! word that every kind of primitive uses ([`wake_word`], [`pass_on`]).
//!
//! One waiter core per process, however many copies of the package are
//! loaded (two versions in node_modules, a bundled copy).
//!
//! Each copy's .node file is its own shared object, with statics of its
//! own: with a core each, a waiter made through one copy was never woken by
//! a notify through another. So every copy exports
//! [`atomics_waitasync_core_v1`], which hands out its own core with its ABI
//! marker ([`ABI`]: the core's layout version, the package version, the
//! compiler, the target, the profile and a hash of the sources and
//! rustflags; plain text in .rodata). On first
//! use (module init, in whichever thread loads it first) a copy walks the
//! process's loaded objects with `dl_iterate_phdr`, in link-map order,
//! which is load order, and takes the first one that exports the symbol:
//! - itself: it owns the process's core;
//! - another copy with the same marker: it uses that copy's core, through
//!   the [`CoreApi`](crate::core::CoreApi) trait object, so that all of it
//!   runs the owner's code (see `crate::core`);
//! - another copy with another marker: it refuses to load
//!   ([`ABI_MISMATCH`]), rather than keep a second registry that loses
//!   wake-ups.
//!
//! Every copy makes the same choice, whatever thread, in whatever order they
//! are used: objects are appended to the link map as they load, so the
//! first exporter a copy finds was loaded before it and stays first; and it
//! stays loaded, since whoever chooses it pins it (`RTLD_NODELETE`): a copy
//! that owns the core must not be unloaded with the env (a worker) that
//! loaded it while others run its code. On Windows the same walk runs over
//! the process's modules (`K32EnumProcessModules`, in load order: the
//! loader's in-load-order list), `GetProcAddress` finds the export, and
//! `GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_PIN)` pins. Two copies initialising at once in
//! two threads find the same first exporter; the owner's core is made once
//! (a `Lazy`) by whichever asks first.
//!
//! Copies from before this scheme export nothing and are not found: they
//! keep a registry of their own. On macOS and the other platforms (no walk
//! here yet) each copy keeps its own core, as before.

use std::ffi::{c_char, CStr};

use once_cell::sync::{Lazy, OnceCell};

use crate::core::CoreApi;

use super::ffi::Tsfn;

/// What a queue entry is: a parked thread, or an env's pending promise
/// (the core's waiter, with this layer's signal).
pub type Waiter = crate::core::Waiter<Tsfn>;

/// The waiter core, as this layer sees it: every call runs the code of the
/// copy of the package that owns it (see `crate::core`).
pub type Core = dyn CoreApi<Tsfn>;

/// This copy's own core: the registry, notifier and deadline epoch shared
/// by every env (main thread and workers), so that any thread's notify
/// finds any thread's waiters.
static OWN_CORE: Lazy<crate::core::Core<Tsfn>> =
  Lazy::new(|| crate::core::Core::new(retain_this_module));

/// The notifier thread outlives any one env and runs this copy's code:
/// keep this image mapped even if the env that loaded it unloads it.
fn retain_this_module() {
  napi::bindgen_prelude::retain_current_module_for_unload_safety();
}

/// The process's waiter core: this copy's own, or that of the copy of the
/// package loaded first (see the module docs).
pub fn core() -> &'static Core {
  // A copy that cannot share fails its module init (mod.rs `init`), so
  // none of its callbacks exists: its own core is never reached from JS.
  chosen().unwrap_or_else(|_| &*OWN_CORE)
}

/// Passes on wake-ups nobody will see (see `crate::wake::pass_on`). For
/// paths that have nobody to report to (teardown, settling); a panic in
/// the core there is dropped with what it had not passed on yet.
pub fn pass_on(keys: impl IntoIterator<Item = usize>) {
  let _ = core().pass_on(&mut keys.into_iter());
}

/// How the wake-up of a freed word went ([`wake_word`]).
pub enum Woke {
  /// The notify returned.
  Now,
  /// It failed twice; a thread of the core retries it.
  Later,
  /// It failed twice, and no thread could retry it: the caller owes it.
  Owed,
}

/// Wakes `count` waiters of the word at `key`, whose change (a lock freed,
/// permits given back, a wake-up owed) the caller has just made. (A panic
/// in the core comes back as Err: nothing here unwinds past the caller's
/// write. The retry is for one that came before
/// the notify did anything, as an injected one does. One that interrupted
/// a notify part-way may make the retry wake one more waiter than asked (a
/// spurious wake-up, which a lock's waiter takes for one), and loses any
/// async waiter the first try had already taken off its queue: see
/// `wake::wake`.)
pub fn wake_word(key: usize, count: usize, woke: impl FnOnce(usize)) -> Woke {
  let core = core();
  match core.notify(key, count).or_else(|_| core.notify(key, count)) {
    Ok(n) => {
      woke(n);
      Woke::Now
    }
    Err(_) if core.notify_later(key, count) == Ok(true) => Woke::Later,
    Err(_) => Woke::Owed,
  }
}

/// Wakes `count` waiters of the word at `key`, for a caller with nobody to
/// report to (a teardown, a finalizer): a wake-up the core could not
/// deliver is passed on.
pub fn wake_or_pass_on(key: usize, count: usize) {
  if matches!(wake_word(key, count, |_| {}), Woke::Owed) {
    pass_on([key]);
  }
}

/// The ABI marker: two copies share a core only if theirs are equal.
/// NUL-terminated; kept as one string in .rodata (the tests find it there
/// and patch a copied binary's to make it another version).
pub const ABI: &str = concat!(
  "atomics-waitasync core ABI ",
  // The layout of `Exported` and of the core's API: bump it with any
  // change to them that the package version would not show.
  "4",
  "; version ",
  env!("CARGO_PKG_VERSION"),
  "; ",
  env!("ATOMICS_WAITASYNC_RUSTC"),
  "; target ",
  env!("ATOMICS_WAITASYNC_TARGET"),
  "; profile ",
  env!("ATOMICS_WAITASYNC_PROFILE"),
  // The sources and rustflags it was built from (build.rs): two builds of
  // one version from different sources must not share a core.
  "; source fnv1a64 ",
  env!("ATOMICS_WAITASYNC_SOURCE"),
  "\0"
);

/// The code of the error a copy whose core cannot be shared fails to load
/// with (binding.js goes on to its next binary, and throws it if none loads).
pub const ABI_MISMATCH: &CStr = c"ERR_ATOMICS_WAITASYNC_ABI_MISMATCH";

/// What [`atomics_waitasync_core_v1`] hands out. Every version reads `abi`
/// first, and the rest only if it matches its own.
#[repr(C)]
pub struct Exported {
  /// [`ABI`], NUL-terminated.
  abi: *const c_char,
  core: &'static Core,
}

// SAFETY: `abi` points to a string in .rodata, never written; the core is
// `Sync` (a `CoreApi` is).
unsafe impl Sync for Exported {}
// SAFETY: as above.
unsafe impl Send for Exported {}

/// This copy's core, for other copies to find (see the module docs).
#[no_mangle]
pub extern "C" fn atomics_waitasync_core_v1() -> *const Exported {
  static EXPORTED: Lazy<Exported> = Lazy::new(|| {
    // Another copy may take this core before this copy's own module init
    // has run (it is loaded, and first in the link map, but Node has not
    // registered it yet): the core's code calls N-API (a waiter's
    // ThreadsafeFunction), so load this copy's N-API symbols now. napi-rs
    // does the same at every module init; the library handle stays. (On
    // Linux the dynamic loader bound them as this copy loaded: Cargo.toml.)
    #[cfg(any(
      target_env = "msvc",
      all(not(target_family = "wasm"), not(target_os = "linux"))
    ))]
    // SAFETY: loads the host process's N-API symbols into this copy's
    // table, as napi-rs's module registration does.
    std::mem::forget(unsafe { napi::sys::setup() });
    Exported {
      abi: ABI.as_ptr().cast(),
      core: &*OWN_CORE,
    }
  });
  &*EXPORTED
}

/// The process's core, as chosen on first use (see the module docs); an
/// error message when this copy cannot share it.
pub fn chosen() -> Result<&'static Core, &'static str> {
  static CHOSEN: OnceCell<Result<&'static Core, String>> = OnceCell::new();
  match CHOSEN.get_or_init(choose) {
    Ok(core) => Ok(*core),
    Err(message) => Err(message),
  }
}

#[cfg(not(any(target_os = "linux", windows)))]
fn choose() -> Result<&'static Core, String> {
  Ok(&*OWN_CORE)
}

/// The walk over the loaded objects, for this platform.
#[cfg(target_os = "linux")]
use linux as loader;
#[cfg(windows)]
use windows as loader;

/// An address inside this copy, to tell it among the loaded objects. Not
/// the address of `atomics_waitasync_core_v1`: on Linux that is exported,
/// so this copy reaches it through the GOT, and when an earlier copy was
/// loaded `RTLD_GLOBAL` its definition comes first in the global scope and
/// is what the GOT holds: this copy would take that copy for itself. A
/// private static is reached PC-relative, always this copy's own.
#[cfg(any(target_os = "linux", windows))]
static SELF: u8 = 0;

#[cfg(any(target_os = "linux", windows))]
fn choose() -> Result<&'static Core, String> {
  for attempt in 0..WALKS {
    if let Some(chosen) = walk()? {
      return Ok(chosen);
    }
    if cfg!(target_os = "linux") {
      // dl_iterate_phdr lists every object but the main program: a copy
      // it does not list is linked into that, which was loaded first.
      return Ok(&*OWN_CORE);
    }
    // A Windows listing without this copy (the module list changed under
    // it, which Microsoft warns of) proves nothing about the copies before
    // it: walk again, after the loading settles a little.
    std::thread::sleep(std::time::Duration::from_millis(1 << attempt));
  }
  Err(format!(
    "atomics-waitasync: this copy of the package did not find itself among the process's \
     loaded modules in {WALKS} walks, so it cannot tell whether another copy owns the waiters; \
     it does not load."
  ))
}

/// How many times [`choose`] walks the loaded objects before it gives up
/// (Windows; the pauses between walks add up to a quarter of a second).
#[cfg(any(target_os = "linux", windows))]
const WALKS: u32 = 8;

/// One walk of the loaded objects, in load order: the core of the first
/// copy of the package loaded before this one that can share it, else this
/// copy's own; `None` when the listing does not hold this copy.
#[cfg(any(target_os = "linux", windows))]
fn walk() -> Result<Option<&'static Core>, String> {
  let own = (&raw const SELF) as usize;
  let objects = loader::loaded_objects();
  // Only what was loaded before this copy can own the core.
  let Some(at) = objects.iter().position(|o| o.contains(own)) else {
    return Ok(None);
  };
  for object in &objects[..at] {
    // Held open until the choice is pinned: the object cannot be unloaded
    // in between. `None`: it was unloaded since the listing.
    let Some(opened) = object.open() else {
      continue;
    };
    let Some(exported) = exported_core(&opened) else {
      continue;
    };
    // SAFETY: `exported_core` found the symbol inside this object, which is a copy
    // of this package: what it returns starts with a pointer to a
    // NUL-terminated marker, in every version.
    let abi = unsafe { (*exported).abi };
    // SAFETY: as above: the marker, in .rodata, never written.
    let abi = unsafe { CStr::from_ptr(abi) };
    if abi.to_bytes_with_nul() == ABI.as_bytes() {
      opened.pin()?;
      // SAFETY: the markers match: the same source built the same way, so
      // `Exported` has this layout there, and its core lives for as long as
      // that copy stays loaded, which is for good (pinned above).
      return Ok(Some(unsafe { (*exported).core }));
    }
    return Err(mismatch(
      (&object.path(), &abi.to_string_lossy()),
      (&objects[at].path(), ABI.trim_end_matches('\0')),
    ));
  }
  // The first copy loaded: this one. Pin it, others may run its code. Its
  // code is running, so it is loaded and opens.
  let own_object = &objects[at];
  let opened = own_object.open().ok_or_else(|| {
    format!(
      "atomics-waitasync: {} could not look itself up in the loader; it does not load.",
      own_object.path()
    )
  })?;
  opened.pin()?;
  Ok(Some(&*OWN_CORE))
}

/// What `opened`'s export of `atomics_waitasync_core_v1` hands out, if the
/// object it holds is a copy of this package: the export is its own
/// (inside it, not a library's it links to) and gives a non-null pointer.
/// `None` otherwise.
#[cfg(any(target_os = "linux", windows))]
fn exported_core(opened: &loader::Opened<'_>) -> Option<*const Exported> {
  let symbol = opened.symbol();
  if symbol.is_null() || !opened.contains(symbol as usize) {
    return None;
  }
  // SAFETY: `symbol` is the loader's answer for `atomics_waitasync_core_v1`
  // in the object `opened` holds loaded, and lies inside that object: its
  // own export of that name, which every copy of the package defines with
  // this signature.
  let export = unsafe {
    std::mem::transmute::<*mut std::ffi::c_void, extern "C" fn() -> *const Exported>(symbol)
  };
  let exported = export();
  (!exported.is_null()).then_some(exported)
}

/// The message of [`ABI_MISMATCH`].
#[cfg(any(target_os = "linux", windows))]
fn mismatch((owner, owner_abi): (&str, &str), (own, own_abi): (&str, &str)) -> String {
  format!(
    "atomics-waitasync: two copies of the package are loaded in this process, and their waiter \
     cores cannot be shared:\n  {owner}\n    ({owner_abi}), loaded first, owns the process's \
     waiters;\n  {own}\n    ({own_abi}) cannot use them.\nA wait through one copy would never be \
     woken by a notify through the other, so this copy does not load. Dedupe the package so that \
     one copy is loaded: one version of atomics-waitasync for every dependent (`npm dedupe`, or \
     `overrides`/`resolutions` in package.json), and keep bundlers from inlining a second copy \
     (mark it external)."
  )
}

#[cfg(target_os = "linux")]
mod linux {
  //! The loaded objects, from `dl_iterate_phdr`, and what a copy needs to
  //! know of them. The declarations and the `RTLD_*` values are the `libc`
  //! crate's, right for each target (they differ: glibc on MIPS has
  //! `RTLD_NOLOAD` 0x8, where 0x4 is `RTLD_GLOBAL`). glibc before 2.34 has
  //! `dlopen` and `dlsym` in libdl, which Rust's std already links; musl
  //! has them in libc.

  use std::ffi::{c_int, c_void, CStr, CString};

  use libc::{
    dl_iterate_phdr, dl_phdr_info, dlclose, dlerror, dlopen, dlsym, PT_LOAD, RTLD_LAZY,
    RTLD_NODELETE, RTLD_NOLOAD,
  };

  /// A loaded shared object: its path, and where its segments are mapped.
  pub struct Object {
    name: CString,
    segments: Vec<(usize, usize)>,
  }

  /// Every loaded object with a path, in link-map order (load order). The
  /// callback only copies: it runs under the loader's lock, which `dlopen`
  /// takes too.
  pub fn loaded_objects() -> Vec<Object> {
    unsafe extern "C" fn collect(
      info: *mut dl_phdr_info,
      _size: usize,
      data: *mut c_void,
    ) -> c_int {
      // SAFETY: dl_iterate_phdr passes a valid info for the call.
      let info = unsafe { &*info };
      // SAFETY: `data` is the Vec below, not otherwise used meanwhile.
      let objects = unsafe { &mut *data.cast::<Vec<Object>>() };
      if info.dlpi_name.is_null() {
        return 0;
      }
      // SAFETY: a non-null dlpi_name is a NUL-terminated string.
      let name = unsafe { CStr::from_ptr(info.dlpi_name) };
      if name.is_empty() {
        return 0; // the main program
      }
      let mut segments = Vec::new();
      for i in 0..usize::from(info.dlpi_phnum) {
        // SAFETY: dlpi_phdr has dlpi_phnum entries.
        let phdr = unsafe { info.dlpi_phdr.add(i) };
        // SAFETY: as above; the loader keeps them for the call.
        let phdr = unsafe { &*phdr };
        if phdr.p_type == PT_LOAD {
          let start = (info.dlpi_addr as usize).wrapping_add(phdr.p_vaddr as usize);
          segments.push((start, start.wrapping_add(phdr.p_memsz as usize)));
        }
      }
      objects.push(Object {
        name: name.to_owned(),
        segments,
      });
      0
    }
    let mut objects: Vec<Object> = Vec::new();
    // SAFETY: `collect` matches the callback type and only uses `data` as
    // the Vec it is given, for the length of this call.
    unsafe { dl_iterate_phdr(Some(collect), (&raw mut objects).cast()) };
    objects
  }

  impl Object {
    pub fn path(&self) -> String {
      self.name.to_string_lossy().into_owned()
    }

    /// Whether `address` is in one of this object's segments.
    pub fn contains(&self, address: usize) -> bool {
      self
        .segments
        .iter()
        .any(|&(start, end)| (start..end).contains(&address))
    }

    /// A handle on this object, if it is still loaded (`RTLD_NOLOAD`: it
    /// loads nothing); the object stays loaded while the handle lives.
    pub fn open(&self) -> Option<Opened<'_>> {
      // SAFETY: RTLD_NOLOAD only looks the object up, loading nothing; the
      // handle is closed when `Opened` is dropped.
      let handle = unsafe { dlopen(self.name.as_ptr(), RTLD_LAZY | RTLD_NOLOAD) };
      // Not `then_some`: it would build the `Opened`, whose drop then
      // dlclose()s the null handle (a crash in glibc).
      if handle.is_null() {
        return None;
      }
      Some(Opened {
        object: self,
        handle,
      })
    }
  }

  /// A loaded object, held loaded by a `dlopen` handle until dropped.
  pub struct Opened<'a> {
    object: &'a Object,
    handle: *mut c_void,
  }

  impl Opened<'_> {
    /// Whether `address` is inside the object this holds.
    pub fn contains(&self, address: usize) -> bool {
      self.object.contains(address)
    }

    /// Where this object's `atomics_waitasync_core_v1` is, as the loader
    /// finds it (null if nowhere; it may be another object's, one this one
    /// links to: see [`exported_core`](super::exported_core)).
    pub fn symbol(&self) -> *mut c_void {
      // SAFETY: a live handle and a NUL-terminated name.
      unsafe { dlsym(self.handle, c"atomics_waitasync_core_v1".as_ptr()) }
    }

    /// Keeps this object loaded for good (`RTLD_NODELETE`): it owns the
    /// process's core, and copies other than itself run its code. Called
    /// while this handle still holds the object, so it cannot have been
    /// unloaded since it was chosen. An error (`dlerror`'s words) if the
    /// loader refuses.
    pub fn pin(&self) -> Result<(), String> {
      // SAFETY: looks up the loaded object, marking it never to be
      // unloaded; that handle is kept (never closed) on purpose.
      let pinned = unsafe {
        dlopen(
          self.object.name.as_ptr(),
          RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE,
        )
      };
      if !pinned.is_null() {
        return Ok(());
      }
      // SAFETY: dlerror's message, if any, is a NUL-terminated string
      // valid until the next dl* call in this thread; copied at once.
      let why = unsafe { dlerror() };
      let why = if why.is_null() {
        "unknown error".into()
      } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(why) }
          .to_string_lossy()
          .into_owned()
      };
      Err(format!(
        "atomics-waitasync: could not keep {} loaded for good (dlopen RTLD_NODELETE: {why}); \
         its waiter core cannot be shared safely, so this copy does not load.",
        self.object.path()
      ))
    }
  }

  impl Drop for Opened<'_> {
    fn drop(&mut self) {
      // SAFETY: the handle `open` got, closed once. A pinned object stays
      // loaded regardless.
      unsafe { dlclose(self.handle) };
    }
  }
}

#[cfg(windows)]
mod windows {
  //! The process's modules, from `K32EnumProcessModules` (kernel32 since
  //! Windows 7), with the same interface as the Linux walk. A module's
  //! handle is its base address; whether an address lies inside a module
  //! is asked of the loader (`GetModuleHandleExW` with FROM_ADDRESS), so a
  //! walk reads the module list once.
  //!
  //! The order: `K32EnumProcessModules` copies the loader's in-load-order
  //! list, which the loader appends to, so a copy loaded earlier comes
  //! first. Microsoft documents no order; this is how the function has
  //! always behaved (and Wine's too), and what the walk assumes.

  use std::ffi::{c_char, c_void};
  use std::mem::size_of;
  use std::ptr::null_mut;

  type Hmodule = *mut c_void;
  type Handle = *mut c_void;
  type Bool = i32;

  const GET_MODULE_HANDLE_EX_FLAG_PIN: u32 = 0x1;
  const GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT: u32 = 0x2;
  const GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS: u32 = 0x4;
  /// How often a listing that failed (the list changed during the call,
  /// as Microsoft warns it may) is tried again.
  const LISTINGS: usize = 8;

  #[link(name = "kernel32")]
  extern "system" {
    fn GetCurrentProcess() -> Handle;
    fn K32EnumProcessModules(
      process: Handle,
      modules: *mut Hmodule,
      bytes: u32,
      needed: *mut u32,
    ) -> Bool;
    fn GetModuleFileNameW(module: Hmodule, name: *mut u16, size: u32) -> u32;
    fn GetModuleHandleExW(flags: u32, name: *const u16, module: *mut Hmodule) -> Bool;
    fn GetProcAddress(module: Hmodule, name: *const c_char) -> *mut c_void;
    fn FreeLibrary(module: Hmodule) -> Bool;
    fn GetLastError() -> u32;
  }

  /// The module containing `address`, by the loader's own account; null
  /// when no module contains it. With `flags` 0 it takes a reference to
  /// the module (given back by `FreeLibrary`), with UNCHANGED_REFCOUNT none,
  /// with PIN it keeps the module loaded until the process ends.
  fn module_at(address: usize, flags: u32) -> Hmodule {
    let mut module: Hmodule = null_mut();
    // SAFETY: FROM_ADDRESS takes the name argument as an address to look
    // up, never read through; `module` is a valid out-parameter.
    let ok = unsafe {
      GetModuleHandleExW(
        GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | flags,
        address as *const u16,
        &raw mut module,
      )
    };
    if ok == 0 {
      null_mut()
    } else {
      module
    }
  }

  /// A loaded module, by its handle (its base address).
  pub struct Object {
    module: Hmodule,
  }

  /// Every loaded module, in load order (the executable first); empty if
  /// the list could not be read.
  pub fn loaded_objects() -> Vec<Object> {
    // SAFETY: a pseudo-handle for this process, nothing to close.
    let process = unsafe { GetCurrentProcess() };
    let mut modules: Vec<Hmodule> = vec![null_mut(); 256];
    for _ in 0..LISTINGS {
      let mut needed = 0u32;
      let bytes = u32::try_from(modules.len() * size_of::<Hmodule>()).unwrap_or(u32::MAX);
      // SAFETY: `modules` has room for `bytes` bytes of handles, and
      // `needed` is a valid out-parameter.
      let ok =
        unsafe { K32EnumProcessModules(process, modules.as_mut_ptr(), bytes, &raw mut needed) };
      if ok == 0 {
        continue;
      }
      let count = needed as usize / size_of::<Hmodule>();
      if count <= modules.len() {
        modules.truncate(count);
        return modules
          .into_iter()
          .map(|module| Object { module })
          .collect();
      }
      // More modules than room (some loaded meanwhile): again, larger.
      modules.resize(count + 16, null_mut());
    }
    Vec::new()
  }

  impl Object {
    pub fn path(&self) -> String {
      let mut name = vec![0u16; 32768];
      // SAFETY: `name` has room for that many UTF-16 units; a module
      // unloaded since makes the call return 0.
      let length = unsafe { GetModuleFileNameW(self.module, name.as_mut_ptr(), 32768) };
      if length == 0 {
        return format!("(the module at {:p})", self.module);
      }
      String::from_utf16_lossy(&name[..length as usize])
    }

    /// Whether `address` is inside this module.
    pub fn contains(&self, address: usize) -> bool {
      module_at(address, GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT) == self.module
    }

    /// A reference to this module, if it is still loaded: it stays loaded
    /// while the `Opened` lives.
    pub fn open(&self) -> Option<Opened<'_>> {
      let module = module_at(self.module as usize, 0);
      if module.is_null() {
        return None;
      }
      let opened = Opened {
        object: self,
        module,
      };
      // Another module now at that base (this one was unloaded since the
      // listing): `opened`'s drop gives its reference back.
      (module == self.module).then_some(opened)
    }
  }

  /// A loaded module, held loaded by a reference until dropped.
  pub struct Opened<'a> {
    object: &'a Object,
    module: Hmodule,
  }

  impl Opened<'_> {
    /// Whether `address` is inside the module this holds.
    pub fn contains(&self, address: usize) -> bool {
      self.object.contains(address)
    }

    /// Where this module's `atomics_waitasync_core_v1` is, as the loader
    /// finds it (null if nowhere; a forwarded export lies in another
    /// module: see [`exported_core`](super::exported_core)).
    pub fn symbol(&self) -> *mut c_void {
      // SAFETY: a referenced module and a NUL-terminated name.
      unsafe { GetProcAddress(self.module, c"atomics_waitasync_core_v1".as_ptr()) }
    }

    /// Keeps this module loaded until the process ends
    /// (`GET_MODULE_HANDLE_EX_FLAG_PIN`), as the Linux walk's
    /// `RTLD_NODELETE` does. Called while this handle still holds it.
    pub fn pin(&self) -> Result<(), String> {
      if module_at(self.module as usize, GET_MODULE_HANDLE_EX_FLAG_PIN) == self.module {
        return Ok(());
      }
      // SAFETY: no arguments; this thread's last error.
      let error = unsafe { GetLastError() };
      Err(format!(
        "atomics-waitasync: could not keep {} loaded for good (GetModuleHandleExW PIN: error \
         {error}); its waiter core cannot be shared safely, so this copy does not load.",
        self.object.path()
      ))
    }
  }

  impl Drop for Opened<'_> {
    fn drop(&mut self) {
      // SAFETY: gives back the one reference `open` took on this module,
      // once. A pinned module stays loaded regardless.
      unsafe { FreeLibrary(self.module) };
    }
  }
}
