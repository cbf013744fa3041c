//! The waiter registry: an address-keyed table of FIFO wait queues.
//!
//! This is the futex table behind `Atomics.wait`, `Atomics.waitAsync` and
//! `Atomics.notify`, in the shape of WebKit's ParkingLot and parking_lot_core:
//! a fixed array of buckets chosen by hashing the key (the absolute byte
//! address of the element waited on), each bucket a mutex over the queues of
//! the keys that hash to it.
//!
//! The keys of one 64-byte cache line share a bucket, and sit side by side
//! in its map ([`bucket_index`], [`AddressHasher`]): waiters on neighbouring
//! elements (a pool's jobs, made and finished in order) are then found in
//! memory already in the cache, where a hash of the whole address put each
//! in a place of its own (a worker notifying 100,000 main-thread waiters on
//! as many elements: ~0.8 µs per notify against ~0.4 µs, mostly cache
//! misses). The price: threads that wait on or notify neighbouring
//! elements (a lock per worker in one Int32Array) queue on one bucket lock,
//! where before they took one each. They already shared the line itself,
//! which every Atomics operation on it moves between cores; the lock is
//! held for a map lookup and a queue step (~100 ns).
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
//! A queue ([`Queue`]) with one waiter keeps it inline, in its map entry:
//! a pending waiter on an element of its own (a job's, a lock's) costs its
//! entry and nothing else, no allocation and no pointer to follow. From a
//! second waiter on, a queue is a `VecDeque` of `(id, waiter)` in id order:
//! dense (no per-node allocation, which is most of what a pending waiter
//! costs natively), O(1) at both ends. A waiter removed from the middle
//! (timeout, cancel) leaves a tombstone, found by binary search on the id;
//! tombstones at the ends are trimmed at once, the rest when they outnumber
//! the live.
//! - **One owner per outcome.** A waiter leaves its queue exactly once: by
//!   notify ([`Registry::dequeue`]), by timeout or cancel ([`Registry::remove`]).
//!   Whoever takes it out under the lock decides its outcome; the loser gets
//!   `None` and does nothing.
//! - **Empty queues are dropped**, so a key that is no longer waited on costs
//!   nothing; except that each bucket keeps a few emptied queues for the
//!   next waiter on their keys ([`Queues::kept`], up to [`KEPT`]), and one
//!   with small storage ([`Queues::spare`]) for the next new queue, so that
//!   waiters that come and go one or two at a time (a lock, a waitAsync →
//!   notify loop; a few neighbouring ones in turn) touch neither the
//!   allocator nor the map's inserts and removes.
//!
//! - **"Someone may be waiting", readable without a lock.** Each key maps
//!   to one of [`MAY_WAIT_SLOTS`] counts ([`may_wait_slot`], from the low
//!   32 bits of the address, so JavaScript can compute it too), the number
//!   of waiters queued, or about to be, on the keys of that slot (a byte:
//!   one that reaches [`STUCK`] stays there, above 0). A waiter
//!   adds itself to its count *before* its value check; it is taken off
//!   the count only once it has left its queue. A notifier stores the new
//!   value (any kind of store), then reads the count with a SeqCst
//!   read-modify-write ([`Registry::may_wait`]; `Atomics.add(counts, slot,
//!   0)` in JavaScript). Every change of a count is a read-modify-write
//!   (a compare-and-swap loop whose failed tries change nothing; a stuck
//!   count is written back as it is), so if the notifier's reads 0, it
//!   comes before the waiter's increment in the count's modification
//!   order, and the increment reads from it or from a later
//!   read-modify-write, in the release sequence the notifier's heads
//!   (release → acquire): the waiter's value check sees the new value and
//!   it does not queue. So a count of 0 lets notify return 0
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

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::Ordering;

use smallvec::SmallVec;

use crate::sync::{
  zeroed_counts, AtomicU64, AtomicU8, Counts, Mutex, BUCKET_COUNT, MAY_WAIT_SLOTS,
};

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
  /// Waiters queued (or being queued) per [`may_wait_slot`], up to
  /// [`STUCK`]; see the module docs. Never moves once made: JavaScript
  /// reads it in place.
  may_wait: Counts,
}

