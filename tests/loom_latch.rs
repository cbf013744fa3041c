//! Model checking of Latch's word protocol (lib/latch.js) with loom: its
//! JavaScript steps mirrored here step for step (`count_down`, `wait`),
//! over a model of the registry's wait and notify (enqueue only if the word
//! still holds the expected value, checked under the queue's lock; notify
//! takes waiters off in FIFO order).
//!
//! Checked in every interleaving (up to 3 preemptions) of two threads
//! counting down and two waiting: every waiter goes on (a lost wake-up
//! shows as a thread asleep for good: loom reports the deadlock), and only
//! once the count is zero; and of three threads counting a latch of 2
//! down: exactly two succeed, and the count never goes below zero. (The
//! model is the blocking wait; waitAsync's loop takes the same steps, and
//! its abort flush is a notify of every waiter, a spurious wake-up.)
//!
//! Each step that matters has a mutation that weakens it, and a test that
//! the model then fails, run in a child process (loom aborts the process on
//! a deadlock): a model that cannot fail proves nothing.

use std::sync::atomic::Ordering::SeqCst;

use loom::sync::atomic::{AtomicI32, AtomicUsize};
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
  /// The count-down that reaches zero wakes nobody.
  NoNotify,
  /// The count-down that reaches zero notifies before it stores the count.
  NotifyBeforeCountDown,
  /// The count-down that reaches zero wakes one waiter, not all.
  NotifyOne,
  /// A waiter goes on once the count is 1 or less.
  GoOnAtOne,
  /// countDown checks the count it loaded, then subtracts (no
  /// compare-exchange).
  UnguardedSub,
}

/// The count, and the registry's queue on it.
struct Latch {
  count: AtomicI32,
  /// The registry's queue on the word (common/loom_wait_queue.rs).
  waits: WaitQueue,
  mutation: Mutation,
}

impl Latch {
  fn new(count: i32, mutation: Mutation) -> Arc<Latch> {
    Arc::new(Latch {
      count: AtomicI32::new(count),
      waits: WaitQueue::new(),
      mutation,
    })
  }

  /// The binding's wait(i32a, index, expected) on the count.
  fn wait_on(&self, expected: i32) {
    self.waits.wait(&self.count, expected);
  }

  /// notify(i32a, index, count).
  fn notify(&self, count: usize) {
    self.waits.notify(count);
  }

  fn wake_all(&self) {
    self.notify(if self.mutation == Mutation::NotifyOne {
      1
    } else {
      usize::MAX
    });
  }

  /// lib/latch.js `countDown(by)`: a compare-exchange loop that never takes
  /// the count below zero (Err: it would have; the JS throws
  /// ERR_LATCH_COUNT_EXCEEDED, having changed nothing); the one that
  /// reaches zero wakes every waiter.
  fn count_down(&self, by: i32) -> Result<i32, ()> {
    let mut seen = self.count.load(SeqCst);
    loop {
      if by > seen {
        return Err(());
      }
      if self.mutation == Mutation::NotifyBeforeCountDown && seen == by {
        self.wake_all();
      }
      if self.mutation == Mutation::UnguardedSub {
        self.count.fetch_sub(by, SeqCst);
        break;
      }
      match self.count.compare_exchange(seen, seen - by, SeqCst, SeqCst) {
        Ok(_) => break,
        Err(was) => seen = was,
      }
    }
    if seen == by
      && !matches!(
        self.mutation,
        Mutation::NoNotify | Mutation::NotifyBeforeCountDown
      )
    {
      self.wake_all();
    }
    Ok(seen - by)
  }

  /// lib/latch.js `wait()` (and waitAsync's loop, which is the same with
  /// its waits awaited): goes on at zero, else waits on the count it saw.
  fn wait(&self) {
    loop {
      let count = self.count.load(SeqCst);
      let open = if self.mutation == Mutation::GoOnAtOne {
        count <= 1
      } else {
        count == 0
      };
      if open {
        return;
      }
      self.wait_on(count);
    }
  }
}

