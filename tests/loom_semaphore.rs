//! Model checking of Semaphore's word protocol with loom: the very same
//! `src/stake.rs` (the return of a dead holder's permits) against the
//! JavaScript steps of lib/semaphore.js, mirrored here step for step
//! (`take`, `give`, `acquireSync`), over a model of the registry's wait and
//! notify (enqueue only if the word still holds the expected value, checked
//! under the queue's lock; notify takes waiters off in FIFO order).
//!
//! Checked in every interleaving (up to 3 preemptions): the permits held
//! never exceed the semaphore's; every waiter gets its permits (a lost
//! wake-up shows as a thread asleep for good: loom reports the deadlock),
//! also when a holder's thread ends holding them; the permits are all free
//! at the end.
//!
//! JavaScript's Atomics are sequentially consistent; loom models SeqCst
//! accesses as AcqRel only, so the mirror puts a SeqCst fence between the
//! two halves of each store-buffering pair the protocol relies on (a
//! waiter's add to `waiters` and load of `permits`; a release's add to
//! `permits` and load of `waiters`), as src/stake.rs does.
//!
//! Each step that matters has a mutation that weakens it, and a test that
//! the model then fails, run in a child process (loom aborts the process on
//! a deadlock): a model that cannot fail proves nothing.

mod sync {
  pub use loom::sync::atomic::{fence, AtomicI32};
}

#[path = "../src/stake.rs"]
#[allow(dead_code, reason = "the Barrier's steps have a model of their own")]
mod stake;

use std::sync::atomic::Ordering::SeqCst;

use loom::sync::atomic::{fence, AtomicI32};
use loom::sync::Arc;
use loom::thread;

#[path = "common/loom_mutation.rs"]
mod loom_mutation;
#[path = "common/loom_wait_queue.rs"]
mod loom_wait_queue;
use loom_wait_queue::WaitQueue;

/// A step of the protocol weakened, to see the model fail.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mutation {
  None,
  /// A release that sees waiters wakes nobody.
  ReleaseWithoutNotify,
  /// A release reads `waiters` before it adds the permits.
  ReadWaitersFirst,
  /// A waiter reads `permits` before it adds itself to `waiters`.
  AnnounceLate,
  /// A take subtracts without checking that enough permits are free.
  UncheckedTake,
  /// The dead holder's teardown gives the permits back but wakes nobody.
  DeadReleaseWithoutWake,
  /// The teardown wakes the waiters only if the thread held permits.
  DeadWakesOnlyIfHeld,
}

/// The semaphore's words, and the registry's queue on `permits`.
struct Semaphore {
  permits: AtomicI32,
  waiters: AtomicI32,
  total: i32,
  /// The registry's queue on the word (common/loom_wait_queue.rs).
  waits: WaitQueue,
  /// Permits held now, by everyone (never more than `total`).
  held: AtomicI32,
  mutation: Mutation,
}

impl Semaphore {
  fn new(total: i32, mutation: Mutation) -> Arc<Semaphore> {
    Arc::new(Semaphore {
      permits: AtomicI32::new(total),
      waiters: AtomicI32::new(0),
      total,
      waits: WaitQueue::new(),
      held: AtomicI32::new(0),
      mutation,
    })
  }

  /// The binding's wait(i32a, index, expected) on `permits`.
  fn wait_on(&self, expected: i32) {
    self.waits.wait(&self.permits, expected);
  }

  /// notify(i32a, index, Infinity).
  fn wake_all(&self) {
    self.waits.notify(usize::MAX);
  }

  /// lib/semaphore.js `take`: a CAS from the total (every permit free) to
  /// total - n first, then a CAS from p to p - n from the value that one
  /// saw while p >= n. The model counts what is held, and checks it
  /// against the total.
  fn take(&self, n: i32) -> bool {
    if self.mutation == Mutation::UncheckedTake {
      if self.permits.load(SeqCst) < n {
        return false;
      }
      self.permits.fetch_sub(n, SeqCst);
    } else if let Err(was) =
      self
        .permits
        .compare_exchange(self.total, self.total - n, SeqCst, SeqCst)
    {
      let mut seen = was;
      loop {
        if seen < n {
          return false;
        }
        match self
          .permits
          .compare_exchange(seen, seen - n, SeqCst, SeqCst)
        {
          Ok(_) => break,
          Err(was) => seen = was,
        }
      }
    }
    let now = self.held.fetch_add(n, SeqCst) + n;
    assert!(
      now <= self.total,
      "more permits held than the semaphore has"
    );
    true
  }