/// Whether the emptied queue of `key`, whose heap storage holds `storage`
/// entries, leaves its bucket's map ([`Queues::emptied`]'s last case):
/// not already kept (`spare`, `kept`), not small enough to be the spare,
/// and not storage-less with a free place in `kept` or the last queue to
/// have left (`last_dropped`). Over the fields it reads, so that
/// [`Queues::dequeue`] can ask while it holds the key's map entry.
fn leaves(
  spare: Option<usize>,
  kept: &[Option<usize>; KEPT],
  last_dropped: Option<usize>,
  key: usize,
  storage: usize,
) -> bool {
  let kept_already = spare == Some(key) || kept.contains(&Some(key));
  let spare_sized = storage > 0 && storage <= SPARE_CAPACITY;
  let keepable = storage == 0 && (kept.contains(&None) || last_dropped == Some(key));
  !(kept_already || spare_sized || keepable)
}

/// One lock's worth of queues, on its own cache line so that neighbouring
/// buckets taken by different threads do not false-share.
#[repr(align(64))]
struct Bucket<W> {
  /// Guarded by the mutex: the queues of every key that hashes here.
  queues: Mutex<Queues<W>>,
}

/// The largest capacity of an empty queue's storage that its bucket keeps
/// for reuse ([`Queues::spare`]): at most 256 buckets × 8 entries × 32
/// bytes (and, with the [`KEPT`] queues, five map entries each) stay
/// allocated once the waiters are gone, besides the maps' tables, which
/// never shrink.
const SPARE_CAPACITY: usize = 8;

/// How many emptied queues with no storage a bucket keeps for their keys'
/// return ([`Queues::kept`]): neighbouring locks or signals (the elements
/// of one cache line share a bucket) waited on in turn each keep theirs.
const KEPT: usize = 4;

/// What a bucket's lock guards.
struct Queues<W> {
  /// The queue of every key with waiters that hashes here, and a few empty
  /// ones: `spare`'s and `kept`'s.
  map: HashMap<usize, Queue<W>, BuildAddressHasher>,
  /// The key of an emptied queue with heap storage (at most
  /// [`SPARE_CAPACITY`]), kept in `map` for that key's next waiter or for
  /// the next new queue on another key to take (a key's second waiter
  /// coming and going: no malloc and free each time).
  spare: Option<usize>,
  /// The keys of emptied queues with no storage (their one waiter was
  /// inline, or a long queue gave its storage back as it emptied), kept
  /// in `map` so that the next waiter on the key finds its
  /// queue: a waitAsync → notify loop, a lock, pays no map insert and
  /// remove per waiter. At most [`KEPT`]; which stay is [`Queues::emptied`]'s
  /// choice.
  kept: [Option<usize>; KEPT],
  /// Where in `kept` the next key that must have a place takes it, when
  /// all are taken (round robin).
  next_kept: usize,
  /// The key of the last queue here that became empty and was dropped: if
  /// the same key empties again, it comes and goes, and takes a kept place
  /// from a key that may never come back.
  last_dropped: Option<usize>,
}

impl<W> Queues<W> {
  fn new() -> Self {
    Queues {
      map: HashMap::default(),
      spare: None,
      kept: [None; KEPT],
      next_kept: 0,
      last_dropped: None,
    }
  }

  /// The queue of `key`, made (with the spare queue's storage, if any) if
  /// it has none.
  fn get_or_make(&mut self, key: usize) -> &mut Queue<W> {
    let mut storage = VecDeque::new();
    if self.spare == Some(key) {
      self.spare = None;
    } else if let Some(at) = self.kept.iter().position(|&kept| kept == Some(key)) {
      self.kept[at] = None;
    } else if let Some(spare) = self.spare {
      if !self.map.contains_key(&key) {
        self.spare = None;
        let taken = self.map.remove(&spare).map(Queue::into_storage);
        storage = taken.unwrap_or_default();
      }
    }
    self
      .map
      .entry(key)
      .or_insert_with(|| Queue::Many(storage, 0))
  }

