//! The wake-up core (`src/wake.rs`) with real threads and no Node: pass-on
//! through long chains of dead waiters (issue item 1: it used to recurse
//! once per dead waiter and overflow the stack), delivery in batches, and
//! close against deliver. Every interleaving of the same races, on a small
//! scale, is in loom_wake.rs.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use atomics_waitasync::registry::{Enqueued, Registry, WaiterId};
use atomics_waitasync::wake::{pass_on, wake, Mailbox, Settled, Signal, Unpark, Waiter};

/// Counts how many times its env was signalled; fails to signal while
/// its flag is set (as when the ThreadsafeFunction call fails).
#[derive(Clone, Default)]
struct Signals(Arc<AtomicUsize>, Arc<AtomicBool>);

impl Signal for Signals {
  fn signal(&self) -> bool {
    self.0.fetch_add(1, Ordering::Relaxed);
    !self.1.load(Ordering::Relaxed)
  }
}

/// A sync waiter that counts its unparks.
#[derive(Default)]
struct Parked(AtomicUsize);

impl Unpark for Parked {
  fn unpark(&self) {
    self.0.fetch_add(1, Ordering::Relaxed);
  }
}

type TestWaiter = Waiter<Signals, Parked, u64>;
type TestRegistry = Registry<TestWaiter>;

const KEY: usize = 0x1000;

fn env() -> Arc<Mailbox<Signals>> {
  Arc::new(Mailbox::new(Signals::default()))
}

fn queue_async(
  registry: &TestRegistry,
  key: usize,
  env: &Arc<Mailbox<Signals>>,
  slot: u32,
) -> WaiterId {
  let queued = registry.enqueue_if(
    key,
    || true,
    |_| Waiter::Async {
      env: env.clone(),
      slot,
      deadline: None,
    },
  );
  let Enqueued::Queued(id) = queued else {
    panic!("an async waiter with no condition is queued");
  };
  id
}

fn no_deadlines(_: u64, _: u64) {}

/// A notify: the wake-up goes wherever the core sends it (`Core::notify`
/// is the same `wake::notify`).
fn notify(registry: &TestRegistry, key: usize, count: usize) -> usize {
  atomics_waitasync::wake::notify(registry, &no_deadlines, key, count)
}

fn drained(env: &Mailbox<Signals>) -> Vec<u32> {
  let mut woken = Vec::new();
  env.drain_into(&mut woken);
  woken.iter().map(|w| w.slot).collect()
}

/// Issue item 1: 300,000 dead waiters in front of a live one, notified
/// through on a thread with a 256 KiB stack, twenty times.
#[test]
fn pass_on_through_300000_dead_waiters_uses_no_stack() {
  let worker = thread::Builder::new()
    .stack_size(256 * 1024)
    .spawn(|| {
      for round in 0..20 {
        let registry = TestRegistry::new();
        let (dead, live) = (env(), env());
        for slot in 0..300_000 {
          queue_async(&registry, KEY, &dead, slot);
        }
        queue_async(&registry, KEY, &live, 7);
        assert!(dead.close().is_empty());
        assert_eq!(notify(&registry, KEY, 1), 1, "round {round}: counted once");
        assert_eq!(drained(&live), [7], "round {round}: the live waiter got it");
        assert!(registry.is_empty());
      }
    })
    .unwrap();
  worker.join().expect("no stack overflow");
}

/// Dead waiters of one env, interleaved with live ones of another and with
/// sync waiters: a notify of n wakes the first n live ones, in order.
#[test]
fn pass_on_skips_only_the_dead() {
  let registry = TestRegistry::new();
  let (dead, live) = (env(), env());
  let parked = Arc::new(Parked::default());
  for slot in 0..10u32 {
    queue_async(&registry, KEY, &dead, slot);
    if slot % 3 == 0 {
      queue_async(&registry, KEY, &live, slot);
    }
  }
  registry.enqueue_if(KEY, || true, |_| Waiter::Sync(parked.clone()));
  queue_async(&registry, KEY, &live, 99);
  dead.close();
  assert_eq!(notify(&registry, KEY, 3), 3);
  assert_eq!(drained(&live), [0, 3, 6]);
  assert_eq!(notify(&registry, KEY, 1), 1);
  assert_eq!(drained(&live), [9]);
  assert_eq!(notify(&registry, KEY, 1), 1);
  assert_eq!(
    parked.0.load(Ordering::Relaxed),
    1,
    "the sync waiter is next"
  );
  assert_eq!(notify(&registry, KEY, 5), 1);
  assert_eq!(drained(&live), [99]);
  assert!(registry.is_empty());
}

