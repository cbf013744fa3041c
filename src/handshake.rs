//! The notifier thread's loop and its sleep/wake handshake with its
//! senders, apart from `timer.rs` and generic over what the loop runs
//! against (a [`Port`]: its end of the channel, its clock, how it parks),
//! so that `tests/loom_handshake.rs` model-checks this very code: the loop
//! below and the handshake, through `crate::sync`, against loom's atomics,
//! fences and threads. The real thread's port is in `timer.rs`.
//!
//! The thread publishes when it will wake by itself (`before_park`), then
//! looks at its channel once more and parks only if it is still empty. A
//! sender sends first, then reads what the thread published
//! (`wake_for_add` / `wake_for_cancel`). With a SeqCst fence between the two
//! steps on both sides, at least one side sees the other: either the thread
//! sees the message and does not park, or the sender sees the published
//! deadline and unparks it when it must. No wake-up is lost.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::Ordering;

use crate::sync::{fence, AtomicU64};

/// Published while the thread is awake (it will look at the channel).
pub const AWAKE: u64 = 0;
/// Published while the thread is parked with no deadline at all.
pub const NO_DEADLINE: u64 = u64::MAX;

/// When the notifier thread will wake by itself, as nanoseconds after its
/// epoch (never `AWAKE`: a deadline is at least 1), or `AWAKE` /
/// `NO_DEADLINE`.
pub struct Handshake {
  /// Written by the thread, read by senders; SeqCst, paired with fences.
  sleep_until: AtomicU64,
  /// 1 once the sender side is gone for good ([`Handshake::close`]).
  closed: AtomicU64,
}

impl Default for Handshake {
  fn default() -> Self {
    Handshake {
      sleep_until: AtomicU64::new(AWAKE),
      closed: AtomicU64::new(0),
    }
  }
}

impl Handshake {
  /// The thread, about to park until `until` (or `NO_DEADLINE`): publishes
  /// it. The caller then looks at its channel, and parks only if empty.
  pub fn before_park(&self, until: u64) {
    self.sleep_until.store(until, Ordering::SeqCst);
    fence(Ordering::SeqCst);
  }

  /// The thread, back from parking: awake, it will read the channel.
  pub fn after_park(&self) {
    self.sleep_until.store(AWAKE, Ordering::SeqCst);
  }

  /// A sender that has just sent a deadline at `at`: whether it must
  /// unpark the thread (it sleeps until later than `at`).
  #[must_use]
  pub fn wake_for_add(&self, at: u64) -> bool {
    fence(Ordering::SeqCst);
    at < self.sleep_until.load(Ordering::SeqCst)
  }

  /// A sender that has just sent the cancel of a deadline at `at`: whether
  /// it must unpark the thread, which it does only when the thread sleeps
  /// until that very deadline. (An earlier one is one the thread has yet
  /// to read, its add woke it or is about to, or one already expired; a
  /// later one can wait until the thread next wakes.)
  #[must_use]
  pub fn wake_for_cancel(&self, at: u64) -> bool {
    fence(Ordering::SeqCst);
    at == self.sleep_until.load(Ordering::SeqCst)
  }

  /// The sender side goes for good (`Timer::drop`): marks the handshake
  /// closed, then wakes the thread with `unpark`. The mark comes first, so
  /// that the thread, whenever it looks, either sees it or has a wake-up
  /// still to come after which it does. (A thread that ended when the
  /// handle's reference count fell to one could wake from this unpark,
  /// look before the count fell, and park for good.)
  pub fn close(&self, unpark: impl FnOnce()) {
    self.closed.store(1, Ordering::SeqCst);
    unpark();
  }

  /// What the thread has published: `AWAKE`, `NO_DEADLINE`, or the
  /// deadline it parks (or is about to park) until. For tests.
  pub fn published(&self) -> u64 {
    self.sleep_until.load(Ordering::SeqCst)
  }

  /// Whether [`Handshake::close`] was called.
  pub fn closed(&self) -> bool {
    self.closed.load(Ordering::SeqCst) != 0
  }
}

/// A message from a sender to the notifier thread. Deadlines are
/// nanoseconds after the thread's epoch (at least 1); `item` is what the
/// expire callback gets back when the deadline passes.
pub enum Message<T> {
  Add { at: u64, id: u64, item: T },
  Cancel { at: u64, id: u64 },
}

/// What the notifier loop runs against. The real thread's port
/// (`timer.rs`) is a crossbeam channel, `Instant` and `std::thread::park`;
/// the loom model's is an atomic message count and loom's `park`.
pub trait Port {
  /// What a deadline carries back to the expire callback.
  type Item;
  /// The next message already sent, if any; never blocks.
  fn try_recv(&self) -> Option<Message<Self::Item>>;
  /// Whether no message waits in the channel.
  fn is_empty(&self) -> bool;
  /// Now, in the deadlines' units.
  fn now(&self) -> u64;
  /// Parks the thread until `until`, or until unparked if `until` is
  /// `NO_DEADLINE`; it may return early.
  fn park(&self, until: u64);
  /// Whether every sender is gone: the loop then ends (it asks after
  /// reading every message). The real thread's answer is
  /// [`Handshake::closed`].
  fn alone(&self) -> bool;
  /// For tests: the thread holds `count` deadlines now.
  fn held(&self, _count: usize) {}
  /// For tests: the thread came back from parking.
  fn woke(&self) {}
}