  /// Takes up to `count` waiters from the head of `key`'s queue.
  ///
  /// One look-up of the key: its map entry, which is also what removes
  /// the queue when it empties and leaves (a key among many, waited on
  /// once: a job's element), where a look-up and then a removal would
  /// find the key twice (~50 of a notify's ~2,700 instructions in a fresh
  /// worker). Except in a full map: for a key with no queue, `entry` would
  /// make room for an insert that never comes (an allocation, under the
  /// lock), so there the key is looked up first.
  fn dequeue(&mut self, key: usize, count: usize) -> Dequeued<W> {
    if self.map.len() >= self.map.capacity() {
      let Some(queue) = self.map.get_mut(&key) else {
        return Dequeued::new();
      };
      let woken = Self::pop(queue, count);
      if queue.is_empty() {
        let storage = queue.capacity();
        self.emptied(key, storage);
      }
      return woken;
    }
    let Entry::Occupied(mut entry) = self.map.entry(key) else {
      return Dequeued::new();
    };
    // A queue of one that then leaves (a key among many, each waited on
    // once): its waiter comes out with its entry.
    if matches!(entry.get(), Queue::One(..))
      && leaves(self.spare, &self.kept, self.last_dropped, key, 0)
    {
      let Queue::One(id, waiter) = entry.remove() else {
        unreachable!()
      };
      self.last_dropped = Some(key);
      let mut woken = Dequeued::new();
      woken.push((id, waiter));
      return woken;
    }
    let queue = entry.get_mut();
    let woken = Self::pop(queue, count);
    if queue.is_empty() {
      let storage = queue.capacity();
      if leaves(self.spare, &self.kept, self.last_dropped, key, storage) {
        // `emptied`'s last case, with the entry in hand.
        entry.remove();
        self.last_dropped = Some(key);
      } else {
        self.emptied(key, storage);
      }
    }
    woken
  }

  /// Up to `count` (at least 1) waiters from the head of `queue`.
  fn pop(queue: &mut Queue<W>, count: usize) -> Dequeued<W> {
    let mut woken = Dequeued::with_capacity(count.min(queue.live()));
    queue.pop_front_into(count, &mut woken);
    woken
  }

  /// Takes the waiter `id` out of `key`'s queue, wherever it is.
  fn remove(&mut self, key: usize, id: WaiterId) -> Option<W> {
    let queue = self.map.get_mut(&key)?;
    let waiter = queue.remove(id)?;
    if queue.is_empty() {
      let storage = queue.capacity();
      self.emptied(key, storage);
    }
    Some(waiter)
  }

  /// `key`'s queue, whose heap storage holds `storage` entries, is empty
  /// (it has just become so, or it was kept empty and a notify found
  /// nobody): it stays in the map, or leaves it.
  /// - Already kept (as the spare, or in `kept`): it stays.
  /// - Small storage: it becomes the spare (the previous one leaves).
  /// - No storage, and a free place in `kept`, or the last queue here that
  ///   left was this key's (it comes and goes; it takes the place
  ///   `next_kept` points at, round robin, not necessarily the oldest):
  ///   it is kept.
  /// - Otherwise (a key among many, each waited on once, a job's element
  ///   say; or storage too large for the spare, 9 to 64 entries) it
  ///   leaves, so that each such key costs one removal and no further
  ///   lookup.
  fn emptied(&mut self, key: usize, storage: usize) {
    if leaves(self.spare, &self.kept, self.last_dropped, key, storage) {
      self.map.remove(&key);
      self.last_dropped = Some(key);
    } else if self.keeps(key) {
      // already kept
    } else if storage > 0 {
      // (small: larger storage leaves)
      if let Some(old) = self.spare.replace(key) {
        self.map.remove(&old);
      }
    } else if let Some(free) = self.kept.iter().position(Option::is_none) {
      self.kept[free] = Some(key);
    } else {
      // The last queue here that left was this key's.
      let at = self.next_kept;
      self.next_kept = (at + 1) % KEPT;
      if let Some(old) = self.kept[at].replace(key) {
        self.map.remove(&old);
      }
    }
  }

  /// Every queue in the map has a waiter, except the spare (small storage)
  /// and the kept ones (no storage), which have none and are each named
  /// once; in each queue, ids increase and the ends are live. Panics if
  /// not; for tests.
  fn check(&self) {
    let named = |key: usize| {
      usize::from(self.spare == Some(key)) + self.kept.iter().filter(|&&k| k == Some(key)).count()
    };
    for (&key, queue) in &self.map {
      match named(key) {
        0 => assert!(!queue.is_empty(), "an empty queue left in the map"),
        1 => {
          assert!(queue.is_empty(), "a kept queue has waiters");
          if self.spare == Some(key) {
            let storage = queue.capacity();
            assert!(
              storage > 0 && storage <= SPARE_CAPACITY,
              "the spare queue's storage"
            );
          } else {
            assert_eq!(queue.capacity(), 0, "a kept queue holds storage");
          }
        }
        _ => panic!("a key kept twice"),
      }
      if let Queue::Many(entries, live) = queue {
        assert_eq!(entries.iter().filter(|(_, w)| w.is_some()).count(), *live);
        assert!(entries
          .iter()
          .zip(entries.iter().skip(1))
          .all(|(a, b)| a.0 < b.0));
        assert!(entries.front().is_none_or(|e| e.1.is_some()));
        assert!(entries.back().is_none_or(|e| e.1.is_some()));
      }
    }
    for key in self.spare.iter().chain(self.kept.iter().flatten()) {
      assert!(self.map.contains_key(key), "a kept key has no queue");
    }
  }