  /// lib/semaphore.js `give`: add the permits, then wake every waiter if
  /// `waiters` says there may be any.
  fn give(&self, n: i32) {
    self.held.fetch_sub(n, SeqCst);
    let waiting = if self.mutation == Mutation::ReadWaitersFirst {
      let waiting = self.waiters.load(SeqCst) > 0;
      fence(SeqCst);
      self.permits.fetch_add(n, SeqCst);
      waiting
    } else {
      self.permits.fetch_add(n, SeqCst);
      fence(SeqCst);
      self.waiters.load(SeqCst) > 0
    };
    if waiting && self.mutation != Mutation::ReleaseWithoutNotify {
      self.wake_all();
    }
  }

  /// lib/semaphore.js `acquireSync(n)` (without its spin, which is a take
  /// repeated): announce, look, wait on what it saw, leave, take.
  fn acquire(&self, n: i32) {
    if self.take(n) {
      return;
    }
    loop {
      let seen = if self.mutation == Mutation::AnnounceLate {
        let seen = self.permits.load(SeqCst);
        fence(SeqCst);
        self.waiters.fetch_add(1, SeqCst);
        seen
      } else {
        self.waiters.fetch_add(1, SeqCst);
        fence(SeqCst);
        self.permits.load(SeqCst)
      };
      if seen < n {
        self.wait_on(seen);
      }
      self.waiters.fetch_sub(1, SeqCst);
      if self.take(n) {
        return;
      }
    }
  }

  /// The env teardown of a thread that ends holding `stake` permits
  /// (src/napi/held.rs `release_all`): src/stake.rs gives them back;
  /// then every waiter is woken.
  fn release_dead(&self, stake: i32) {
    self.held.fetch_sub(stake, SeqCst);
    if self.mutation == Mutation::DeadWakesOnlyIfHeld && stake <= 0 {
      return;
    }
    if stake::release_dead_permits(&self.permits, &self.waiters, stake, 0)
      && self.mutation != Mutation::DeadReleaseWithoutWake
    {
      self.wake_all();
    }
  }

  /// lib/semaphore.js `give`, stopped after the add (the thread is
  /// terminated at the call that would deliver the wake-up): its stake
  /// says it holds nothing, and the teardown runs.
  fn give_then_die(&self, n: i32) {
    self.held.fetch_sub(n, SeqCst);
    self.permits.fetch_add(n, SeqCst);
    self.release_dead(0);
  }
}

/// A semaphore of 2: the main thread holds both; one waiter wants 2, one
/// wants 1; the main thread gives them back one at a time. Every waiter
/// gets its permits and gives them back.
fn weighted_waiters(mutation: Mutation) {
  let mut model = loom::model::Builder::new();
  model.preemption_bound = Some(3);
  model.check(move || {
    let semaphore = Semaphore::new(2, mutation);
    assert!(semaphore.take(2));
    let waiters: Vec<_> = [2, 1]
      .into_iter()
      .map(|n| {
        let semaphore = semaphore.clone();
        thread::spawn(move || {
          semaphore.acquire(n);
          semaphore.give(n);
        })
      })
      .collect();
    semaphore.give(1);
    semaphore.give(1);
    for waiter in waiters {
      waiter.join().unwrap();
    }
    assert_eq!(
      semaphore.permits.load(SeqCst),
      2,
      "every permit is free at the end"
    );
  });
}

/// A semaphore of 1 held by a thread that ends holding it, with a waiter:
/// the teardown gives it back and the waiter gets it.
fn holder_dies(mutation: Mutation) {
  let mut model = loom::model::Builder::new();
  model.preemption_bound = Some(3);
  model.check(move || {
    let semaphore = Semaphore::new(1, mutation);
    let holder = {
      let semaphore = semaphore.clone();
      thread::spawn(move || {
        if semaphore.take(1) {
          semaphore.release_dead(1); // ends holding it
        }
      })
    };
    semaphore.acquire(1);
    semaphore.give(1);
    holder.join().unwrap();
    assert_eq!(
      semaphore.permits.load(SeqCst),
      1,
      "the permit is free at the end"
    );
  });
}

