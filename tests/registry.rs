//! The registry with real threads: FIFO order, counts, and notify against
//! timeout against cancel. Every interleaving of the same races, on a small
//! scale, is in loom_registry.rs.

use atomics_waitasync::registry::{self, Enqueued, Registry, WaiterId};
use std::sync::atomic::AtomicI32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

fn queue(registry: &Registry<u32>, key: usize, tag: u32) -> WaiterId {
  match registry.enqueue_if(key, || true, |_| tag) {
    Enqueued::Queued(id) => id,
    Enqueued::NotEqual => panic!("value check passed, yet not queued"),
  }
}

/// The tags of up to `n` waiters a notify on `key` takes, in order.
fn dequeued(registry: &Registry<u32>, key: usize, n: usize) -> Vec<u32> {
  registry
    .dequeue(key, n)
    .into_iter()
    .map(|(_, w)| w)
    .collect()
}

/// A xorshift generator from `seed` (not 0): the random tests' steps,
/// the same in every run.
fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
  move || {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    seed
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

/// A queue that empties stays behind, empty, kept for its key (or its
/// storage reused): it must behave as no queue at all, for its own key and
/// for keys that hash to the same bucket (here, one of another line).
#[test]
fn emptied_queues_behave_as_none() {
  let registry = Registry::new();
  let (a, b) = (
    8,
    (8 + 64..)
      .step_by(8)
      .find(|&k| Registry::<u32>::same_bucket(8, k))
      .unwrap(),
  );
  for round in 0..3u32 {
    let id = queue(&registry, a, round);
    assert_eq!(registry.waiters_on(a), 1);
    assert_eq!(dequeued(&registry, a, 1), [round]);
    assert_eq!(registry.waiters_on(a), 0);
    assert_eq!(registry.dequeue(a, 1).len(), 0);
    assert_eq!(registry.remove(a, id), None);
    // Another key of the bucket takes over the idle storage, then empties.
    let other = queue(&registry, b, 10 + round);
    assert_eq!(registry.waiters_on(a), 0);
    assert_eq!(registry.remove(b, other), Some(10 + round));
    assert_eq!(registry.dequeue(b, 1).len(), 0);
  }
  // A long queue (more than the spare capacity) empties: FIFO still.
  for tag in 0..100 {
    queue(&registry, a, tag);
  }
  assert_eq!(
    dequeued(&registry, a, usize::MAX),
    (0..100).collect::<Vec<_>>()
  );
  queue(&registry, a, 7);
  assert_eq!(registry.waiters_on(a), 1);
  assert_eq!(registry.dequeue(a, 5).len(), 1);
  // The idle queue gets a waiter again, then another key of the bucket
  // queues: it must not take the storage of a queue that is no longer
  // idle (review of 455f386: without `idle = None` on reuse, a's waiter
  // was dropped here).
  queue(&registry, a, 8);
  let other = queue(&registry, b, 9);
  assert_eq!(registry.waiters_on(a), 1);
  assert_eq!(dequeued(&registry, a, 1), [8]);
  assert_eq!(registry.remove(b, other), Some(9));
  assert!(registry.is_empty());
  assert!(!registry.may_wait(a) && !registry.may_wait(b));
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

/// Removals from anywhere, in any order, interleaved with enqueues and
/// partial notifies (the queue keeps tombstones, trims its ends and
/// compacts): FIFO order and counts stay exact against a plain model.
#[test]
fn removals_anywhere_keep_fifo_and_counts() {
  let registry = Registry::new();
  let mut model: Vec<(WaiterId, u32)> = Vec::new();
  let mut next = xorshift(0x2545_f491_u64);
  let mut tag = 0;
  for _round in 0..200 {
    for _ in 0..(next() % 60) {
      model.push((queue(&registry, 64, tag), tag));
      tag += 1;
    }
    // Remove about half, from random places (some twice: the second fails).
    for _ in 0..(model.len() / 2) {
      if model.is_empty() {
        break;
      }
      let at = (next() % model.len() as u64) as usize;
      let (id, tag) = model.remove(at);
      assert_eq!(registry.remove(64, id), Some(tag));
      assert_eq!(registry.remove(64, id), None);
    }
    let count = (next() % 8) as usize;
    let woken: Vec<u32> = registry
      .dequeue(64, count)
      .into_iter()
      .map(|(_, w)| w)
      .collect();
    let expected: Vec<u32> = model
      .drain(..count.min(model.len()))
      .map(|(_, w)| w)
      .collect();
    assert_eq!(woken, expected, "oldest first");
    assert_eq!(registry.waiters_on(64), model.len());
    assert_eq!(registry.len(), model.len());
    registry.check_invariants();
  }
  let rest: Vec<u32> = registry
    .dequeue(64, usize::MAX)
    .into_iter()
    .map(|(_, w)| w)
    .collect();
  assert_eq!(rest, model.iter().map(|&(_, w)| w).collect::<Vec<_>>());
  assert!(registry.is_empty());
}

/// A notify, or a timeout's or cancel's removal, of a key with no queue
/// allocates nothing: the bucket's map stays as it was (it takes the
/// bucket lock, where an allocation would hold every other key of the
/// bucket up).
#[test]
fn a_notify_or_removal_of_a_key_with_no_queue_allocates_nothing() {
  let registry = Registry::<u32>::new();
  assert_eq!(registry.map_capacity_of(64), 0);
  assert_eq!(registry.dequeue(64, 1).len(), 0);
  assert_eq!(registry.remove(64, 1), None);
  assert_eq!(
    registry.map_capacity_of(64),
    0,
    "an empty bucket's map allocated"
  );
}

/// In a bucket whose map is full, a notify of a key with no queue still
/// allocates nothing (a notify finds the key through its map entry, which
/// would make room for an insert, except in a full map), and one of a key
/// with waiters works as in any map: its queue empties and stays for its
/// next waiter.
#[test]
fn a_notify_of_a_key_with_no_queue_in_a_full_map_allocates_nothing() {
  let registry = Registry::<u32>::new();
  // Keys of one line share a bucket; fill its map to its capacity.
  let mut keys = (0..16).map(|i| 64 + 4 * i);
  let mut queued = Vec::new();
  while queued.is_empty() || registry.map_capacity_of(64) > queued.len() {
    let key = keys.next().expect("the line has room");
    queue(&registry, key, key as u32);
    queued.push(key);
  }
  let capacity = registry.map_capacity_of(64);
  let absent = keys.next().expect("a key of the line with no queue");
  assert_eq!(registry.dequeue(absent, 1).len(), 0);
  assert_eq!(
    registry.map_capacity_of(64),
    capacity,
    "a full bucket's map grew"
  );
  assert_eq!(dequeued(&registry, queued[0], 1), vec![queued[0] as u32]);
  assert!(registry.keeps_queue_of(queued[0]));
  registry.check_invariants();
}

/// Neighbouring elements (one line, so one bucket) waited on in turn, one
/// waiter at a time, as neighbouring locks are: each keeps its emptied
/// queue for its next waiter (no map insert and remove per wait), and a
/// one-off wait on another key of the bucket does not take their places.
#[test]
fn neighbouring_keys_waited_on_in_turn_keep_their_queues() {
  let registry = Registry::new();
  let (a, b) = (4096usize, 4100usize);
  assert!(Registry::<u32>::same_bucket(a, b));
  let one_offs = (a + 64..)
    .step_by(64)
    .filter(|&k| Registry::<u32>::same_bucket(a, k));
  for (round, other) in one_offs.take(20).enumerate() {
    for key in [a, b] {
      queue(&registry, key, round as u32);
      assert_eq!(dequeued(&registry, key, 1), [round as u32]);
    }
    queue(&registry, other, 0);
    assert_eq!(dequeued(&registry, other, 1), [0]);
    if round > 0 {
      assert!(
        registry.keeps_queue_of(a),
        "round {round}: a's queue was dropped"
      );
      assert!(
        registry.keeps_queue_of(b),
        "round {round}: b's queue was dropped"
      );
    }
    registry.check_invariants();
  }
}

/// Keys of one bucket, each with none, one or a few waiters at a time (a
/// lone waiter is kept inline; a second moves both to heap storage; an
/// emptied queue may be kept for its key, or as the spare whose storage a
/// new key's queue takes): random enqueues, removals and partial notifies
/// over them keep every key's FIFO order and counts exact against a plain
/// model, and leave no empty queue in the map but the kept ones. Seven
/// keys, more than a bucket keeps: three of one line, four of other lines.
#[test]
fn few_waiters_per_key_keep_fifo_across_keys_of_a_bucket() {
  let registry = Registry::new();
  let mut keys = vec![64usize, 68, 100];
  let mut candidate = 128;
  while keys.len() < 7 {
    if Registry::<u32>::same_bucket(64, candidate) {
      keys.push(candidate);
    }
    candidate += 64;
  }
  let mut model: Vec<Vec<(WaiterId, u32)>> = vec![Vec::new(); keys.len()];
  let mut next = xorshift(0x9e37_79b9_u64);
  for tag in 0..20_000u32 {
    let k = (next() % keys.len() as u64) as usize;
    let (key, queued) = (keys[k], &mut model[k]);
    match next() % 4 {
      0 | 1 if queued.len() < 3 => queued.push((queue(&registry, key, tag), tag)),
      2 if !queued.is_empty() => {
        let at = (next() % queued.len() as u64) as usize;
        let (id, tag) = queued.remove(at);
        assert_eq!(registry.remove(key, id), Some(tag));
        assert_eq!(registry.remove(key, id), None);
      }
      _ => {
        let count = (next() % 3) as usize;
        let expected: Vec<u32> = queued
          .drain(..count.min(queued.len()))
          .map(|(_, w)| w)
          .collect();
        assert_eq!(dequeued(&registry, key, count), expected, "oldest first");
      }
    }
    for (k, &key) in keys.iter().enumerate() {
      assert_eq!(registry.waiters_on(key), model[k].len());
    }
    registry.check_invariants();
  }
  assert_eq!(registry.len(), model.iter().map(Vec::len).sum::<usize>());
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

/// The "may be waiting" count of a key is above 0 exactly while a waiter
/// on it (or on a key sharing the count) is queued: a failed value check,
/// a notify and a removal all take it back.
#[test]
fn may_wait_counts_queued_waiters_only() {
  let registry = Registry::<u32>::new();
  let key = 0x7f00_1234_5670;
  assert!(!registry.may_wait(key));
  assert_eq!(
    registry.enqueue_if(key, || false, |_| 0),
    Enqueued::NotEqual
  );
  assert!(
    !registry.may_wait(key),
    "a failed check leaves nothing counted"
  );
  let Enqueued::Queued(a) = registry.enqueue_if(key, || true, |_| 1) else {
    panic!("queued")
  };
  let Enqueued::Queued(_) = registry.enqueue_if(key, || true, |_| 2) else {
    panic!("queued")
  };
  assert!(registry.may_wait(key));
  // A key sharing the count sees it too (it may wait: take the lock).
  let sharing = (1..1 << 25)
    .map(|i| key + 4 * i)
    .find(|&k| registry::may_wait_slot(k) == registry::may_wait_slot(key))
    .expect("a key sharing the count");
  assert!(registry.may_wait(sharing));
  assert!(registry.remove(key, a).is_some());
  assert!(registry.may_wait(key), "one waiter left");
  assert_eq!(registry.dequeue(key, 5).len(), 1);
  assert!(!registry.may_wait(key));
  assert!(!registry.may_wait(sharing));
}

/// lib/atomics.js computes the count's slot from the address mod 2^32 as
/// `((x >>> 2) ^ (x >>> 25)) & (slots - 1)`; the registry must agree,
/// whatever the high bits of the address.
#[test]
fn may_wait_slot_depends_on_the_low_32_bits_only() {
  for x in [0u64, 4, 0x1ff_fffc, 0x200_0000, 0xdead_beec, 0xffff_fffc] {
    let js = ((x >> 2) ^ (x >> 25)) as usize & (atomics_waitasync::sync::MAY_WAIT_SLOTS - 1);
    for high in [0u64, 1 << 32, 0x7fff_0000_0000] {
      assert_eq!(
        registry::may_wait_slot((x | high) as usize),
        js,
        "address {x:#x} | {high:#x}"
      );
    }
  }
}

/// The elements of one buffer each have a count of their own, up to 2^23
/// of them: with a million waiters pending on elements 1..=10^6, element
/// 0's count is still 0, so a notify there skips the lock (and, in
/// JavaScript, the native call). With 2^14 counts, 10^5 pending elements
/// took every one.
#[test]
fn an_element_nobody_waits_on_keeps_a_zero_count_beside_a_million_waiters() {
  let registry: Registry<u32> = Registry::new();
  let base = 0x7f12_3400_0000usize;
  for e in 1..=1_000_000usize {
    queue(&registry, base + 4 * e, 0);
  }
  assert!(!registry.may_wait(base), "element 0 shares a count");
  assert!(registry.may_wait(base + 4));
  assert!(registry.may_wait(base + 4_000_000));
  assert!(
    !registry.may_wait(base + 4_000_004),
    "the element past the last shares a count"
  );
}

/// A count is one byte. The waiters of one element past 255 leave it
/// stuck above 0 (notify then takes the lock, as for a shared count), and
/// never wrap it to 0, which would let a notify skip them; the counts of
/// other elements are untouched.
#[test]
fn a_count_past_255_waiters_sticks_and_never_wraps_to_zero() {
  let registry: Registry<u32> = Registry::new();
  let key = 0x1000usize;
  let neighbour = key + 4;
  for n in 1..=300u32 {
    queue(&registry, key, n);
    assert!(registry.may_wait(key), "with {n} waiters");
  }
  // Not queued: its count goes up and back down, and stays stuck.
  assert!(matches!(
    registry.enqueue_if(key, || false, |_| 0),
    Enqueued::NotEqual
  ));
  assert!(!registry.may_wait(neighbour));
  for left in (0..300).rev() {
    assert_eq!(registry.dequeue(key, 1).len(), 1);
    assert!(registry.may_wait(key), "with {left} waiters left");
  }
  // A count that never reached 255 is exact, down to 0.
  for n in 1..=254u32 {
    queue(&registry, neighbour, n);
  }
  assert_eq!(registry.dequeue(neighbour, 1000).len(), 254);
  assert!(!registry.may_wait(neighbour));
}
