//! Model checking of the wake-up core with loom: the very same
//! `src/registry.rs` and `src/wake.rs`, compiled against loom's mutex and
//! atomics, under every interleaving of a notify with an env's teardown
//! (close its mailbox, withdraw its waiters, pass on what it never saw).
//!
//! What each model asserts is what a user relies on: a notify's wake-up is
//! never lost (it reaches the live waiter behind a dying one), never
//! counted twice, and a dying env is never signalled after its mailbox
//! closed (for N-API: its released ThreadsafeFunction is never called).

#[path = "common/loom_sync.rs"]
mod sync;

#[path = "../src/registry.rs"]
#[allow(dead_code, reason = "only part of the registry is exercised here")]
mod registry;

#[path = "../src/wake.rs"]
#[allow(dead_code, reason = "only part of the core is exercised here")]
mod wake;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use loom::sync::atomic::AtomicBool;
use loom::thread;
use registry::{Enqueued, Registry, WaiterId};
use wake::{pass_on, wake, Mailbox, Settled, Signal, Unpark, Waiter};

/// An env's signal that must never be given once the env released it.
struct Guarded(Arc<AtomicBool>);

impl Signal for Guarded {
  fn signal(&self) -> bool {
    assert!(!self.0.load(Ordering::SeqCst), "signalled after close");
    true
  }
}

struct NoParker;

impl Unpark for NoParker {
  fn unpark(&self) {}
}

type TestRegistry = Registry<Waiter<Guarded, NoParker, u64>>;
type Env = Arc<Mailbox<Guarded>>;

const KEY: usize = 0x1000;

fn env() -> (Env, Arc<AtomicBool>) {
  let released = Arc::new(AtomicBool::new(false));
  (Arc::new(Mailbox::new(Guarded(released.clone()))), released)
}

fn queue(registry: &TestRegistry, env: &Env, slot: u32) -> WaiterId {
  let queued = registry.enqueue_if(
    KEY,
    || true,
    |_| Waiter::Async {
      env: env.clone(),
      slot,
      deadline: None,
    },
  );
  match queued {
    Enqueued::Queued(id) => id,
    Enqueued::NotEqual => unreachable!("the check passed"),
  }
}

fn no_deadlines(_: u64, _: WaiterId) {}

fn notify(registry: &TestRegistry, count: usize) -> usize {
  let woken = registry.dequeue(KEY, count);
  let n = woken.len();
  wake(
    registry,
    &no_deadlines,
    woken.into_iter().map(|(id, w)| (KEY, id, w)),
    Settled::Woken,
  );
  n
}

/// An env's teardown: close its mailbox, then release its signal; take
/// its waiters off their queues; pass on what it was given but never saw.
fn teardown(registry: &TestRegistry, env: &Env, released: &AtomicBool, own: &[WaiterId]) {
  let undelivered = env.close();
  released.store(true, Ordering::SeqCst);
  for &id in own {
    let _ = registry.remove(KEY, id);
  }
  pass_on(
    registry,
    &no_deadlines,
    undelivered.iter().filter_map(|w| w.unseen_key()),
  );
}

fn slots(env: &Env) -> Vec<u32> {
  let mut woken = Vec::new();
  env.drain_into(&mut woken);
  woken.iter().map(|w| w.slot).collect()
}

/// A notify of one takes a waiter whose env is being torn down, in every
/// interleaving with that teardown: the live waiter behind it gets the
/// wake-up exactly once, and the dying env is never signalled after close.
#[test]
fn close_against_deliver_loses_no_wake_up() {
  loom::model(|| {
    let registry = Arc::new(TestRegistry::new());
    let ((dying, released), (live, _)) = (env(), env());
    let dead = queue(&registry, &dying, 1);
    queue(&registry, &live, 2);
    let notifier = {
      let registry = registry.clone();
      thread::spawn(move || notify(&registry, 1))
    };
    teardown(&registry, &dying, &released, &[dead]);
    assert_eq!(notifier.join().unwrap(), 1, "the notify counts one");
    assert_eq!(slots(&live), [2], "the live waiter got the wake-up");
    assert!(registry.is_empty());
  });
}

/// Two dying waiters in front of a live one: whatever the teardown has
/// withdrawn when the notify comes, the wake-up passes through the rest.
#[test]
fn pass_on_through_dying_waiters_while_they_are_withdrawn() {
  loom::model(|| {
    let registry = Arc::new(TestRegistry::new());
    let ((dying, released), (live, _)) = (env(), env());
    let own = [queue(&registry, &dying, 1), queue(&registry, &dying, 2)];
    queue(&registry, &live, 3);
    let torn_down = {
      let (registry, dying) = (registry.clone(), dying.clone());
      thread::spawn(move || teardown(&registry, &dying, &released, &own))
    };
    assert_eq!(notify(&registry, 1), 1);
    torn_down.join().unwrap();
    assert_eq!(slots(&live), [3]);
    assert!(registry.is_empty());
  });
}

/// An env cancels its waiter (lib/pending.js could not make its promise)
/// while a notify of one runs: if the notify took it first, its outcome
/// arrives for nobody, and the env passes the wake-up on when it does.
/// Either way the live waiter behind gets exactly one wake-up.
#[test]
fn cancel_against_notify_loses_no_wake_up() {
  loom::model(|| {
    let registry = Arc::new(TestRegistry::new());
    let ((own_env, _), (live, _)) = (env(), env());
    let own = queue(&registry, &own_env, 1);
    queue(&registry, &live, 2);
    let notifier = {
      let registry = registry.clone();
      thread::spawn(move || notify(&registry, 1))
    };
    // The env's thread: cancel, then settle what reaches its mailbox.
    let mut cancelled = wake::Cancelled::default();
    let withdrawn = cancelled.withdraw(&registry, KEY, own).is_some();
    assert_eq!(notifier.join().unwrap(), 1, "the notify counts one");
    let mut arrived = Vec::new();
    own_env.drain_into(&mut arrived);
    let unseen: Vec<usize> = arrived
      .iter()
      .filter(|w| cancelled.arrived(w.id))
      .filter_map(|w| w.unseen_key())
      .collect();
    assert_eq!(
      unseen.len(),
      usize::from(!withdrawn),
      "a late cancel's wake-up arrives"
    );
    pass_on(&registry, &no_deadlines, unseen);
    assert_eq!(slots(&live), [2], "the live waiter got the wake-up");
    assert!(registry.is_empty());
  });
}