/// What a closed mailbox held is handed back, for its wake-ups to go on;
/// a timeout's outcome has nowhere to go.
#[test]
fn close_hands_back_what_was_never_settled() {
  let registry = TestRegistry::new();
  let (dying, live) = (env(), env());
  queue_async(&registry, KEY, &dying, 1);
  queue_async(&registry, KEY, &dying, 2);
  queue_async(&registry, KEY, &live, 3);
  assert_eq!(notify(&registry, KEY, 1), 1);
  let undelivered = dying.close();
  assert_eq!(undelivered.len(), 1);
  // The dying env's teardown: its other waiter leaves the queue, and the
  // wake-up it never saw goes on.
  let (id, _) = registry.dequeue(KEY, 1).pop().unwrap();
  assert!(id > 0);
  pass_on(
    &registry,
    &no_deadlines,
    undelivered.iter().filter_map(|w| w.unseen_key()),
  );
  assert_eq!(drained(&live), [3]);
}

/// One signal per transition from empty: a burst costs one call.
#[test]
fn a_burst_signals_its_env_once() {
  let registry = TestRegistry::new();
  let signals = Signals::default();
  let live = Arc::new(Mailbox::new(signals.clone()));
  for slot in 0..1000 {
    queue_async(&registry, KEY, &live, slot);
  }
  for _ in 0..1000 {
    assert_eq!(notify(&registry, KEY, 1), 1);
  }
  assert_eq!(signals.0.load(Ordering::Relaxed), 1);
  assert_eq!(drained(&live).len(), 1000);
}

/// Envs torn down while other threads notify: every notify's wake-up
/// reaches the one live env, none is counted twice, none is lost.
#[test]
fn teardowns_racing_with_notifies_lose_nothing() {
  for _ in 0..50 {
    let registry = Arc::new(TestRegistry::new());
    let live = env();
    let dying: Vec<_> = (0..4).map(|_| env()).collect();
    // Each dying env has 50 waiters; the live env has 100 behind them.
    let mut ids = Vec::new();
    for (e, env) in dying.iter().enumerate() {
      for slot in 0..50 {
        ids.push((e, queue_async(&registry, KEY, env, slot)));
      }
    }
    for slot in 0..100 {
      queue_async(&registry, KEY, &live, 1000 + slot);
    }
    let notifiers: Vec<_> = (0..2)
      .map(|_| {
        let registry = registry.clone();
        thread::spawn(move || (0..40).map(|_| notify(&registry, KEY, 1)).sum::<usize>())
      })
      .collect();
    // The teardowns: close, withdraw what is still queued, pass on what
    // was delivered but never settled.
    let teardowns: Vec<_> = dying
      .iter()
      .enumerate()
      .map(|(e, env)| {
        let (registry, env) = (registry.clone(), env.clone());
        let own: Vec<_> = ids
          .iter()
          .filter(|(o, _)| *o == e)
          .map(|&(_, id)| id)
          .collect();
        thread::spawn(move || {
          let undelivered = env.close();
          for id in own {
            let _ = registry.remove(KEY, id);
          }
          pass_on(
            &registry,
            &no_deadlines,
            undelivered.iter().filter_map(|w| w.unseen_key()),
          );
        })
      })
      .collect();
    teardowns.into_iter().for_each(|t| t.join().unwrap());
    let counted: usize = notifiers.into_iter().map(|n| n.join().unwrap()).sum();
    // Every notify counted one waiter. No dying env settles anything here,
    // so each of those wake-ups must have reached the live env: directly,
    // passed on by a notify that found a mailbox closed, or passed on by a
    // teardown that found it in its mailbox.
    let got = drained(&live).len();
    let delivered_to_dying: usize = dying.iter().map(|e| drained(e).len()).sum();
    assert_eq!(delivered_to_dying, 0, "a closed mailbox holds nothing");
    assert_eq!(got, counted, "every counted wake-up reached the live env");
    assert_eq!(
      got + registry.waiters_on(KEY),
      100,
      "live waiters: woken or still queued"
    );
  }
}

