//! Model checking of the notifier thread with loom: the very same
//! `src/handshake.rs` (the thread's loop, `handshake::run`, and its
//! sleep/wake handshake), compiled against loom's atomics and fences and
//! run on a loom thread through a model [`Port`], against senders that do
//! what `Timer::schedule` / `Timer::cancel` do (send, then ask the
//! handshake whether to unpark). The channel is an atomic message count,
//! written with Release and read with Acquire: weaker than crossbeam's
//! channel, so what holds here holds there.
//!
//! A lost wake-up shows as the thread parked for good with a message it
//! had to read: loom reports the deadlock.

mod sync {
  pub use loom::sync::atomic::{fence, AtomicU64};
}

#[path = "../src/handshake.rs"]
#[allow(
  dead_code,
  reason = "Handshake::published is for the timer's unit tests"
)]
mod handshake;

use std::cell::Cell;
use std::sync::atomic::Ordering;

use handshake::{Handshake, Message, Port};
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

/// One message of a model's script: an add (`true`) or a cancel, at, id.
type Scripted = (bool, u64, u64);

/// The channel: a fixed script, of which the first `sent` messages have
/// been sent. A sender sends the next one with [`Channel::send`].
struct Channel {
  handshake: Handshake,
  script: Vec<Scripted>,
  sent: AtomicUsize,
}

impl Channel {
  /// `script`, of which the first `already` are in the channel when the
  /// thread starts.
  fn new(script: Vec<Scripted>, already: usize) -> Arc<Channel> {
    Arc::new(Channel {
      handshake: Handshake::default(),
      script,
      sent: AtomicUsize::new(already),
    })
  }

  fn send(&self) {
    self.sent.fetch_add(1, Ordering::Release);
  }
}

/// When the thread's loop ends ([`Port::alone`]).
#[derive(Clone, Copy)]
enum Ends {
  /// Once it has read the whole script: a lost wake-up parks it for good.
  ReadAll,
  /// Once the sender side is dropped: `Handshake::close`, as `Timer::drop`
  /// does it.
  Dropped,
}

/// The thread's end: it has read `read` messages.
struct ModelPort {
  channel: Arc<Channel>,
  read: Cell<usize>,
  ends: Ends,
}

impl Port for ModelPort {
  type Item = ();

  fn try_recv(&self) -> Option<Message<()>> {
    let read = self.read.get();
    if read == self.channel.sent.load(Ordering::Acquire) {
      return None;
    }
    self.read.set(read + 1);
    let (add, at, id) = self.channel.script[read];
    Some(if add {
      Message::Add { at, id, item: () }
    } else {
      Message::Cancel { at, id }
    })
  }

  fn is_empty(&self) -> bool {
    self.channel.sent.load(Ordering::Acquire) == self.read.get()
  }

  fn now(&self) -> u64 {
    0 // no deadline comes due in these models
  }

  fn park(&self, until: u64) {
    if until >= FAR {
      thread::park(); // until FAR (or none): for good, in this model
    } else {
      thread::yield_now(); // a deadline soon: it wakes by itself
    }
  }

  fn alone(&self) -> bool {
    match self.ends {
      Ends::ReadAll => self.read.get() == self.channel.script.len(),
      Ends::Dropped => self.channel.handshake.closed(),
    }
  }
}

/// Starts the thread's loop on `channel`; it must never expire anything.
fn start(channel: &Arc<Channel>, ends: Ends) -> thread::JoinHandle<()> {
  let port = ModelPort {
    channel: channel.clone(),
    read: Cell::new(0),
    ends,
  };
  thread::spawn(move || {
    let mut expired = false;
    handshake::run(&port, &port.channel.handshake, |_| expired = true);
    assert!(!expired, "nothing comes due in this model");
  })
}

/// Two senders add deadlines earlier than the one the thread sleeps until:
/// whatever the interleaving, the thread reads both.
#[test]
fn an_earlier_deadline_always_wakes_the_thread() {
  loom::model(|| {
    let script = vec![(true, FAR, 0), (true, EARLY, 1), (true, EARLY, 2)];
    let channel = Channel::new(script, 1);
    let receiver = start(&channel, Ends::ReadAll);
    let handle = receiver.thread().clone();
    let other = {
      let (channel, handle) = (channel.clone(), handle.clone());
      thread::spawn(move || {
        channel.send();
        if channel.handshake.wake_for_add(EARLY) {
          handle.unpark();
        }
      })
    };
    channel.send();
    if channel.handshake.wake_for_add(EARLY) {
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
    let script = vec![(true, FAR, 0), (false, FAR, 0)];
    let channel = Channel::new(script, 1);
    let receiver = start(&channel, Ends::ReadAll);
    channel.send();
    if channel.handshake.wake_for_cancel(FAR) {
      receiver.thread().unpark();
    }
    receiver.join().unwrap();
  });
}

/// Dropping the timer while its thread sleeps until a far deadline ends
/// the thread, whenever the thread looks.
#[test]
fn dropping_the_timer_ends_the_thread() {
  loom::model(|| {
    let channel = Channel::new(vec![(true, FAR, 0)], 1);
    let receiver = start(&channel, Ends::Dropped);
    // Timer::drop, then the handle's fields go.
    channel.handshake.close(|| receiver.thread().unpark());
    drop(channel);
    receiver.join().unwrap();
  });
}