/// A semaphore of 1 whose holder gives it back and ends before the notify:
/// the teardown wakes the waiter all the same.
fn holder_dies_mid_release(mutation: Mutation) {
  let mut model = loom::model::Builder::new();
  model.preemption_bound = Some(3);
  model.check(move || {
    let semaphore = Semaphore::new(1, mutation);
    assert!(semaphore.take(1));
    let holder = {
      let semaphore = semaphore.clone();
      thread::spawn(move || semaphore.give_then_die(1))
    };
    let waiter = {
      let semaphore = semaphore.clone();
      thread::spawn(move || {
        semaphore.acquire(1);
        semaphore.give(1);
      })
    };
    holder.join().unwrap();
    waiter.join().unwrap();
    assert_eq!(
      semaphore.permits.load(SeqCst),
      1,
      "the permit is free at the end"
    );
  });
}

#[test]
fn a_holder_that_dies_mid_release_still_wakes_the_waiter() {
  holder_dies_mid_release(Mutation::None);
}

#[test]
fn weighted_waiters_all_get_their_permits() {
  weighted_waiters(Mutation::None);
}

#[test]
fn a_dead_holders_permits_go_to_the_waiter() {
  holder_dies(Mutation::None);
}

/// The mutation a child run of this test binary models, by name.
const MUTATION_VAR: &str = "LOOM_SEMAPHORE_MUTATION";

/// Runs the model with the mutation named by [`MUTATION_VAR`]. Run only as
/// a child process of [`fails_with`].
#[test]
#[ignore = "run by the mutation tests, in a child process"]
fn mutated_model() {
  let name = std::env::var(MUTATION_VAR).expect("run by a mutation test");
  let mutation = [
    Mutation::None,
    Mutation::ReleaseWithoutNotify,
    Mutation::ReadWaitersFirst,
    Mutation::AnnounceLate,
    Mutation::UncheckedTake,
    Mutation::DeadReleaseWithoutWake,
    Mutation::DeadWakesOnlyIfHeld,
  ]
  .into_iter()
  .find(|m| format!("{m:?}") == name)
  .expect("a known mutation");
  if mutation == Mutation::DeadReleaseWithoutWake {
    holder_dies(mutation);
  } else if mutation == Mutation::DeadWakesOnlyIfHeld {
    holder_dies_mid_release(mutation);
  } else {
    weighted_waiters(mutation);
  }
  println!("model held");
}

/// Runs the model with `mutation` in a child process (common/loom_mutation.rs).
fn run_mutated(mutation: Mutation) -> (bool, String) {
  loom_mutation::run_mutated(MUTATION_VAR, &format!("{mutation:?}"))
}

/// The model fails with `mutation`, for the reason `expected` says.
fn fails_with(mutation: Mutation, expected: &str) {
  loom_mutation::fails_with(MUTATION_VAR, &format!("{mutation:?}"), expected);
}

#[test]
fn the_unmutated_model_holds_in_a_child_process_too() {
  let (held, printed) = run_mutated(Mutation::None);
  assert!(held, "{printed}");
}

#[test]
fn mutation_a_release_that_wakes_nobody_strands_the_waiters() {
  fails_with(Mutation::ReleaseWithoutNotify, "deadlock");
}

#[test]
fn mutation_reading_waiters_before_the_add_loses_a_wake_up() {
  fails_with(Mutation::ReadWaitersFirst, "deadlock");
}

#[test]
fn mutation_announcing_after_the_look_loses_a_wake_up() {
  fails_with(Mutation::AnnounceLate, "deadlock");
}

#[test]
fn mutation_an_unchecked_take_holds_more_than_there_is() {
  fails_with(
    Mutation::UncheckedTake,
    "more permits held than the semaphore has",
  );
}

#[test]
fn mutation_a_teardown_that_wakes_only_for_held_permits_strands_the_waiter() {
  fails_with(Mutation::DeadWakesOnlyIfHeld, "deadlock");
}

#[test]
fn mutation_a_dead_release_that_wakes_nobody_strands_the_waiter() {
  fails_with(Mutation::DeadReleaseWithoutWake, "deadlock");
}
