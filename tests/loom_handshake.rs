//! Model checking of the notifier thread's sleep/wake handshake with loom:
//! the very same `src/handshake.rs`, compiled against loom's atomics and
//! fences, driven by a model of the thread's loop (`src/timer.rs run`) and
//! of its senders (`Timer::schedule` / `Timer::cancel`). The channel is an
//! atomic message count, written with Release and read with Acquire: weaker
//! than crossbeam's channel, so what holds here holds there.
//!
//! A lost wake-up shows as the thread parked for good with a message it
//! had to read: loom reports the deadlock.

mod sync {
  pub use loom::sync::atomic::{fence, AtomicU64};
}

#[path = "../src/handshake.rs"]
mod handshake;

use std::sync::atomic::Ordering;

use handshake::{Handshake, NO_DEADLINE};
use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;

/// The deadline the thread holds at the start, far away: a park until it
/// (or with no deadline) is for good in these models, so only a sender can
/// end it.
const FAR: u64 = 1_000;
/// Earlier than `FAR`: an add of it must wake a thread sleeping until
/// `FAR`; a park until it ends by itself.
const EARLY: u64 = 10;

struct Notifier {
  handshake: Handshake,
  /// Messages sent so far (the channel).
  sent: AtomicUsize,
}

/// The thread's loop: read every message, then publish when it would wake,
/// look at the channel once more, park if it is empty. Returns once it has
/// read `expected` messages; if a sender failed to wake it from a park
/// until `FAR`, it parks for good and loom reports a deadlock.
fn notifier_loop(
  notifier: &Notifier,
  expected: usize,
  mut earliest: u64,
  reads: impl Fn(u64) -> u64,
) {
  let mut read = 0;
  loop {
    let sent = notifier.sent.load(Ordering::Acquire);
    while read < sent {
      read += 1;
      earliest = reads(earliest);
    }
    if read == expected {
      return;
    }
    notifier.handshake.before_park(earliest);
    if notifier.sent.load(Ordering::Acquire) == read {
      if earliest >= FAR {
        thread::park(); // until FAR (or none): for good, in this model
      } else {
        thread::yield_now(); // a deadline soon: it wakes by itself
      }
    }
    notifier.handshake.after_park();
  }
}

/// Two senders add deadlines earlier than the one the thread sleeps until:
/// whatever the interleaving, the thread reads both.
#[test]
fn an_earlier_deadline_always_wakes_the_thread() {
  loom::model(|| {
    let notifier = Arc::new(Notifier {
      handshake: Handshake::default(),
      sent: AtomicUsize::new(0),
    });
    let thread_notifier = notifier.clone();
    let receiver = thread::spawn(move || notifier_loop(&thread_notifier, 2, FAR, |_| EARLY));
    let handle = receiver.thread().clone();
    let other = {
      let (notifier, handle) = (notifier.clone(), handle.clone());
      thread::spawn(move || {
        notifier.sent.fetch_add(1, Ordering::Release);
        if notifier.handshake.wake_for_add(EARLY) {
          handle.unpark();
        }
      })
    };
    notifier.sent.fetch_add(1, Ordering::Release);
    if notifier.handshake.wake_for_add(EARLY) {
      handle.unpark();
    }
    other.join().unwrap();
    receiver.join().unwrap();
  });
}

/// A cancel of the deadline the thread sleeps until wakes it (so that it
/// does not wake at that deadline for nothing): the thread reads it.
#[test]
fn cancelling_the_first_deadline_wakes_the_thread() {
  loom::model(|| {
    let notifier = Arc::new(Notifier {
      handshake: Handshake::default(),
      sent: AtomicUsize::new(0),
    });
    let thread_notifier = notifier.clone();
    // Reading the cancel of its only deadline leaves it with none.
    let receiver = thread::spawn(move || notifier_loop(&thread_notifier, 1, FAR, |_| NO_DEADLINE));
    notifier.sent.fetch_add(1, Ordering::Release);
    if notifier.handshake.wake_for_cancel(FAR) {
      receiver.thread().unpark();
    }
    receiver.join().unwrap();
  });
}
