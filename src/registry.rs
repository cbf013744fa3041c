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
//!
//! A queue ([`Queue`]) is a `VecDeque` of `(id, waiter)` in id order: dense
//! (no per-node allocation, which is most of what a pending waiter costs
//! natively), O(1) at both ends. A waiter removed from the middle (timeout,
//! cancel) leaves a tombstone, found by binary search on the id; tombstones
//! at the ends are trimmed at once, the rest when they outnumber the live.
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
//!
//! Tests: `tests/registry.rs` (real threads) and `tests/loom_registry.rs`
//! (every interleaving of notify, timeout, cancel and teardown, by loom).

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::Ordering;

use crate::sync::{AtomicU64, AtomicUsize, Mutex, BUCKET_COUNT};

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
  queues: Mutex<HashMap<usize, Queue<W>, BuildAddressHasher>>,
}

/// One key's waiters, oldest first. Entries are in increasing id order;
/// `None` marks a waiter removed from the middle.
struct Queue<W> {
  entries: VecDeque<(WaiterId, Option<W>)>,
  /// Entries that are `Some`.
  live: usize,
}

impl<W> Default for Queue<W> {
  fn default() -> Self {
    Queue {
      entries: VecDeque::new(),
      live: 0,
    }
  }
}

impl<W> Queue<W> {
  /// Appends a waiter; `id` is above every id already queued.
  fn push(&mut self, id: WaiterId, waiter: W) {
    debug_assert!(self.entries.back().is_none_or(|&(last, _)| last < id));
    self.entries.push_back((id, Some(waiter)));
    self.live += 1;
  }

  /// Moves up to `count` waiters from the head into `into`, oldest first.
  fn pop_front_into(&mut self, count: usize, into: &mut Vec<(WaiterId, W)>) {
    let mut taken = 0;
    while taken < count {
      let Some((id, waiter)) = self.entries.pop_front() else {
        break;
      };
      if let Some(waiter) = waiter {
        into.push((id, waiter));
        taken += 1;
      }
    }
    self.live -= taken;
    self.trim();
  }

  /// Takes the waiter `id` out, wherever it is.
  fn remove(&mut self, id: WaiterId) -> Option<W> {
    let at = self.entries.binary_search_by_key(&id, |&(id, _)| id).ok()?;
    let waiter = self.entries[at].1.take()?;
    self.live -= 1;
    self.trim();
    let tombstones = self.entries.len() - self.live;
    if tombstones > 32 && tombstones > self.live {
      self.entries.retain(|(_, waiter)| waiter.is_some());
    }
    Some(waiter)
  }

  /// Drops tombstones at both ends, so the ends are always live, and gives
  /// memory back once a queue that was long is mostly gone.
  fn trim(&mut self) {
    while matches!(self.entries.front(), Some((_, None))) {
      self.entries.pop_front();
    }
    while matches!(self.entries.back(), Some((_, None))) {
      self.entries.pop_back();
    }
    let len = self.entries.len();
    if self.entries.capacity() > 64 && len < self.entries.capacity() / 4 {
      self.entries.shrink_to(len * 2);
    }
  }

  fn is_empty(&self) -> bool {
    self.live == 0
  }
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
    &self.buckets[bucket_index(key)]
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
    queues.entry(key).or_default().push(id, waiter);
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
    let mut woken = Vec::with_capacity(count.min(queue.live));
    queue.pop_front_into(count, &mut woken);
    if queue.is_empty() {
      queues.remove(&key);
    }
    self.len.fetch_sub(woken.len(), Ordering::Relaxed);
    woken
  }

  /// Takes one waiter out of `key`'s queue, wherever it is: a timeout or a
  /// cancel. `None` when it is no longer queued (notify, or another remover,
  /// got there first and owns its outcome).
  pub fn remove(&self, key: usize, id: WaiterId) -> Option<W> {
    let mut queues = self.bucket(key).queues.lock();
    let queue = queues.get_mut(&key)?;
    let waiter = queue.remove(id)?;
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
      .map_or(0, |queue| queue.live)
  }

  /// Whether two keys share a bucket (and so a lock); for tests that
  /// want collisions.
  pub fn same_bucket(a: usize, b: usize) -> bool {
    bucket_index(a) == bucket_index(b)
  }

  /// How many waiters are queued in the whole registry.
  pub fn len(&self) -> usize {
    self.len.load(Ordering::Relaxed)
  }

  pub fn is_empty(&self) -> bool {
    self.len() == 0
  }
}

/// A key's bucket: the top 8 bits of [`mix`], the best mixed ones.
fn bucket_index(key: usize) -> usize {
  (mix(key) >> 56) as usize % BUCKET_COUNT
}

/// Fibonacci hashing: multiplies by 2^64/φ so that addresses differing only
/// in their low bits (neighbouring elements) land in different buckets.
fn mix(key: usize) -> u64 {
  (key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The hash a bucket's map uses for a key. Not [`mix`]: hashbrown's tag
/// byte is the top 7 bits of the hash, and the keys of one bucket share
/// the top 8 bits of `mix`, so with `mix` every key of a bucket had the
/// same tag and probing came down to comparing keys. Another odd
/// multiplier gives top bits unrelated to the bucket, and folding the high
/// half down gives well-mixed low bits, which hashbrown probes by (the low
/// bits of a product depend only on the low bits of the key).
fn map_hash(key: u64) -> u64 {
  let product = key.wrapping_mul(0xD6E8_FEB8_6659_FD93);
  product ^ (product >> 32)
}

/// A `Hasher` for `usize` keys (addresses) and `u64` ones (waiter ids):
/// integers already unique, so one multiply does (SipHash would cost more
/// than the rest of a notify).
#[derive(Default)]
pub struct AddressHasher(u64);

impl Hasher for AddressHasher {
  fn finish(&self) -> u64 {
    self.0
  }

  fn write(&mut self, bytes: &[u8]) {
    for &byte in bytes {
      self.0 = map_hash(self.0 ^ u64::from(byte));
    }
  }

  fn write_usize(&mut self, key: usize) {
    self.0 = map_hash(key as u64);
  }

  fn write_u64(&mut self, id: u64) {
    self.0 = map_hash(id);
  }
}

/// Hashes addresses and waiter ids (both already unique integers) cheaply.
pub type BuildAddressHasher = BuildHasherDefault<AddressHasher>;
