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
//!   nothing; except that each bucket keeps its last emptied queue, if
//!   small ([`SPARE_CAPACITY`]), for the next waiter on that key or its
//!   storage for the next new queue, so that waiters that come and go one
//!   at a time (a lock, a waitAsync → notify loop) allocate nothing.
//!
//! - **"Someone may be waiting", readable without a lock.** Each key maps
//!   to one of [`MAY_WAIT_SLOTS`] counts ([`may_wait_slot`], from the low
//!   32 bits of the address, so JavaScript can compute it too), the number
//!   of waiters queued, or about to be, on the keys of that slot. A waiter
//!   adds itself to its count *before* its value check; it is taken off
//!   the count only once it has left its queue. A notifier stores the new
//!   value (any kind of store), then reads the count with a SeqCst
//!   read-modify-write ([`Registry::may_wait`]; `Atomics.add(counts, slot,
//!   0)` in JavaScript). Every change of a count is a read-modify-write, so
//!   if the notifier's reads 0, it comes before the waiter's increment in
//!   the count's modification order, the increment reads from it
//!   (release → acquire), and so the waiter's value check sees the new
//!   value and it does not queue. So a count of 0 lets notify return 0
//!   without the lock (as parking_lot's has-waiters bit); a count above 0
//!   says nothing (other keys share it): take the lock.
//!   `tests/loom_registry.rs` checks this with loom.
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

use smallvec::SmallVec;

use crate::sync::{AtomicU32, AtomicU64, AtomicUsize, Mutex, BUCKET_COUNT, MAY_WAIT_SLOTS};

/// Identifies one waiter for its whole life; unique within a registry.
pub type WaiterId = u64;

/// The waiters one [`Registry::dequeue`] took, oldest first: inline when
/// there is one (a lock's notify, a ping-pong), so that a notify that
/// wakes one waiter allocates nothing.
pub type Dequeued<W> = SmallVec<[(WaiterId, W); 1]>;

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
  /// Waiters queued (or being queued) per [`may_wait_slot`]; see the
  /// module docs. Never moves once made: JavaScript reads it in place.
  may_wait: Box<[AtomicU32]>,
}

/// One lock's worth of queues, on its own cache line so that neighbouring
/// buckets taken by different threads do not false-share.
#[repr(align(64))]
struct Bucket<W> {
  /// Guarded by the mutex: the queues of every key that hashes here.
  queues: Mutex<Queues<W>>,
}

/// The largest capacity of an empty queue's storage that its bucket keeps
/// for reuse ([`Queues::idle`]): at most 256 buckets × 8 entries × 32 bytes
/// (and a map entry each) stay allocated once the waiters are gone.
const SPARE_CAPACITY: usize = 8;

/// What a bucket's lock guards.
struct Queues<W> {
  /// The queue of every key with waiters that hashes here, and at most
  /// one empty one: `idle`'s.
  map: HashMap<usize, Queue<W>, BuildAddressHasher>,
  /// The key of the last queue here to become empty, if its storage is
  /// small: that queue stays in `map`, so that the next waiter on that key
  /// finds it (a waitAsync → notify loop, a lock: no hash-map insert and
  /// remove, no malloc and free per waiter, ~450 instructions), and the
  /// next new queue on another key takes its storage.
  idle: Option<usize>,
}

impl<W> Queues<W> {
  /// The queue of `key`, made (with the idle queue's storage, if any) if
  /// it has none.
  fn get_or_make(&mut self, key: usize) -> &mut Queue<W> {
    if self.idle == Some(key) {
      self.idle = None;
    } else if !self.map.contains_key(&key) {
      let entries = match self.idle.take() {
        Some(idle) => self.map.remove(&idle).map(|q| q.entries),
        None => None,
      };
      self.map.insert(
        key,
        Queue {
          entries: entries.unwrap_or_default(),
          live: 0,
        },
      );
    }
    self.map.entry(key).or_default()
  }