/// The deadlines that have come due, handed to the expire callback, which
/// takes them one at a time (it is an iterator, earliest first). A
/// deadline counts as taken only once the callback is done with it: when
/// it asks for the next one, or returns. So the one in hand when it panics
/// is not lost (it had taken the deadline, not yet its waiter). Those it
/// has not taken when it panics go back to the loop, which hands them over
/// again (the first a little later, when it panicked having taken none:
/// see [`run`]); those it leaves when it returns normally are dropped.
pub struct Due<T> {
  /// The deadlines not taken yet; the first is in hand if `in_hand`.
  items: VecDeque<((u64, u64), T)>,
  /// Whether the first of `items` was handed out (a copy of it): it is
  /// taken at the next `next`.
  in_hand: bool,
}

impl<T: Clone> Iterator for Due<T> {
  type Item = T;

  fn next(&mut self) -> Option<T> {
    if std::mem::take(&mut self.in_hand) {
      self.items.pop_front();
    }
    let (_, item) = self.items.front()?;
    self.in_hand = true;
    Some(item.clone())
  }

  fn size_hint(&self) -> (usize, Option<usize>) {
    let left = self.items.len() - usize::from(self.in_hand);
    (left, Some(left))
  }
}

impl<T: Clone> ExactSizeIterator for Due<T> {}

/// How long the first deadline of a batch whose expire callback panicked
/// before taking anything waits before it is handed over again, in the
/// deadlines' units (nanoseconds for the real thread): at first, and at
/// most. It doubles each time the same deadline fails so.
pub const RETRY_FIRST: u64 = 1_000_000;
pub const RETRY_MAX: u64 = 1_000_000_000;

/// The notifier thread's loop: reads every message, hands every deadline
/// that has passed to `on_expire` (earliest first; a panic in it is
/// caught, and what it had not taken yet is handed over again), then
/// sleeps until the earliest deadline left, through the handshake. Returns
/// once [`Port::alone`].
///
/// A callback that panicked before taking even the first deadline would
/// panic again at once on the same batch, forever. That first deadline
/// goes back a little later ([`RETRY_FIRST`], doubling each time it fails
/// again, up to [`RETRY_MAX`]), so that each round makes progress with the
/// others and a callback that always panics costs a call now and then,
/// not a hot loop. It is never dropped: its waiter still times out if the
/// callback recovers. (Under its new deadline a cancel no longer finds
/// it; it is then handed over for nothing, which the callback must
/// tolerate anyway, as the real one does: its waiter is gone.)
pub fn run<P: Port>(port: &P, handshake: &Handshake, mut on_expire: impl FnMut(&mut Due<P::Item>))
where
  P::Item: Clone,
{
  // Ordered by (deadline, id): both the heap (its first entry is the next
  // to expire) and the index a cancel needs.
  let mut deadlines: BTreeMap<(u64, u64), P::Item> = BTreeMap::new();
  // By id: how long each deadline put back later waits if it fails again.
  // Empty unless a callback panicked; an entry goes once its deadline is
  // taken.
  let mut retry: BTreeMap<u64, u64> = BTreeMap::new();
  loop {
    // Take every message already queued before looking at the clock, so
    // a burst of adds and cancels costs one wake-up.
    while let Some(message) = port.try_recv() {
      match message {
        Message::Add { at, id, item } => {
          deadlines.insert((at, id), item);
        }
        Message::Cancel { at, id } => {
          deadlines.remove(&(at, id));
        }
      }
    }
    if port.alone() {
      return; // every sender is gone: no deadline matters any more
    }
    let now = port.now();
    let mut due = Due {
      items: VecDeque::new(),
      in_hand: false,
    };
    while let Some(entry) = deadlines.first_entry() {
      if entry.key().0 > now {
        break;
      }
      let key = *entry.key();
      due.items.push_back((key, entry.remove()));
    }
    port.held(deadlines.len());
    if !due.items.is_empty() {
      let handed = due.items.len();
      // Once some deadline failed: the ids handed, to forget those taken.
      let retried: Vec<u64> = if retry.is_empty() {
        Vec::new()
      } else {
        due.items.iter().map(|&((_, id), _)| id).collect()
      };
      // A panic ends this call only, not the thread (a dead notifier would
      // never time anything out again), and loses nothing the callback
      // had not taken: that goes back, to be handed over next time round.
      let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| on_expire(&mut due)));
      // The one in hand is taken if the callback returned, not if it
      // panicked (see `Due`).
      if outcome.is_ok() && std::mem::take(&mut due.in_hand) {
        due.items.pop_front();
      }
      let taken = handed - due.items.len();
      for id in retried.iter().take(taken) {
        retry.remove(id);
      }
      if let Err(payload) = outcome {
        // Its Drop could panic, outside any catch: leak it (a few bytes,
        // once per panic) rather than let it end the thread.
        std::mem::forget(payload);
        if taken == 0 {
          // It panicked before taking even the first: that one goes back
          // a little later (see the doc above).
          if let Some(((at, id), item)) = due.items.pop_front() {
            let wait = retry
              .get(&id)
              .map_or(RETRY_FIRST, |w| (w * 2).min(RETRY_MAX));
            retry.insert(id, wait);
            // Never NO_DEADLINE, which would mean no deadline at all.
            let later = now.max(at).saturating_add(wait).min(NO_DEADLINE - 1);
            deadlines.insert((later, id), item);
          }
        }
        deadlines.extend(due.items);
      }
      continue; // time passed in on_expire: look again before sleeping
    }
    let until = deadlines
      .first_key_value()
      .map_or(NO_DEADLINE, |(&(at, _), _)| at);
    handshake.before_park(until);
    if port.is_empty() {
      port.park(until);
      port.woke();
    }
    handshake.after_park();
  }
}