/// Review finding C: a signal that fails (the ThreadsafeFunction call
/// failed) queues no call, so a mailbox left non-empty would never be
/// drained, and every later wake-up for its env would sit in it. The
/// batch is taken back instead, its wake-up goes on to the next waiter,
/// and the env's next delivery signals again.
#[test]
fn a_failed_signal_takes_the_batch_back_and_passes_it_on() {
  let registry = TestRegistry::new();
  let signals = Signals::default();
  let failing = Arc::new(Mailbox::new(signals.clone()));
  let live = env();
  queue_async(&registry, KEY, &failing, 1);
  queue_async(&registry, KEY, &live, 2);
  signals.1.store(true, Ordering::Relaxed);
  assert_eq!(notify(&registry, KEY, 1), 1);
  assert_eq!(signals.0.load(Ordering::Relaxed), 1);
  assert_eq!(
    drained(&failing),
    Vec::<u32>::new(),
    "nothing left unsignalled"
  );
  assert_eq!(drained(&live), vec![2], "the wake-up went on");
  // Once signalling works again, the env's next wake-up is signalled.
  signals.1.store(false, Ordering::Relaxed);
  queue_async(&registry, KEY, &failing, 3);
  assert_eq!(notify(&registry, KEY, 1), 1);
  assert_eq!(signals.0.load(Ordering::Relaxed), 2);
  assert_eq!(drained(&failing), vec![3]);
}

/// Review item 1: a panic part-way through a wake (here in
/// `cancel_deadline`; a Signal or an allocation could too) used to leave
/// the sync waiters behind it dequeued but never unparked. A sync waiter
/// whose slice then times out finds itself gone from its queue and waits
/// for that unpark with no bound: its thread sleeps for good. Every sync
/// waiter taken off its queue is unparked, panic or not.
#[test]
fn a_panic_part_way_through_a_wake_still_unparks_every_sync_waiter() {
  let registry = TestRegistry::new();
  let env = env();
  let (before, after) = (Arc::new(Parked::default()), Arc::new(Parked::default()));
  registry.enqueue_if(KEY, || true, |_| Waiter::Sync(before.clone()));
  registry.enqueue_if(
    KEY,
    || true,
    |_| Waiter::Async {
      env: env.clone(),
      slot: 1,
      deadline: Some(7),
    },
  );
  registry.enqueue_if(KEY, || true, |_| Waiter::Sync(after.clone()));
  let woken = registry.dequeue(KEY, 3);
  assert_eq!(woken.len(), 3);
  let cancel_panics = |_: u64, _: WaiterId| panic!("cancel_deadline panics");
  let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    wake(
      &registry,
      &cancel_panics,
      woken.into_iter().map(|(id, w)| (KEY, id, w)),
      Settled::Woken,
    );
  }));
  assert!(outcome.is_err(), "the wake panicked");
  assert_eq!(before.0.load(Ordering::Relaxed), 1, "the one before it");
  assert_eq!(
    after.0.load(Ordering::Relaxed),
    1,
    "the sync waiter behind the panic was left asleep"
  );
}

/// A notify that wakes one async waiter (`wake::notify`'s way for one)
/// does what one that wakes several does for each: it cancels the
/// waiter's deadline, with its id, and delivers it to its env as woken,
/// with its slot, id and key; a sync waiter is unparked.
#[test]
fn a_notify_of_one_cancels_its_deadline_and_delivers_it() {
  let registry = TestRegistry::new();
  let live = env();
  let queued = registry.enqueue_if(
    KEY,
    || true,
    |_| Waiter::Async {
      env: live.clone(),
      slot: 7,
      deadline: Some(1234),
    },
  );
  let Enqueued::Queued(id) = queued else {
    panic!("not queued");
  };
  let cancelled = std::sync::Mutex::new(Vec::new());
  let cancel = |at: u64, id: WaiterId| cancelled.lock().unwrap().push((at, id));
  assert_eq!(
    atomics_waitasync::wake::notify(&registry, &cancel, KEY, 1),
    1
  );
  assert_eq!(*cancelled.lock().unwrap(), vec![(1234, id)]);
  let mut woken = Vec::new();
  live.drain_into(&mut woken);
  assert_eq!(woken.len(), 1);
  assert_eq!((woken[0].slot, woken[0].id, woken[0].key), (7, id, KEY));
  assert_eq!(woken[0].how, Settled::Woken);
  let parked = Arc::new(Parked::default());
  registry.enqueue_if(KEY, || true, |_| Waiter::Sync(parked.clone()));
  assert_eq!(notify(&registry, KEY, 1), 1);
  assert_eq!(parked.0.load(Ordering::Relaxed), 1);
  assert!(registry.is_empty());
}
