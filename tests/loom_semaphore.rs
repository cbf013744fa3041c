//! Model checking of the semaphores' word protocol with loom: the very same
//! `src/stake.rs` (the teardown of a thread that ends holding permits or
//! waiting) against the JavaScript steps, mirrored here step for step, of
//! lib/semaphore.js (`take`, `give`, `acquireSync`) and of the signalling
//! semaphores' lib/signal-count.js (`take`, `add`, `announce`, `withdraw`:
//! SignalSemaphore and async-mutex's Semaphore), over a model of the
//! registry's wait and notify (enqueue only if the word still holds the
//! expected value, checked under the queue's lock; notify takes waiters off
//! in FIFO order). The two share the wait: announce, look, wait on what it
//! saw, leave, take.
//!
//! Checked in every interleaving (up to 3 preemptions): the permits held
//! never exceed the semaphore's; every waiter gets its permits (a lost
//! wake-up shows as a thread asleep for good: loom reports the deadlock),
//! also when a holder's thread ends holding them; the permits are all free
//! at the end. For the signalling steps: permits released by threads that
//! never took any reach every waiter, and two releases at once both count;
//! a waiter whose thread dies in its wait (its teardown takes its wait out
//! of `waiters`) neither keeps `waiters` up nor takes a wake-up from the
//! live waiter; no permit is taken that was not released, and every one
//! released is taken or still free at the end.
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
  /// A signalling release adds with a load and a store, not a CAS.
  SignalAddNotAtomic,
  /// The teardown of a thread that died waiting leaves its wait counted.
  DeadWaiterStaysCounted,
  /// The teardown of a thread that died waiting takes its wait out twice.
  DeadWaiterCountedOutTwice,
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
  /// For the signalling steps: permits released so far (counted before
  /// they are added), and taken so far (never more).
  released: AtomicI32,
  taken: AtomicI32,
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
      released: AtomicI32::new(0),
      taken: AtomicI32::new(0),
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
    self.acquire_with(n, Self::take);
  }

  /// The wait of both protocols (lib/core.js `announcedWait`, and the
  /// async loops' lib/signal-count.js `announce` and `withdraw`), with
  /// the protocol's `take`.
  fn acquire_with(&self, n: i32, take: fn(&Self, i32) -> bool) {
    if take(self, n) {
      return;
    }
    loop {
      let seen = self.announce_and_look();
      if seen < n {
        self.wait_on(seen);
      }
      self.waiters.fetch_sub(1, SeqCst);
      if take(self, n) {
        return;
      }
    }
  }

  /// A waiter adds itself to `waiters`, then reads `permits` (the two
  /// halves of its store-buffering pair).
  fn announce_and_look(&self) -> i32 {
    if self.mutation == Mutation::AnnounceLate {
      let seen = self.permits.load(SeqCst);
      fence(SeqCst);
      self.waiters.fetch_add(1, SeqCst);
      seen
    } else {
      self.waiters.fetch_add(1, SeqCst);
      fence(SeqCst);
      self.permits.load(SeqCst)
    }
  }

  /// lib/signal-count.js `take` (SignalSemaphore's keeps nothing in its
  /// stake: a take is consumed): a CAS from v to v - n from the value it
  /// loads, while v >= n. The model counts what is taken, and checks it
  /// against what was released.
  fn signal_take(&self, n: i32) -> bool {
    let mut seen = self.permits.load(SeqCst);
    if self.mutation == Mutation::UncheckedTake {
      if seen < n {
        return false;
      }
      self.permits.fetch_sub(n, SeqCst);
    } else {
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
    let taken = self.taken.fetch_add(n, SeqCst) + n;
    assert!(
      taken <= self.released.load(SeqCst),
      "more permits taken than released"
    );
    true
  }

  /// lib/signal-count.js `add` and SignalSemaphore's `release`, by a thread
  /// that may never have taken anything: a CAS from v to v + n (never past
  /// 2^31 - 1), then wake every waiter if `waiters` says there may be any.
  fn signal_release(&self, n: i32) {
    self.released.fetch_add(n, SeqCst);
    let add = || {
      let mut seen = self.permits.load(SeqCst);
      if self.mutation == Mutation::SignalAddNotAtomic {
        self.permits.store(seen + n, SeqCst);
        return;
      }
      loop {
        assert!(seen <= i32::MAX - n, "past 2^31 - 1 (the release throws)");
        match self
          .permits
          .compare_exchange(seen, seen + n, SeqCst, SeqCst)
        {
          Ok(_) => return,
          Err(was) => seen = was,
        }
      }
    };
    let waiting = if self.mutation == Mutation::ReadWaitersFirst {
      let waiting = self.waiters.load(SeqCst) > 0;
      fence(SeqCst);
      add();
      waiting
    } else {
      add();
      fence(SeqCst);
      self.waiters.load(SeqCst) > 0
    };
    if waiting && self.mutation != Mutation::ReleaseWithoutNotify {
      self.wake_all();
    }
  }

  /// A SignalSemaphore consumer whose thread ends in its wait for one
  /// permit: it announces and looks; if the look finds one, it leaves and
  /// takes it (consumed: its thread then ends holding nothing), and else
  /// its thread ends there, in the wait (the env's teardown drops its
  /// queued wait, which every release's wake-all would have woken, so it
  /// took no wake-up meant for another): src/stake.rs takes its wait out
  /// of `waiters` (the stake's count of its waits, 1), and every waiter
  /// is woken.
  fn die_waiting(&self) {
    let seen = self.announce_and_look();
    if seen >= 1 {
      self.waiters.fetch_sub(1, SeqCst);
      self.signal_take(1);
      return;
    }
    let announced = match self.mutation {
      Mutation::DeadWaiterStaysCounted => 0,
      Mutation::DeadWaiterCountedOutTwice => 2,
      _ => 1,
    };
    if stake::release_dead_permits(&self.permits, &self.waiters, 0, announced) {
      self.wake_all();
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

/// A SignalSemaphore at 0: two consumers wait for one permit each; a
/// producer that never took any releases one, then the main thread
/// (which never took any either) another. Both consumers get theirs;
/// nothing is left.
fn signals(mutation: Mutation) {
  let mut model = loom::model::Builder::new();
  model.preemption_bound = Some(3);
  model.check(move || {
    let semaphore = Semaphore::new(0, mutation);
    let consumers: Vec<_> = (0..2)
      .map(|_| {
        let semaphore = semaphore.clone();
        thread::spawn(move || semaphore.acquire_with(1, Semaphore::signal_take))
      })
      .collect();
    semaphore.signal_release(1);
    semaphore.signal_release(1);
    for consumer in consumers {
      consumer.join().unwrap();
    }
    assert_eq!(semaphore.taken.load(SeqCst), 2, "each consumer took one");
    assert_eq!(semaphore.permits.load(SeqCst), 0, "none is left");
    assert_eq!(
      semaphore.waiters.load(SeqCst),
      0,
      "nobody counts as waiting"
    );
  });
}

/// A SignalSemaphore at 0: a consumer waits for two permits while two
/// threads that never took any release one each, at once. Both count: the
/// consumer gets them.
fn releases_at_once(mutation: Mutation) {
  let mut model = loom::model::Builder::new();
  model.preemption_bound = Some(3);
  model.check(move || {
    let semaphore = Semaphore::new(0, mutation);
    let producer = {
      let semaphore = semaphore.clone();
      thread::spawn(move || semaphore.signal_release(1))
    };
    let consumer = {
      let semaphore = semaphore.clone();
      thread::spawn(move || semaphore.acquire_with(2, Semaphore::signal_take))
    };
    semaphore.signal_release(1);
    producer.join().unwrap();
    consumer.join().unwrap();
    assert_eq!(semaphore.permits.load(SeqCst), 0, "none is left");
  });
}

/// A SignalSemaphore at 0: a live consumer and one whose thread dies in its
/// wait (or takes a permit first, and dies holding nothing: it was
/// consumed); the main thread releases one, then another. The live consumer
/// gets one; every permit released is taken or still free; `waiters` is 0.
fn waiter_dies(mutation: Mutation) {
  let mut model = loom::model::Builder::new();
  model.preemption_bound = Some(3);
  model.check(move || {
    let semaphore = Semaphore::new(0, mutation);
    let live = {
      let semaphore = semaphore.clone();
      thread::spawn(move || semaphore.acquire_with(1, Semaphore::signal_take))
    };
    let dying = {
      let semaphore = semaphore.clone();
      thread::spawn(move || semaphore.die_waiting())
    };
    semaphore.signal_release(1);
    semaphore.signal_release(1);
    live.join().unwrap();
    dying.join().unwrap();
    assert_eq!(
      semaphore.taken.load(SeqCst) + semaphore.permits.load(SeqCst),
      2,
      "every permit released is taken or free, once"
    );
    assert_eq!(
      semaphore.waiters.load(SeqCst),
      0,
      "the dead waiter no longer counts among the waiters"
    );
  });
}

#[test]
fn permits_released_by_threads_that_never_took_any_reach_every_waiter() {
  signals(Mutation::None);
}

#[test]
fn two_releases_at_once_both_count() {
  releases_at_once(Mutation::None);
}

#[test]
fn a_waiter_that_dies_waiting_leaves_waiters_right_and_the_live_one_woken() {
  waiter_dies(Mutation::None);
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

/// Runs the model with the mutation named by [`MUTATION_VAR`] (`Name`, or
/// `signals:Name` for the signalling steps' first model). Run only as a
/// child process of [`fails_with`].
#[test]
#[ignore = "run by the mutation tests, in a child process"]
fn mutated_model() {
  let var = std::env::var(MUTATION_VAR).expect("run by a mutation test");
  let (on_signals, name) = match var.strip_prefix("signals:") {
    Some(name) => (true, name.to_string()),
    None => (false, var),
  };
  let mutation = [
    Mutation::None,
    Mutation::ReleaseWithoutNotify,
    Mutation::ReadWaitersFirst,
    Mutation::AnnounceLate,
    Mutation::UncheckedTake,
    Mutation::DeadReleaseWithoutWake,
    Mutation::DeadWakesOnlyIfHeld,
    Mutation::SignalAddNotAtomic,
    Mutation::DeadWaiterStaysCounted,
    Mutation::DeadWaiterCountedOutTwice,
  ]
  .into_iter()
  .find(|m| format!("{m:?}") == name)
  .expect("a known mutation");
  if on_signals {
    signals(mutation);
  } else if mutation == Mutation::SignalAddNotAtomic {
    releases_at_once(mutation);
  } else if matches!(
    mutation,
    Mutation::DeadWaiterStaysCounted | Mutation::DeadWaiterCountedOutTwice
  ) {
    waiter_dies(mutation);
  } else if mutation == Mutation::DeadReleaseWithoutWake {
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

/// The signalling steps' first model ([`signals`]) fails with `mutation`,
/// for the reason `expected` says.
fn signals_fail_with(mutation: Mutation, expected: &str) {
  loom_mutation::fails_with(MUTATION_VAR, &format!("signals:{mutation:?}"), expected);
}

#[test]
fn the_unmutated_signalling_model_holds_in_a_child_process_too() {
  let (held, printed) = loom_mutation::run_mutated(MUTATION_VAR, "signals:None");
  assert!(held, "{printed}");
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

#[test]
fn mutation_a_signalling_release_that_wakes_nobody_strands_the_waiters() {
  signals_fail_with(Mutation::ReleaseWithoutNotify, "deadlock");
}

#[test]
fn mutation_a_signalling_release_that_reads_waiters_before_its_add_loses_a_wake_up() {
  signals_fail_with(Mutation::ReadWaitersFirst, "deadlock");
}

#[test]
fn mutation_a_signalling_waiter_that_announces_after_its_look_loses_a_wake_up() {
  signals_fail_with(Mutation::AnnounceLate, "deadlock");
}

#[test]
fn mutation_an_unchecked_signalling_take_takes_what_was_never_released() {
  signals_fail_with(Mutation::UncheckedTake, "more permits taken than released");
}

#[test]
fn mutation_two_releases_at_once_without_a_cas_lose_a_permit() {
  fails_with(Mutation::SignalAddNotAtomic, "deadlock");
}

#[test]
fn mutation_a_dead_waiter_left_counted_keeps_waiters_up() {
  fails_with(
    Mutation::DeadWaiterStaysCounted,
    "the dead waiter no longer counts among the waiters",
  );
}

#[test]
fn mutation_a_dead_waiter_counted_out_twice_leaves_waiters_wrong() {
  fails_with(
    Mutation::DeadWaiterCountedOutTwice,
    "the dead waiter no longer counts among the waiters",
  );
}
