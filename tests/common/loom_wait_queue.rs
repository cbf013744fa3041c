//! A model of the registry's wait and notify on one word, for the
//! word-protocol models (tests/loom_latch.rs, loom_semaphore.rs,
//! loom_barrier.rs): a wait queues only if the word still holds the
//! expected value, checked under the queue's lock (as the registry's bucket
//! lock), and sleeps until a notify takes it off; notify takes the oldest
//! waiters off in FIFO order.

use std::sync::atomic::Ordering::SeqCst;

use loom::sync::atomic::{AtomicI32, AtomicUsize};
use loom::sync::{Condvar, Mutex};

pub struct WaitQueue {
  /// Tickets of the waiters on the word, oldest first.
  queue: Mutex<Vec<usize>>,
  woken: Condvar,
  tickets: AtomicUsize,
}

impl WaitQueue {
  pub fn new() -> WaitQueue {
    WaitQueue {
      queue: Mutex::new(Vec::new()),
      woken: Condvar::new(),
      tickets: AtomicUsize::new(0),
    }
  }

  /// The binding's wait(i32a, index, expected) on `word`.
  pub fn wait(&self, word: &AtomicI32, expected: i32) {
    let mut queue = self.queue.lock().unwrap();
    if word.load(SeqCst) != expected {
      return; // "not-equal"
    }
    let ticket = self.tickets.fetch_add(1, SeqCst);
    queue.push(ticket);
    while queue.contains(&ticket) {
      queue = self.woken.wait(queue).unwrap();
    }
  }

  /// notify(i32a, index, count): wakes the `count` oldest waiters.
  pub fn notify(&self, count: usize) {
    let mut queue = self.queue.lock().unwrap();
    let n = count.min(queue.len());
    queue.drain(..n);
    drop(queue);
    self.woken.notify_all();
  }
}
