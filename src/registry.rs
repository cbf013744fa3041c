//! The waiter registry: an address-keyed table of FIFO wait queues.
//!
//! This is the futex table behind `Atomics.wait`, `Atomics.waitAsync` and
//! `Atomics.notify`, in the shape of WebKit's ParkingLot and parking_lot_core:
//! a fixed array of buckets chosen by hashing the key (the absolute byte
//! address of the element waited on), each bucket a mutex over the queues of
//! the keys that hash to it.
//!
//! Invariants:
//! - **No lost wake-up.** [`Registry::enqueue_if`] runs the caller's value
//!   check and the enqueue under the same bucket lock that
//!   [`Registry::dequeue`] takes, so a store followed by a notify on another
//!   thread can never fall between the check and the enqueue.
//! - **FIFO per key.** Waiter ids come from one counter and are taken under
//!   the bucket lock, so within a key a higher id was enqueued later; each
//!   queue is ordered by id and notify takes the lowest ids first.
//! - **One owner per outcome.** A waiter leaves its queue exactly once: by
//!   notify ([`Registry::dequeue`]), by timeout or cancel ([`Registry::remove`]).
//!   Whoever takes it out under the lock decides its outcome; the loser gets
//!   `None` and does nothing.
//! - **Empty queues are dropped**, so a key that is no longer waited on costs
//!   nothing.
//!
//! The registry knows nothing of N-API: a key is a `usize`, a waiter is any
//! `W` the caller chooses, the value check is a closure. Closures run under a
//! bucket lock must not panic and must not call back into the registry.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;

/// Number of buckets. A power of two; enough that threads notifying
/// different addresses rarely share a lock.
const BUCKET_COUNT: usize = 256;

/// Identifies one waiter for its whole life; unique within a registry.
pub type WaiterId = u64;

/// What [`Registry::enqueue_if`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
  /// The value check passed and the waiter is queued under this id.
  Queued(WaiterId),
  /// The value check failed; nothing was queued.
  NotEqual,
}

/// Address-keyed FIFO wait queues. See the module docs for the invariants.
pub struct Registry<W> {
  buckets: Box<[Bucket<W>]>,
  next_id: AtomicU64,
  /// Waiters queued across all buckets; for tests and leak checks.
  len: AtomicUsize,
}

/// One lock's worth of queues, on its own cache line so that neighbouring
/// buckets taken by different threads do not false-share.
#[repr(align(64))]
struct Bucket<W> {
  /// Guarded by the mutex: the queues of every key that hashes here.
  queues: Mutex<HashMap<usize, BTreeMap<WaiterId, W>, BuildAddressHasher>>,
}

impl<W> Default for Registry<W> {
  fn default() -> Self {
    Self::new()
  }
}

impl<W> Registry<W> {
  pub fn new() -> Self {
    let buckets = (0..BUCKET_COUNT)
      .map(|_| Bucket {
        queues: Mutex::new(HashMap::default()),
      })
      .collect();
    Registry {
      buckets,
      next_id: AtomicU64::new(1),
      len: AtomicUsize::new(0),
    }
  }

  fn bucket(&self, key: usize) -> &Bucket<W> {
    &self.buckets[(mix(key) >> 56) as usize % BUCKET_COUNT]
  }

  /// Under the key's bucket lock: if `still_expected()` is true, queue the
  /// waiter made by `make(id)` at the tail of `key`'s queue.
  ///
  /// `make` receives the new id before the waiter becomes visible to any
  /// other thread; it may record the id elsewhere (a timer, say) and be sure
  /// that nothing can dequeue the waiter first. Neither closure may panic or
  /// call into this registry.
  pub fn enqueue_if(
    &self,
    key: usize,
    still_expected: impl FnOnce() -> bool,
    make: impl FnOnce(WaiterId) -> W,
  ) -> Enqueued {
    let mut queues = self.bucket(key).queues.lock();
    if !still_expected() {
      return Enqueued::NotEqual;
    }
    let id = self.next_id.fetch_add(1, Ordering::Relaxed);
    let waiter = make(id);
    queues.entry(key).or_default().insert(id, waiter);
    self.len.fetch_add(1, Ordering::Relaxed);
    Enqueued::Queued(id)
  }

  /// Removes up to `count` waiters from the head of `key`'s queue, oldest
  /// first, and returns them. The caller wakes them after the lock is gone.
  pub fn dequeue(&self, key: usize, count: usize) -> Vec<(WaiterId, W)> {
    if count == 0 {
      return Vec::new();
    }
    let mut queues = self.bucket(key).queues.lock();
    let Some(queue) = queues.get_mut(&key) else {
      return Vec::new();
    };
    let woken: Vec<(WaiterId, W)> = if count >= queue.len() {
      let all = std::mem::take(queue);
      queues.remove(&key);
      all.into_iter().collect()
    } else {
      let mut woken = Vec::with_capacity(count);
      while woken.len() < count {
        match queue.pop_first() {
          Some(entry) => woken.push(entry),
          None => break,
        }
      }
      woken
    };
    self.len.fetch_sub(woken.len(), Ordering::Relaxed);
    woken
  }