  /// Whether `key`'s queue is empty and kept in the map (as the spare, or
  /// in `kept`).
  fn keeps(&self, key: usize) -> bool {
    self.spare == Some(key) || self.kept.contains(&Some(key))
  }
}

/// One key's waiters, oldest first.
///
/// A key with one waiter (a lock, a job's element: most keys, most of the
/// time) keeps it inline, in the map's own entry: no allocation of its
/// own, no pointer to chase at notify. A second waiter moves both to a
/// `VecDeque`, kept until the queue is empty.
enum Queue<W> {
  /// Exactly one waiter.
  One(WaiterId, W),
  /// Entries in increasing id order, `None` marking a waiter removed from
  /// the middle; and how many are `Some`. Empty (a kept queue, or one
  /// just made) with `0`.
  Many(VecDeque<(WaiterId, Option<W>)>, usize),
}

impl<W> Default for Queue<W> {
  fn default() -> Self {
    Queue::Many(VecDeque::new(), 0)
  }
}

impl<W> Queue<W> {
  /// Appends a waiter; `id` is above every id already queued.
  fn push(&mut self, id: WaiterId, waiter: W) {
    match self {
      Queue::Many(entries, live) if *live > 0 || entries.capacity() > 0 => {
        debug_assert!(entries.back().is_none_or(|&(last, _)| last < id));
        entries.push_back((id, Some(waiter)));
        *live += 1;
      }
      Queue::Many(..) => *self = Queue::One(id, waiter),
      Queue::One(first, _) => {
        debug_assert!(*first < id);
        let Queue::One(first, head) = std::mem::take(self) else {
          unreachable!()
        };
        let mut entries = VecDeque::with_capacity(4);
        entries.push_back((first, Some(head)));
        entries.push_back((id, Some(waiter)));
        *self = Queue::Many(entries, 2);
      }
    }
  }

  /// Moves up to `count` (at least 1) waiters from the head into `into`,
  /// oldest first.
  fn pop_front_into(&mut self, count: usize, into: &mut Dequeued<W>) {
    let Queue::Many(entries, live) = self else {
      let Queue::One(id, waiter) = std::mem::take(self) else {
        unreachable!()
      };
      into.push((id, waiter));
      return;
    };
    let mut taken = 0;
    while taken < count {
      let Some((id, waiter)) = entries.pop_front() else {
        break;
      };
      if let Some(waiter) = waiter {
        into.push((id, waiter));
        taken += 1;
      }
    }
    *live -= taken;
    Self::trim(entries);
  }

  /// Takes the waiter `id` out, wherever it is.
  fn remove(&mut self, id: WaiterId) -> Option<W> {
    let (entries, live) = match self {
      Queue::One(only, _) if *only == id => {
        let Queue::One(_, waiter) = std::mem::take(self) else {
          unreachable!()
        };
        return Some(waiter);
      }
      Queue::One(..) => return None,
      Queue::Many(entries, live) => (entries, live),
    };
    let at = entries.binary_search_by_key(&id, |&(id, _)| id).ok()?;
    let waiter = entries[at].1.take()?;
    *live -= 1;
    Self::trim(entries);
    let tombstones = entries.len() - *live;
    if tombstones > 32 && tombstones > *live {
      entries.retain(|(_, waiter)| waiter.is_some());
    }
    Some(waiter)
  }

  /// Drops tombstones at both ends, so the ends are always live, and gives
  /// memory back once a queue that was long is mostly gone.
  fn trim(entries: &mut VecDeque<(WaiterId, Option<W>)>) {
    while matches!(entries.front(), Some((_, None))) {
      entries.pop_front();
    }
    while matches!(entries.back(), Some((_, None))) {
      entries.pop_back();
    }
    let len = entries.len();
    if entries.capacity() > 64 && len < entries.capacity() / 4 {
      entries.shrink_to(len * 2);
    }
  }

  /// How many waiters are queued.
  fn live(&self) -> usize {
    match self {
      Queue::One(..) => 1,
      Queue::Many(_, live) => *live,
    }
  }

  fn is_empty(&self) -> bool {
    self.live() == 0
  }

