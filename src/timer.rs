//! The notifier thread: one process-wide thread that owns every async
//! waiter's deadline.
//!
//! Deadlines arrive as messages on a crossbeam channel and live in an ordered
//! map keyed by `(deadline, id)`, which is both the heap (its first entry is
//! the next to expire) and the index a cancel needs (a notified waiter is
//! taken out in O(log n), so nothing is left behind until its deadline).
//! The thread sleeps in `recv_deadline` until the earliest deadline or the
//! next message, whichever comes first, and hands every entry that has come
//! due to the expire callback in one batch.
//!
//! Invariant: an `Add` for a waiter is sent before any `Cancel` for it can
//! be (the caller sends `Add` under the registry lock that any notifier must
//! take first), and the channel keeps each sender's order, so a cancel never
//! overtakes its add.
//!
//! The timer owns no JS handles and knows no N-API: the expire callback
//! decides what a timeout means (usually: remove the waiter from the
//! registry; if that succeeds, the waiter timed out).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use crossbeam_channel::{unbounded, RecvTimeoutError, Sender};

use crate::registry::WaiterId;

/// One deadline: which waiter, on which key, expires when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
  pub at: Instant,
  pub id: WaiterId,
  pub key: usize,
}

enum Message {
  Add(Deadline),
  Cancel { at: Instant, id: WaiterId },
}

/// Handle to the notifier thread. Dropping every handle ends the thread.
pub struct Timer {
  sender: Sender<Message>,
  pending: Arc<AtomicUsize>,
}

impl Timer {
  /// Starts the notifier thread. `on_expire` runs on that thread with every
  /// deadline that has passed, earliest first; it must not panic.
  pub fn start(on_expire: impl FnMut(Vec<Deadline>) + Send + 'static) -> std::io::Result<Timer> {
    let (sender, receiver) = unbounded::<Message>();
    let pending = Arc::new(AtomicUsize::new(0));
    let counter = pending.clone();
    thread::Builder::new()
      .name("atomics-waitasync-notifier".into())
      .spawn(move || run(receiver, counter, on_expire))?;
    Ok(Timer { sender, pending })
  }

  /// Schedules `deadline`. Cheap and non-blocking.
  pub fn add(&self, deadline: Deadline) {
    // The receiver lives as long as any sender: send cannot fail.
    let _ = self.sender.send(Message::Add(deadline));
  }

  /// Forgets a deadline (its waiter was notified). Unknown ones are ignored.
  pub fn cancel(&self, at: Instant, id: WaiterId) {
    let _ = self.sender.send(Message::Cancel { at, id });
  }

  /// Deadlines the thread holds now (messages still in flight not counted).
  pub fn pending(&self) -> usize {
    self.pending.load(Ordering::Relaxed)
  }
}

fn run(
  receiver: crossbeam_channel::Receiver<Message>,
  pending: Arc<AtomicUsize>,
  mut on_expire: impl FnMut(Vec<Deadline>),
) {
  let mut deadlines: BTreeMap<(Instant, WaiterId), usize> = BTreeMap::new();
  loop {
    let next = deadlines.first_key_value().map(|(&(at, _), _)| at);
    let first = match next {
      Some(at) => match receiver.recv_deadline(at) {
        Ok(message) => Some(message),
        Err(RecvTimeoutError::Timeout) => None,
        Err(RecvTimeoutError::Disconnected) => return,
      },
      None => match receiver.recv() {
        Ok(message) => Some(message),
        Err(_) => return,
      },
    };
    // Take every message already queued before looking at the clock, so
    // a burst of adds and cancels costs one wake-up.
    for message in first.into_iter().chain(receiver.try_iter()) {
      match message {
        Message::Add(d) => {
          deadlines.insert((d.at, d.id), d.key);
        }
        Message::Cancel { at, id } => {
          deadlines.remove(&(at, id));
        }
      }
    }
    let now = Instant::now();
    let mut due = Vec::new();
    while let Some(entry) = deadlines.first_entry() {
      let (at, id) = *entry.key();
      if at > now {
        break;
      }
      let key = entry.remove();
      due.push(Deadline { at, id, key });
    }
    pending.store(deadlines.len(), Ordering::Relaxed);
    if !due.is_empty() {
      on_expire(due);
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crossbeam_channel::unbounded;
  use std::time::Duration;

  fn deadline(ms: u64, id: WaiterId, base: Instant) -> Deadline {
    Deadline {
      at: base + Duration::from_millis(ms),
      id,
      key: id as usize * 4,
    }
  }

  #[test]
  fn expires_in_deadline_order_and_not_early() {
    let (tx, rx) = unbounded();
    let timer = Timer::start(move |due| tx.send((Instant::now(), due)).unwrap()).unwrap();
    let base = Instant::now();
    timer.add(deadline(30, 1, base));
    timer.add(deadline(10, 2, base));
    timer.add(deadline(20, 3, base));
    let mut order = Vec::new();
    while order.len() < 3 {
      let (when, due) = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("deadline fired");
      for d in due {
        assert!(when >= d.at, "fired before its deadline");
        order.push(d.id);
      }
    }
    assert_eq!(order, [2, 3, 1]);
    assert_eq!(timer.pending(), 0);
  }

  #[test]
  fn cancelled_deadline_never_fires_and_leaves_nothing() {
    let (tx, rx) = unbounded();
    let timer = Timer::start(move |due| tx.send(due).unwrap()).unwrap();
    let base = Instant::now();
    let cancelled = deadline(10, 7, base);
    timer.add(cancelled);
    timer.cancel(cancelled.at, cancelled.id);
    timer.add(deadline(40, 8, base));
    let due = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(due.iter().map(|d| d.id).collect::<Vec<_>>(), [8]);
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
    assert_eq!(timer.pending(), 0);
  }

  #[test]
  fn equal_deadlines_all_fire_once() {
    let (tx, rx) = unbounded();
    let timer = Timer::start(move |due| tx.send(due).unwrap()).unwrap();
    let at = Instant::now() + Duration::from_millis(10);
    for id in 0..100 {
      timer.add(Deadline { at, id, key: 0 });
    }
    let mut fired: Vec<WaiterId> = Vec::new();
    while fired.len() < 100 {
      let batch = rx.recv_timeout(Duration::from_secs(5)).unwrap();
      fired.extend(batch.iter().map(|d| d.id));
    }
    fired.sort_unstable();
    assert_eq!(
      fired,
      (0..100).collect::<Vec<_>>(),
      "each fires exactly once"
    );
    assert!(rx.recv_timeout(Duration::from_millis(20)).is_err());
  }
}
