//! A futex: a 32-bit word that a thread can sleep on while it holds an
//! expected value, and that another thread wakes it through. On Linux the
//! kernel's own (`FUTEX_WAIT_PRIVATE` / `FUTEX_WAKE_PRIVATE`): no lock, no
//! allocation, one system call to sleep and one to wake. Elsewhere a
//! mutex and condvar next to the word do the same (parking_lot's
//! `thread_parker` picks per platform the same way).
//!
//! What [`Futex::wait`] promises is the kernel's: it sleeps only if the
//! word still holds `expected` when it goes to sleep (checked atomically
//! against [`Futex::wake_one`]), and it may return early for no reason;
//! callers re-check the word and loop. `tests/loom_sync_wait.rs` swaps in
//! a model of exactly that (`tests/common/loom_futex.rs`).

use std::sync::atomic::AtomicU32;
use std::time::Instant;

/// How a [`Futex::wait`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
  /// Woken, or the word did not hold the expected value, or for no
  /// reason: look at the word again.
  Woken,
  /// The deadline passed.
  TimedOut,
}

/// See the module docs.
pub struct Futex {
  /// The word: read and written by the users with atomics.
  word: AtomicU32,
  #[cfg(not(target_os = "linux"))]
  fallback: fallback::Sleepers,
}

impl Futex {
  pub fn new(value: u32) -> Self {
    Futex {
      word: AtomicU32::new(value),
      #[cfg(not(target_os = "linux"))]
      fallback: fallback::Sleepers::default(),
    }
  }

  /// The word.
  pub fn word(&self) -> &AtomicU32 {
    &self.word
  }
}

/// The futex system call and the timeout it takes, laid out as the kernel
/// reads it. Not `libc::timespec`: on 32-bit targets its `time_t` is 64
/// bits wide where the libc crate is built for 64-bit time (musl 1.2's
/// layout, glibc's `_TIME_BITS=64`), and `SYS_futex` there reads two
/// 32-bit `long`s: it would take the seconds' high half for nanoseconds
/// (EINVAL, or the wrong timeout on big-endian). A relative timeout needs
/// no 64-bit seconds, so the old call with its own layout serves on every
/// kernel (`futex_time64` needs Linux 5.1, and the libc crate names it on
/// riscv32 only). riscv32 has only `futex_time64`; x32's `futex` takes
/// 64-bit fields.
#[cfg(target_os = "linux")]
mod sys {
  #[cfg(not(any(
    target_arch = "riscv32",
    all(target_arch = "x86_64", target_pointer_width = "32")
  )))]
  pub type Field = libc::c_long;
  #[cfg(any(
    target_arch = "riscv32",
    all(target_arch = "x86_64", target_pointer_width = "32")
  ))]
  pub type Field = i64;

  /// `__kernel_old_timespec` for `SYS_futex` (two `long`s), or
  /// `__kernel_timespec` where the call takes that (two `i64`s).
  #[repr(C)]
  pub struct Timespec {
    pub tv_sec: Field,
    pub tv_nsec: Field,
  }

  #[cfg(not(target_arch = "riscv32"))]
  pub use libc::SYS_futex as FUTEX;
  #[cfg(target_arch = "riscv32")]
  pub use libc::SYS_futex_time64 as FUTEX;
}

#[cfg(target_os = "linux")]
impl Futex {
  /// Sleeps while the word holds `expected`, until [`wake_one`](Self::wake_one)
  /// or `until`; may return early.
  pub fn wait(&self, expected: u32, until: Option<Instant>) -> Waited {
    let timeout = match until {
      None => None,
      Some(until) => {
        let now = Instant::now();
        if now >= until {
          return Waited::TimedOut;
        }
        let left = until - now;
        // Seconds past the field's range (68 years with 32 bits) are cut
        // off: the wait then times out early, and says "look again".
        let secs = sys::Field::try_from(left.as_secs()).unwrap_or(sys::Field::MAX);
        Some(sys::Timespec {
          tv_sec: secs,
          tv_nsec: sys::Field::from(left.subsec_nanos() as i32),
        })
      }
    };
    let cut_short = timeout
      .as_ref()
      .is_some_and(|t| t.tv_sec == sys::Field::MAX);
    let timeout_ptr = timeout
      .as_ref()
      .map_or(std::ptr::null(), |t| t as *const sys::Timespec);
    // SAFETY: the word is a live, aligned u32 for the length of the call;
    // FUTEX_WAIT reads it and the (relative) timeout, writes nothing.
    let r = unsafe {
      libc::syscall(
        sys::FUTEX,
        self.word.as_ptr(),
        libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
        expected,
        timeout_ptr,
      )
    };
    if r == -1
      && !cut_short
      && std::io::Error::last_os_error().raw_os_error() == Some(libc::ETIMEDOUT)
    {
      Waited::TimedOut
    } else {
      // Woken, EAGAIN (the word changed first), EINTR: look again.
      Waited::Woken
    }
  }

  /// Wakes one thread sleeping in [`wait`](Self::wait), if any.
  pub fn wake_one(&self) {
    // SAFETY: FUTEX_WAKE only uses the word's address as a key; nothing
    // is read or written through it.
    unsafe {
      libc::syscall(
        sys::FUTEX,
        self.word.as_ptr(),
        libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
        1,
      );
    }
  }
}

#[cfg(not(target_os = "linux"))]
impl Futex {
  /// Sleeps while the word holds `expected`, until [`wake_one`](Self::wake_one)
  /// or `until`; may return early.
  pub fn wait(&self, expected: u32, until: Option<Instant>) -> Waited {
    self.fallback.wait(&self.word, expected, until)
  }

  /// Wakes one thread sleeping in [`wait`](Self::wait), if any.
  pub fn wake_one(&self) {
    self.fallback.wake_one();
  }
}

#[cfg(not(target_os = "linux"))]
mod fallback {
  use std::sync::atomic::{AtomicU32, Ordering};
  use std::time::Instant;

  use parking_lot::{Condvar, Mutex};

  use super::Waited;

  /// The kernel's futex bucket, for one word: the check of the word and
  /// the sleep happen under the lock that a wake takes too, so a wake
  /// between them cannot be missed.
  #[derive(Default)]
  pub struct Sleepers {
    lock: Mutex<()>,
    condvar: Condvar,
  }

  impl Sleepers {
    pub fn wait(&self, word: &AtomicU32, expected: u32, until: Option<Instant>) -> Waited {
      let mut guard = self.lock.lock();
      if word.load(Ordering::SeqCst) != expected {
        return Waited::Woken;
      }
      match until {
        None => {
          self.condvar.wait(&mut guard);
          Waited::Woken
        }
        Some(until) => {
          if self.condvar.wait_until(&mut guard, until).timed_out() {
            Waited::TimedOut
          } else {
            Waited::Woken
          }
        }
      }
    }

    pub fn wake_one(&self) {
      let _guard = self.lock.lock();
      self.condvar.notify_one();
    }
  }
}
