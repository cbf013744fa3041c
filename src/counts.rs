//! The registry's "may be waiting" counts (`Registry::may_wait`): one
//! byte per count, all zero at first, in memory that costs nothing until
//! a count is written. There are millions of them, so that an element
//! rarely shares its count with another that has a waiter (see
//! `crate::sync::MAY_WAIT_SLOTS`). A page becomes resident when a count
//! on it is first read-modify-written: by a waiter, or by a notify's
//! check (lib/atomics.js), one page per 4,096 neighbouring elements; up
//! to all 8 MB for a program that waits or notifies all over its memory.
//! (V8 counts the whole buffer as external memory in each thread that
//! takes it: `process.memoryUsage().external` shows 8 MB more.)

use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU8;

/// `len` zeroed `AtomicU8`s, for the owner's lifetime.
pub struct Counts {
  ptr: NonNull<AtomicU8>,
  len: usize,
  /// Whether `ptr` came from `mmap` (else from the global allocator).
  mapped: bool,
}

// SAFETY: Counts owns its `[AtomicU8]` as a Box would (nobody else frees
// or moves it), and atomics may be shared and sent between threads.
unsafe impl Send for Counts {}
// SAFETY: as above; every access through it is atomic.
unsafe impl Sync for Counts {}

impl Counts {
  /// `len` (> 0) counts of 0. On Linux an anonymous mapping, whose pages
  /// the kernel zeroes when first touched: a `calloc` of the same size may
  /// come from the heap and be cleared, and so paid for, up front.
  /// Elsewhere `alloc_zeroed`: lazy on macOS (large `calloc`s are fresh
  /// mappings), not known to be on Windows.
  pub fn zeroed(len: usize) -> Counts {
    assert!(len > 0);
    #[cfg(target_os = "linux")]
    {
      // SAFETY: a fresh private anonymous mapping, no address hint; the
      // result is checked before use.
      let ptr = unsafe {
        libc::mmap(
          std::ptr::null_mut(),
          len,
          libc::PROT_READ | libc::PROT_WRITE,
          libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
          -1,
          0,
        )
      };
      if ptr != libc::MAP_FAILED {
        // No transparent huge pages (where they are on for every mapping):
        // a 2 MB page would make a quarter of the counts resident at the
        // first touch. Advice only; its failure changes nothing else.
        // SAFETY: the mapping just made, of this length.
        unsafe { libc::madvise(ptr, len, libc::MADV_NOHUGEPAGE) };
        if let Some(ptr) = NonNull::new(ptr.cast()) {
          return Counts {
            ptr,
            len,
            mapped: true,
          };
        }
      }
    }
    let layout = std::alloc::Layout::array::<AtomicU8>(len).expect("counts fit in memory");
    // SAFETY: the layout's size is > 0 (len > 0, AtomicU8 is one byte).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    let Some(ptr) = NonNull::new(ptr.cast()) else {
      std::alloc::handle_alloc_error(layout)
    };
    Counts {
      ptr,
      len,
      mapped: false,
    }
  }
}

impl Deref for Counts {
  type Target = [AtomicU8];

  fn deref(&self) -> &[AtomicU8] {
    // SAFETY: `len` initialised bytes, owned for as long as `self`, and
    // an AtomicU8 has the size, alignment and bit validity of a u8.
    unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
  }
}

impl Drop for Counts {
  fn drop(&mut self) {
    if self.mapped {
      #[cfg(target_os = "linux")]
      // SAFETY: the mapping made in `zeroed`, of this length, unmapped once;
      // no reference into it outlives `self`.
      unsafe {
        libc::munmap(self.ptr.as_ptr().cast(), self.len);
      }
    } else {
      let layout = std::alloc::Layout::array::<AtomicU8>(self.len).expect("as allocated");
      // SAFETY: allocated in `zeroed` with this layout, freed once.
      unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), layout) };
    }
  }
}