/// Two threads count a latch of 2 down by one each while two wait; every
/// waiter goes on, and sees the count at zero when it does.
fn two_counters_two_waiters(mutation: Mutation) {
  let mut model = loom::model::Builder::new();
  model.preemption_bound = Some(3);
  model.check(move || {
    let latch = Latch::new(2, mutation);
    let waiters: Vec<_> = (0..2)
      .map(|_| {
        let latch = latch.clone();
        thread::spawn(move || {
          latch.wait();
          assert_eq!(latch.count.load(SeqCst), 0, "a waiter went on above zero");
        })
      })
      .collect();
    let counter = {
      let latch = latch.clone();
      thread::spawn(move || {
        latch.count_down(1).unwrap();
      })
    };
    latch.count_down(1).unwrap();
    counter.join().unwrap();
    for waiter in waiters {
      waiter.join().unwrap();
    }
    assert_eq!(latch.count.load(SeqCst), 0);
  });
}

#[test]
fn every_waiter_goes_on_at_zero_and_only_then() {
  two_counters_two_waiters(Mutation::None);
}

/// Three threads count a latch of 2 down by one each, with a waiter:
/// exactly two succeed, the third is refused, and the count never goes
/// below zero.
fn three_counters_past_the_count(mutation: Mutation) {
  let mut model = loom::model::Builder::new();
  model.preemption_bound = Some(3);
  model.check(move || {
    let latch = Latch::new(2, mutation);
    let done = Arc::new(AtomicUsize::new(0));
    let counters: Vec<_> = (0..2)
      .map(|_| {
        let (latch, done) = (latch.clone(), done.clone());
        thread::spawn(move || {
          if latch.count_down(1).is_ok() {
            done.fetch_add(1, SeqCst);
          }
        })
      })
      .collect();
    if latch.count_down(1).is_ok() {
      done.fetch_add(1, SeqCst);
    }
    for counter in counters {
      counter.join().unwrap();
    }
    assert!(latch.count.load(SeqCst) >= 0, "counted down below zero");
    assert_eq!(done.load(SeqCst), 2, "count-downs that succeeded");
    latch.wait();
  });
}

#[test]
fn count_downs_past_the_count_are_refused() {
  three_counters_past_the_count(Mutation::None);
}

/// The mutation a child run of this test binary models, by name.
const MUTATION_VAR: &str = "LOOM_LATCH_MUTATION";

/// Runs the model with the mutation named by [`MUTATION_VAR`]. Run only as
/// a child process of [`fails_with`].
#[test]
#[ignore = "run by the mutation tests, in a child process"]
fn mutated_model() {
  let name = std::env::var(MUTATION_VAR).expect("run by a mutation test");
  let mutation = [
    Mutation::None,
    Mutation::NoNotify,
    Mutation::NotifyBeforeCountDown,
    Mutation::NotifyOne,
    Mutation::GoOnAtOne,
    Mutation::UnguardedSub,
  ]
  .into_iter()
  .find(|m| format!("{m:?}") == name)
  .expect("a known mutation");
  if mutation == Mutation::UnguardedSub {
    three_counters_past_the_count(mutation);
  } else {
    two_counters_two_waiters(mutation);
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
fn mutation_no_notify_at_zero_strands_the_waiters() {
  fails_with(Mutation::NoNotify, "deadlock");
}

#[test]
fn mutation_notify_before_the_count_down_loses_a_wake_up() {
  fails_with(Mutation::NotifyBeforeCountDown, "deadlock");
}

#[test]
fn mutation_waking_one_waiter_at_zero_strands_the_other() {
  fails_with(Mutation::NotifyOne, "deadlock");
}

#[test]
fn mutation_an_unguarded_count_down_goes_below_zero() {
  fails_with(Mutation::UnguardedSub, "counted down below zero");
}

#[test]
fn mutation_going_on_above_zero_is_seen() {
  fails_with(Mutation::GoOnAtOne, "a waiter went on above zero");
}