  /// The capacity of its heap storage (none inline).
  fn capacity(&self) -> usize {
    match self {
      Queue::One(..) => 0,
      Queue::Many(entries, _) => entries.capacity(),
    }
  }

  /// Its heap storage, emptied, for another queue to use.
  fn into_storage(self) -> VecDeque<(WaiterId, Option<W>)> {
    match self {
      Queue::One(..) => VecDeque::new(),
      Queue::Many(mut entries, _) => {
        entries.clear();
        entries
      }
    }
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
        queues: Mutex::new(Queues::new()),
      })
      .collect();
    Registry {
      buckets,
      next_id: AtomicU64::new(1),
      may_wait: zeroed_counts(MAY_WAIT_SLOTS),
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
    count_in(may_wait);
    if !still_expected() {
      count_out(may_wait, 1);
      return Enqueued::NotEqual;
    }
    let id = self.next_id.fetch_add(1, Ordering::Relaxed);
    let waiter = make(id);
    queues.get_or_make(key).push(id, waiter);
    Enqueued::Queued(id)
  }

  /// Removes up to `count` waiters from the head of `key`'s queue, oldest
  /// first, and returns them. The caller wakes them after the lock is gone.
  pub fn dequeue(&self, key: usize, count: usize) -> Dequeued<W> {
    if count == 0 {
      return Dequeued::new();
    }
    let woken = self.bucket(key).queues.lock().dequeue(key, count);
    self.uncount(key, woken.len());
    woken
  }

  /// Takes one waiter out of `key`'s queue, wherever it is: a timeout or a
  /// cancel. `None` when it is no longer queued (notify, or another remover,
  /// got there first and owns its outcome).
  pub fn remove(&self, key: usize, id: WaiterId) -> Option<W> {
    let waiter = self.bucket(key).queues.lock().remove(key, id)?;
    self.uncount(key, 1);
    Some(waiter)
  }

  /// `n` waiters on `key` have left their queue.
  fn uncount(&self, key: usize, n: usize) {
    if n > 0 {
      count_out(&self.may_wait[may_wait_slot(key)], n);
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
  /// ArrayBuffer): [`MAY_WAIT_SLOTS`] bytes, for the registry's lifetime.
  pub fn may_wait_counts(&self) -> (*const u8, usize) {
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
      .map_or(0, Queue::live)
  }

  /// Whether `key` has an empty queue kept in its bucket's map (see
  /// `Queues::kept`), for its next waiter. For tests.
  #[doc(hidden)]
  pub fn keeps_queue_of(&self, key: usize) -> bool {
    self.bucket(key).queues.lock().keeps(key)
  }

  /// The capacity of the map of `key`'s bucket (entries it has room for).
  /// For tests.
  #[doc(hidden)]
  pub fn map_capacity_of(&self, key: usize) -> usize {
    self.bucket(key).queues.lock().map.capacity()
  }

  /// Checks every bucket's invariants (see `Queues::check`); panics if
  /// one does not hold. For tests.
  #[doc(hidden)]
  pub fn check_invariants(&self) {
    for bucket in self.buckets.iter() {
      bucket.queues.lock().check();
    }
  }

  /// Whether two keys share a bucket (and so a lock); for tests that
  /// want collisions.
  pub fn same_bucket(a: usize, b: usize) -> bool {
    bucket_index(a) == bucket_index(b)
  }

  /// How many waiters are queued in the whole registry; for tests and
  /// leak checks. Takes every bucket's lock in turn, so while other
  /// threads queue and notify it is only a snapshot of each bucket. (Not a
  /// shared counter: one more read-modify-write of a line every thread
  /// writes, on each enqueue and each notify: ~10% of a cross-thread
  /// notify.)
  pub fn len(&self) -> usize {
    let live = |queues: &Queues<W>| queues.map.values().map(Queue::live).sum::<usize>();
    self
      .buckets
      .iter()
      .map(|bucket| live(&bucket.queues.lock()))
      .sum()
  }

  pub fn is_empty(&self) -> bool {
    self.len() == 0
  }
}

/// A key's "may be waiting" count: from the low 32 bits of the address,
/// as JavaScript computes it (lib/atomics.js `notifyUnlessNobodyWaits`)
/// from an element's address mod 2^32:
/// `((x >>> 2) ^ (x >>> 25)) & (MAY_WAIT_SLOTS - 1)`. Neighbouring
/// elements get neighbouring counts; the high bits, folded into the low
/// ones, set apart buffers 32 MB apart.
pub fn may_wait_slot(key: usize) -> usize {
  let x = key as u32;
  ((x >> 2) ^ (x >> 25)) as usize & (MAY_WAIT_SLOTS - 1)
}

/// A count that reaches this stays there: a byte cannot count every
/// waiter of a slot (100,000 on one element, say), and a count stuck
/// above 0 only sends notifies of its slot to the lock, as a count shared
/// with another key does. (255; 2 in the loom models, which reach it.)
pub const STUCK: u8 = crate::sync::MAY_WAIT_STUCK;

/// A waiter of `count`'s slot is about to queue. A read-modify-write even
/// when stuck (it writes back the same value), so that every write of a
/// count is one, as the module docs' argument puts it. (A stuck count
/// left unwritten would do as well: a waiter's load of it still reads
/// from a read-modify-write after the notifier's, in the release sequence
/// that one heads; and a notifier that reads STUCK takes the lock anyway.
/// A cold review's mutant that skipped the write passed every model.)
fn count_in(count: &AtomicU8) {
  let _ = count.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |c| {
    Some(if c == STUCK { c } else { c + 1 })
  });
}