  /// `key`'s queue has become empty: it stays as the idle one if its
  /// storage is small (dropping the previous idle one), or is dropped.
  fn drop_queue(&mut self, key: usize) {
    if self.idle == Some(key) {
      return;
    }
    let small = self
      .map
      .get(&key)
      .is_some_and(|queue| queue.entries.capacity() <= SPARE_CAPACITY);
    if !small {
      self.map.remove(&key);
    } else if let Some(idle) = self.idle.replace(key) {
      self.map.remove(&idle);
    }
  }
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
  fn pop_front_into(&mut self, count: usize, into: &mut Dequeued<W>) {
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
        queues: Mutex::new(Queues {
          map: HashMap::default(),
          idle: None,
        }),
      })
      .collect();
    Registry {
      buckets,
      next_id: AtomicU64::new(1),
      len: AtomicUsize::new(0),
      may_wait: (0..MAY_WAIT_SLOTS).map(|_| AtomicU32::new(0)).collect(),
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
    // Counted before the value check: a notifier that then reads a count
    // of 0 has stored its value before this check reads it.
    let may_wait = &self.may_wait[may_wait_slot(key)];
    may_wait.fetch_add(1, Ordering::SeqCst);
    if !still_expected() {
      may_wait.fetch_sub(1, Ordering::SeqCst);
      return Enqueued::NotEqual;
    }
    let id = self.next_id.fetch_add(1, Ordering::Relaxed);
    let waiter = make(id);
    queues.get_or_make(key).push(id, waiter);
    self.len.fetch_add(1, Ordering::Relaxed);
    Enqueued::Queued(id)
  }

  /// Removes up to `count` waiters from the head of `key`'s queue, oldest
  /// first, and returns them. The caller wakes them after the lock is gone.
  pub fn dequeue(&self, key: usize, count: usize) -> Dequeued<W> {
    if count == 0 {
      return Dequeued::new();
    }
    let mut queues = self.bucket(key).queues.lock();
    let Some(queue) = queues.map.get_mut(&key) else {
      return Dequeued::new();
    };
    let mut woken = Dequeued::with_capacity(count.min(queue.live));
    queue.pop_front_into(count, &mut woken);
    if queue.is_empty() {
      queues.drop_queue(key);
    }
    self.len.fetch_sub(woken.len(), Ordering::Relaxed);
    self.uncount(key, woken.len());
    woken
  }

  /// Takes one waiter out of `key`'s queue, wherever it is: a timeout or a
  /// cancel. `None` when it is no longer queued (notify, or another remover,
  /// got there first and owns its outcome).
  pub fn remove(&self, key: usize, id: WaiterId) -> Option<W> {
    let mut queues = self.bucket(key).queues.lock();
    let queue = queues.map.get_mut(&key)?;
    let waiter = queue.remove(id)?;
    if queue.is_empty() {
      queues.drop_queue(key);
    }
    self.len.fetch_sub(1, Ordering::Relaxed);
    self.uncount(key, 1);
    Some(waiter)
  }

  /// `n` waiters on `key` have left their queue.
  fn uncount(&self, key: usize, n: usize) {
    if n > 0 {
      self.may_wait[may_wait_slot(key)].fetch_sub(n as u32, Ordering::SeqCst);
    }
  }

  /// Whether a notify of `key` may find a waiter: false means none is
  /// queued, and any that queues later will have read a value stored
  /// before this call, so the notifier may skip the lock (see the module
  /// docs). A read-modify-write, not a load: that is what orders the
  /// caller's earlier store before a later waiter's value check.
  pub fn may_wait(&self, key: usize) -> bool {
    self.may_wait[may_wait_slot(key)].fetch_add(0, Ordering::SeqCst) != 0
  }

  /// The counts, for readers outside Rust (JavaScript, over an external
  /// ArrayBuffer): [`MAY_WAIT_SLOTS`] `u32`s, for the registry's lifetime.
  pub fn may_wait_counts(&self) -> (*const u32, usize) {
    (self.may_wait.as_ptr().cast(), self.may_wait.len())
  }

  /// How many waiters are queued on `key`.
  pub fn waiters_on(&self, key: usize) -> usize {
    self
      .bucket(key)
      .queues
      .lock()
      .map
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

/// A key's "may be waiting" count: from the low 32 bits of the address,
/// as JavaScript computes it (lib/atomics.js `maySlot`) from an element's
/// address mod 2^32: `((x >>> 2) ^ (x >>> 18)) & (MAY_WAIT_SLOTS - 1)`.
/// Neighbouring elements get neighbouring counts.
pub fn may_wait_slot(key: usize) -> usize {
  let x = key as u32;
  ((x >> 2) ^ (x >> 18)) as usize & (MAY_WAIT_SLOTS - 1)
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