  /// Takes one waiter out of `key`'s queue, wherever it is: a timeout or a
  /// cancel. `None` when it is no longer queued (notify, or another remover,
  /// got there first and owns its outcome).
  pub fn remove(&self, key: usize, id: WaiterId) -> Option<W> {
    let mut queues = self.bucket(key).queues.lock();
    let queue = queues.get_mut(&key)?;
    let waiter = queue.remove(&id)?;
    if queue.is_empty() {
      queues.remove(&key);
    }
    self.len.fetch_sub(1, Ordering::Relaxed);
    Some(waiter)
  }

  /// How many waiters are queued on `key`.
  pub fn waiters_on(&self, key: usize) -> usize {
    self
      .bucket(key)
      .queues
      .lock()
      .get(&key)
      .map_or(0, BTreeMap::len)
  }

  /// How many waiters are queued in the whole registry.
  pub fn len(&self) -> usize {
    self.len.load(Ordering::Relaxed)
  }

  pub fn is_empty(&self) -> bool {
    self.len() == 0
  }
}

/// Fibonacci hashing: multiplies by 2^64/φ so that addresses differing only
/// in their low bits (neighbouring elements) land in different buckets.
fn mix(key: usize) -> u64 {
  (key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// A `Hasher` for `usize` keys that are already well spread by [`mix`];
/// SipHash would cost more than the rest of a notify.
#[derive(Default)]
pub struct AddressHasher(u64);

impl Hasher for AddressHasher {
  fn finish(&self) -> u64 {
    self.0
  }

  fn write(&mut self, bytes: &[u8]) {
    for &byte in bytes {
      self.0 = mix((self.0 as usize) ^ byte as usize);
    }
  }

  fn write_usize(&mut self, key: usize) {
    self.0 = mix(key);
  }

  fn write_u64(&mut self, id: u64) {
    self.0 = mix(id as usize);
  }
}

/// Hashes addresses and waiter ids (both already unique integers) cheaply.
pub type BuildAddressHasher = BuildHasherDefault<AddressHasher>;

#[cfg(test)]
mod tests {
  use super::*;
  use std::sync::atomic::AtomicI32;
  use std::sync::{Arc, Barrier};
  use std::thread;

  fn queue(registry: &Registry<u32>, key: usize, tag: u32) -> WaiterId {
    match registry.enqueue_if(key, || true, |_| tag) {
      Enqueued::Queued(id) => id,
      Enqueued::NotEqual => panic!("value check passed, yet not queued"),
    }
  }

  #[test]
  fn dequeues_in_fifo_order() {
    let registry = Registry::new();
    for tag in 0..10 {
      queue(&registry, 8, tag);
    }
    let first: Vec<u32> = registry.dequeue(8, 3).into_iter().map(|(_, w)| w).collect();
    assert_eq!(first, [0, 1, 2]);
    let rest: Vec<u32> = registry
      .dequeue(8, usize::MAX)
      .into_iter()
      .map(|(_, w)| w)
      .collect();
    assert_eq!(rest, [3, 4, 5, 6, 7, 8, 9]);
    assert!(registry.is_empty());
  }

  #[test]
  fn counts_only_what_it_dequeues() {
    let registry = Registry::new();
    queue(&registry, 16, 1);
    queue(&registry, 16, 2);
    assert_eq!(registry.dequeue(16, 0).len(), 0);
    assert_eq!(registry.dequeue(24, 5).len(), 0, "other key");
    assert_eq!(registry.dequeue(16, 5).len(), 2);
    assert_eq!(registry.dequeue(16, 5).len(), 0);
    assert_eq!(registry.len(), 0);
  }

  #[test]
  fn keys_are_independent() {
    let registry = Registry::new();
    queue(&registry, 0, 0);
    queue(&registry, 4, 4);
    queue(&registry, 4, 5);
    assert_eq!(registry.waiters_on(0), 1);
    assert_eq!(registry.waiters_on(4), 2);
    assert_eq!(registry.dequeue(4, 1)[0].1, 4);
    assert_eq!(registry.waiters_on(0), 1);
  }

  #[test]
  fn failed_check_queues_nothing() {
    let registry: Registry<u32> = Registry::new();
    let mut made = false;
    let outcome = registry.enqueue_if(
      0,
      || false,
      |_| {
        made = true;
        0
      },
    );
    assert_eq!(outcome, Enqueued::NotEqual);
    assert!(!made);
    assert!(registry.is_empty());
  }

  #[test]
  fn remove_takes_from_the_middle_and_only_once() {
    let registry = Registry::new();
    let ids: Vec<WaiterId> = (0..5).map(|tag| queue(&registry, 32, tag)).collect();
    assert_eq!(registry.remove(32, ids[2]), Some(2));
    assert_eq!(registry.remove(32, ids[2]), None, "second remover loses");
    let left: Vec<u32> = registry
      .dequeue(32, usize::MAX)
      .into_iter()
      .map(|(_, w)| w)
      .collect();
    assert_eq!(left, [0, 1, 3, 4]);
    assert_eq!(registry.remove(32, ids[0]), None, "notify won");
  }

  /// Each of `threads` threads races a notify, a timeout-style remove and a
  /// cancel-style remove over the same waiters: every waiter has exactly one
  /// owner, and the total of all three equals what was queued.
  fn race_notify_timeout_cancel(threads: usize, waiters: usize) {
    let registry = Arc::new(Registry::<usize>::new());
    let ids: Vec<WaiterId> = (0..waiters)
      .map(|tag| queue_usize(&registry, 64, tag))
      .collect();
    let ids = Arc::new(ids);
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
      .map(|t| {
        let (registry, ids, barrier) = (registry.clone(), ids.clone(), barrier.clone());
        thread::spawn(move || {
          barrier.wait();
          let mut owned = Vec::new();
          for (i, &id) in ids.iter().enumerate() {
            if (i + t) % 3 == 0 {
              owned.extend(registry.dequeue(64, 1).into_iter().map(|(_, w)| w));
            } else if let Some(w) = registry.remove(64, id) {
              owned.push(w);
            }
          }
          owned
        })
      })
      .collect();
    let mut owned: Vec<usize> = handles
      .into_iter()
      .flat_map(|h| h.join().unwrap())
      .collect();
    owned.extend(registry.dequeue(64, usize::MAX).into_iter().map(|(_, w)| w));
    owned.sort_unstable();
    assert_eq!(
      owned,
      (0..waiters).collect::<Vec<_>>(),
      "each waiter owned exactly once"
    );
    assert!(registry.is_empty());
  }

  fn queue_usize(registry: &Registry<usize>, key: usize, tag: usize) -> WaiterId {
    match registry.enqueue_if(key, || true, |_| tag) {
      Enqueued::Queued(id) => id,
      Enqueued::NotEqual => unreachable!(),
    }
  }

  /// The lost-wake-up property with a real value: waiters check `cell == 0`
  /// under the lock; the notifier stores 1, then notifies. A waiter either
  /// sees 1 (not-equal) or is queued before the notify and gets woken.
  fn no_lost_wakeup(threads: usize, rounds: usize) {
    for _ in 0..rounds {
      let registry = Arc::new(Registry::<usize>::new());
      let cell = Arc::new(AtomicI32::new(0));
      let barrier = Arc::new(Barrier::new(threads + 1));
      let waiters: Vec<_> = (0..threads)
        .map(|t| {
          let (registry, cell, barrier) = (registry.clone(), cell.clone(), barrier.clone());
          thread::spawn(move || {
            barrier.wait();
            registry.enqueue_if(72, || cell.load(Ordering::SeqCst) == 0, |_| t)
          })
        })
        .collect();
      barrier.wait();
      cell.store(1, Ordering::SeqCst);
      let mut woken = registry.dequeue(72, usize::MAX).len();
      let queued = waiters
        .into_iter()
        .map(|h| h.join().unwrap())
        .filter(|e| matches!(e, Enqueued::Queued(_)))
        .count();
      // A waiter that passed its check after the store is impossible; one
      // that passed before the store but queued after the dequeue is the
      // lost wake-up. Both would leave `queued > woken`.
      woken += registry.dequeue(72, usize::MAX).len();
      assert_eq!(queued, woken);
      assert!(registry.dequeue(72, usize::MAX).is_empty());
    }
  }

  macro_rules! matrix {
    ($($name:ident: $body:expr;)*) => {$(
      #[test]
      fn $name() {
        $body
      }
    )*};
  }

  matrix! {
    race_2_threads: race_notify_timeout_cancel(2, 1_000);
    race_4_threads: race_notify_timeout_cancel(4, 2_000);
    race_8_threads: race_notify_timeout_cancel(8, 4_000);
    lost_wakeup_2_threads: no_lost_wakeup(2, 200);
    lost_wakeup_8_threads: no_lost_wakeup(8, 100);
  }

  #[test]
  fn fifo_across_threads_by_enqueue_order() {
    // Threads enqueue one at a time, handing a token around; the queue must
    // come back in exactly that order.
    let registry = Arc::new(Registry::<usize>::new());
    let turn = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..4)
      .map(|t| {
        let (registry, turn) = (registry.clone(), turn.clone());
        thread::spawn(move || {
          for round in 0..50 {
            let me = round * 4 + t;
            while turn.load(Ordering::Acquire) != me {
              std::hint::spin_loop();
            }
            queue_usize(&registry, 80, me);
            turn.store(me + 1, Ordering::Release);
          }
        })
      })
      .collect();
    handles.into_iter().for_each(|h| h.join().unwrap());
    let order: Vec<usize> = registry
      .dequeue(80, usize::MAX)
      .into_iter()
      .map(|(_, w)| w)
      .collect();
    assert_eq!(order, (0..200).collect::<Vec<_>>());
  }
}