/// `n` waiters of `count`'s slot have left their queues (or did not
/// queue). A count below [`STUCK`] counted each of them, so it holds at
/// least `n`; a stuck one stays. (A count that would go below 0, which
/// that rules out, sticks instead of wrapping or stopping at 0: a guard
/// for that one case, not for a lost increment in general.)
fn count_out(count: &AtomicU8, n: usize) {
  let _ = count.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |c| {
    Some(if c == STUCK || (c as usize) < n {
      debug_assert!(c == STUCK, "a count below its waiters");
      STUCK
    } else {
      c - n as u8
    })
  });
}

/// A key's bucket: that of its 64-byte cache line, the top 8 bits of
/// [`mix`] of the line's address, the best mixed ones.
fn bucket_index(key: usize) -> usize {
  (mix(key >> LINE_SHIFT) >> 56) as usize % BUCKET_COUNT
}

/// log2 of the bytes of a cache line: keys that differ only below it share
/// a bucket, and neighbouring places in its map.
const LINE_SHIFT: u32 = 6;

/// Fibonacci hashing: multiplies by 2^64/φ so that line numbers differing
/// only in their low bits (neighbouring lines) land in different buckets.
fn mix(line: usize) -> u64 {
  (line as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The hash a bucket's map uses for a line. Not [`mix`]:
/// hashbrown's tag byte is the top 7 bits of the hash, and the lines of one
/// bucket share the top 8 bits of `mix`, so with `mix` every line of a
/// bucket had the same tag and probing came down to comparing keys. Another odd
/// multiplier gives top bits unrelated to the bucket, and folding the high
/// half down gives well-mixed low bits, which hashbrown probes by (the low
/// bits of a product depend only on the low bits of the key).
fn map_hash(key: u64) -> u64 {
  let product = key.wrapping_mul(0xD6E8_FEB8_6659_FD93);
  product ^ (product >> 32)
}

/// A `Hasher` for addresses (`usize`) and other `u64`s already unique
/// (SipHash would cost more than the rest of a notify). `write_usize` and
/// `write_u64` replace the state: for keys of one integer only.
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

  /// A key (an address): its line's hash plus its place in the line (the
  /// 4-byte unit) in the low bits, so that a line's keys start their
  /// probes at neighbouring places in the map (hashbrown probes by the low
  /// bits, a group of 16 or 8 places at a time); and the place in the line
  /// mixed into the top bits of the tag hashbrown compares before it
  /// compares keys (the top 7 bits of the hash, or of its low 32 on 32-bit
  /// targets), so that a line's 16 keys have 16 different tags. (With the
  /// line's tag alone, finding a key, or finding none, compared it with
  /// each of its line-mates in the probed group: 15 key comparisons for a
  /// notify of element 0 while 1 to 15 were waited on.)
  fn write_usize(&mut self, key: usize) {
    const PLACE_BITS: u32 = LINE_SHIFT - 2;
    let in_line = (key as u64 >> 2) & ((1 << PLACE_BITS) - 1);
    let line = map_hash((key >> LINE_SHIFT) as u64);
    let tags = (in_line << (64 - PLACE_BITS)) | (in_line << (32 - PLACE_BITS));
    self.0 = (line ^ tags).wrapping_add(in_line);
  }

  fn write_u64(&mut self, id: u64) {
    self.0 = map_hash(id);
  }
}

/// Hashes addresses (already unique integers) cheaply.
pub type BuildAddressHasher = BuildHasherDefault<AddressHasher>;
