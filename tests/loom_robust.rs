//! Model checking of AsyncLock's word protocol with loom: the very same
//! `src/robust.rs` (the release of a dead holder's word, the contended
//! release) against the JavaScript steps of lib/owned-word.js and lib/async-lock.js, mirrored
//! here step for step (`take_free`, `claim`, `lock`, `unlock`), over a
//! model of the registry's wait and notify (enqueue only if the word still
//! holds the expected value, checked under the queue's lock; notify takes
//! waiters off in FIFO order).
//!
//! Checked in every interleaving: no two threads hold the lock at once;
//! every waiter gets the lock (a lost wake-up shows as a thread asleep for
//! good: loom reports the deadlock); the first holder after a thread that
//! ended holding the lock, and only it, learns that it was abandoned; the
//! word is free at the end.
//!
//! Each step that matters has a mutation here that weakens it, and a test
//! that the model then fails (`#[should_panic]`): a model that cannot fail
//! proves nothing.

mod sync {
  pub use loom::sync::atomic::AtomicI32;
}

#[path = "../src/robust.rs"]
#[allow(dead_code, reason = "held_by and MAX_OWNER are for the N-API layer")]
mod robust;

use std::sync::atomic::Ordering::SeqCst;

use loom::sync::atomic::AtomicUsize;
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;
use robust::{held_by, ABANDONED, FAIR, FREE, HANDED, WAITERS};

#[path = "common/loom_mutation.rs"]
mod loom_mutation;

/// A step of the protocol weakened, to see the model fail.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mutation {
  None,
  /// A waiter takes an ABANDONED word as `me`, without WAITERS.
  TakeAbandonedWithoutWaiters,
  /// A waiter that found the word free takes it as `me`, without WAITERS.
  ClaimWithoutWaiters,
  /// A waiter waits on the word without first setting WAITERS.
  WaitWithoutSettingWaiters,
  /// The dead holder's teardown frees the word but wakes nobody.
  DeadReleaseWithoutNotify,
  /// The dead holder's teardown tries its compare-exchange once only.
  DeadReleaseWithoutRetry,
  /// The dead holder's teardown frees the word as UNLOCKED, not ABANDONED.
  DeadReleaseAsUnlocked,
  /// A waitForUnlock() that was woken and leaves without taking the lock
  /// does not pass its wake-up on.
  WatcherKeepsWakeUp,
  /// A lock(timeout) that gives up after a wake-up checks its deadline
  /// before looking at the word once more.
  GiveUpBeforeLooking,
  /// A contended release gives up when a waiter set FAIR after the holder
  /// looked at the word (instead of releasing the new value).
  ReleaseIgnoresFair,
}

/// How a thread's wait for the lock has gone so far (lib/owned-word.js
/// `waitState`).
#[derive(Default)]
struct Waited {
  woken: bool,
  waited: bool,
  grace_over: bool,
}

/// The word, and the registry's queue on it.
struct Lock {
  word: loom::sync::atomic::AtomicI32,
  /// The queue: tickets of the waiters on the word, oldest first.
  queue: Mutex<Vec<usize>>,
  woken: Condvar,
  tickets: AtomicUsize,
  /// Threads inside the critical section (never more than one).
  inside: AtomicUsize,
  /// How many holders learnt the lock was abandoned.
  told_abandoned: AtomicUsize,
  mutation: Mutation,
}

impl Lock {
  fn new(word: i32, mutation: Mutation) -> Arc<Lock> {
    Arc::new(Lock {
      word: loom::sync::atomic::AtomicI32::new(word),
      queue: Mutex::new(Vec::new()),
      woken: Condvar::new(),
      tickets: AtomicUsize::new(0),
      inside: AtomicUsize::new(0),
      told_abandoned: AtomicUsize::new(0),
      mutation,
    })
  }

  /// The binding's wait(i32a, index, expected): queues only if the word
  /// still holds `expected` (under the queue's lock, as the registry's
  /// bucket lock), then sleeps until a notify takes it off the queue.
  /// Returns whether it slept and was woken ("ok"). A wait on HANDED has a
  /// timeout (the grace period), which may pass at any moment: it lets go
  /// of the queue's lock, as if asleep, and times out unless a notify took
  /// it meanwhile.
  fn wait(&self, expected: i32) -> bool {
    let mut queue = self.queue.lock().unwrap();
    if self.word.load(SeqCst) != expected {
      return false; // "not-equal"
    }
    let ticket = self.tickets.fetch_add(1, SeqCst);
    queue.push(ticket);
    if expected == HANDED {
      drop(queue);
      let mut queue = self.queue.lock().unwrap();
      if let Some(at) = queue.iter().position(|&t| t == ticket) {
        queue.remove(at); // timed out: leaves the queue itself
        return false;
      }
      return true;
    }
    while queue.contains(&ticket) {
      queue = self.woken.wait(queue).unwrap();
    }
    true
  }

  /// notify(i32a, index, count): wakes the `count` oldest waiters; says
  /// how many.
  fn notify(&self, count: usize) -> usize {
    let mut queue = self.queue.lock().unwrap();
    let n = count.min(queue.len());
    queue.drain(..n);
    drop(queue);
    self.woken.notify_all();
    n
  }

  /// lib/owned-word.js `takeFree`: the fast path, and tryLock().
  /// Returns whether it took the lock, and if so whether it was abandoned.
  fn take_free(&self, me: i32) -> Option<bool> {
    if self.word.compare_exchange(FREE, me, SeqCst, SeqCst).is_ok() {
      return Some(false);
    }
    let taken = if self.mutation == Mutation::TakeAbandonedWithoutWaiters {
      me
    } else {
      me | WAITERS
    };
    self
      .word
      .compare_exchange(ABANDONED, taken, SeqCst, SeqCst)
      .ok()
      .map(|_| true)
  }

  /// lib/owned-word.js `claim`: takes a free word as me|1 (Err: whether
  /// it was abandoned), or returns the value to wait on (Ok). `w`: how the
  /// thread's wait went so far (woken by its last wait; waited before, so
  /// it asks for fairness, as after kFairAfter; saw HANDED and waited its
  /// grace period out).
  fn claim(&self, me: i32, w: &Waited) -> Result<i32, bool> {
    loop {
      let seen = self.word.load(SeqCst);
      if seen == HANDED && !w.woken && !w.grace_over {
        return Ok(HANDED);
      }
      if seen == FREE || seen == ABANDONED || seen == HANDED {
        let taken = match self.mutation {
          Mutation::ClaimWithoutWaiters => me,
          Mutation::TakeAbandonedWithoutWaiters if seen == ABANDONED => me,
          _ => me | WAITERS,
        };
        if self
          .word
          .compare_exchange(seen, taken, SeqCst, SeqCst)
          .is_ok()
        {
          return Err(seen == ABANDONED);
        }
        continue;
      }
      let mut want = seen | WAITERS;
      if self.mutation == Mutation::WaitWithoutSettingWaiters {
        want = seen;
      }
      if w.waited {
        want |= FAIR;
      }
      if want == seen
        || self
          .word
          .compare_exchange(seen, want, SeqCst, SeqCst)
          .is_ok()
      {
        return Ok(want);
      }
    }
  }

  /// A wait for the lock: claim, then wait on what it says, as lockSlow's
  /// loop does; whether the lock was abandoned once taken.
  fn wait_loop(&self, me: i32, w: &mut Waited) -> bool {
    loop {
      match self.claim(me, w) {
        Err(abandoned) => return abandoned,
        Ok(expected) => {
          w.woken = self.wait(expected);
          w.grace_over = expected == HANDED && !w.woken;
          w.waited = true;
        }
      }
    }
  }

  /// lib/async-lock.js `lock()` (lockSlow without its spin, which is a
  /// repeated `take_free`): whether the lock was abandoned.
  fn lock(&self, me: i32) -> bool {
    if let Some(abandoned) = self.take_free(me) {
      return abandoned;
    }
    self.wait_loop(me, &mut Waited::default())
  }

  /// lib/owned-word.js `unlockHeld`: a compare-exchange if nobody is
  /// queued; else the binding's releaseLock (`robust::release`, then
  /// notify 1).
  fn unlock(&self, me: i32) {
    let state = match self.word.compare_exchange(me, FREE, SeqCst, SeqCst) {
      Ok(_) => return,
      Err(state) => state,
    };
    assert_eq!(state & !FAIR, me | WAITERS, "unlock of a word not held");
    let old = if self.mutation == Mutation::ReleaseIgnoresFair {
      match self.word.compare_exchange(
        state,
        if state & FAIR != 0 { HANDED } else { FREE },
        SeqCst,
        SeqCst,
      ) {
        Ok(old) | Err(old) => old,
      }
    } else {
      robust::release(&self.word, state)
    };
    assert_eq!(
      old & !FAIR,
      me | WAITERS,
      "a release that did not release (not held)"
    );
    // src/napi/locks.rs release_lock: handed over, but nobody to hand to.
    if self.notify(1) == 0 && old & FAIR != 0 {
      robust::unhand(&self.word);
    }
  }

  /// The teardown of the env of `owner` (src/napi/held.rs
  /// `release_all`, locks.rs `free_dead`): `robust::release_dead`, then wakes one.
  fn teardown(&self, owner: u32) {
    let had_waiters = match self.mutation {
      Mutation::DeadReleaseWithoutRetry => {
        let seen = self.word.load(SeqCst);
        if robust::owner_of(seen) != owner {
          None
        } else {
          self
            .word
            .compare_exchange(seen, ABANDONED, SeqCst, SeqCst)
            .ok()
            .map(|_| seen & WAITERS != 0)
        }
      }
      Mutation::DeadReleaseAsUnlocked => {
        let had = robust::release_dead(&self.word, owner);
        if had.is_some() {
          self.word.store(FREE, SeqCst);
        }
        had
      }
      _ => robust::release_dead(&self.word, owner),
    };
    if had_waiters == Some(true) && self.mutation != Mutation::DeadReleaseWithoutNotify {
      self.notify(1);
    }
    // Then a word handed to a waiter that may have been this thread's.
    if robust::unhand(&self.word) {
      self.notify(1);
    }
  }

  /// lib/async-lock.js `lockedAsync` for waitForUnlock(): waits until the
  /// word is free, without taking it; a wake-up it took and does not use
  /// goes on to the next waiter.
  fn wait_for_unlock(&self) {
    let mut woken = false;
    loop {
      let seen = self.word.load(SeqCst);
      if seen == FREE || seen == ABANDONED || seen == HANDED {
        // lib/owned-word.js passOn: a hand-over that finds nobody is free.
        if woken && self.mutation != Mutation::WatcherKeepsWakeUp && self.notify(1) == 0 {
          robust::unhand(&self.word);
        }
        return;
      }
      let expected = seen | WAITERS;
      if seen != expected
        && self
          .word
          .compare_exchange(seen, expected, SeqCst, SeqCst)
          .is_err()
      {
        continue;
      }
      woken = self.wait(expected);
    }
  }

  /// lib/owned-word.js `lockSlow` with a deadline that passes after one
  /// wait: whether it took the lock (and if so, whether abandoned).
  fn lock_once(&self, me: i32) -> Option<bool> {
    if let Some(abandoned) = self.take_free(me) {
      return Some(abandoned);
    }
    let mut w = Waited::default();
    let expected = match self.claim(me, &w) {
      Err(abandoned) => return Some(abandoned),
      Ok(expected) => expected,
    };
    w.woken = self.wait(expected);
    w.grace_over = expected == HANDED && !w.woken;
    w.waited = true;
    if self.mutation == Mutation::GiveUpBeforeLooking {
      return None;
    }
    // The loop looks at the word (claim) before it checks the deadline.
    self.claim(me, &w).err()
  }

  /// A critical section: nobody else inside.
  fn critical_section(&self, abandoned: bool) {
    assert_eq!(self.inside.fetch_add(1, SeqCst), 0, "two holders at once");
    if abandoned {
      self.told_abandoned.fetch_add(1, SeqCst);
    }
    self.inside.fetch_sub(1, SeqCst);
  }
}

/// Owner 1 holds the lock and its thread ends (the teardown runs) while
/// owners 2 and 3 come to take it, each once.
fn holder_dies_with_two_waiters(mutation: Mutation) {
  let mut builder = loom::model::Builder::new();
  builder.preemption_bound = Some(3);
  builder.check(move || {
    let lock = Lock::new(held_by(1), mutation);
    let waiters: Vec<_> = [2u32, 3]
      .into_iter()
      .map(|owner| {
        let lock = lock.clone();
        thread::spawn(move || {
          let me = held_by(owner);
          let abandoned = lock.lock(me);
          lock.critical_section(abandoned);
          lock.unlock(me);
        })
      })
      .collect();
    lock.teardown(1);
    for waiter in waiters {
      waiter.join().unwrap();
    }
    assert_eq!(
      lock.told_abandoned.load(SeqCst),
      1,
      "exactly one holder learns"
    );
    assert_eq!(lock.word.load(SeqCst), FREE);
  });
}

/// Owner 1 takes the lock and its thread ends, holding it or after
/// unlocking it (`dies_holding`), while owner 2 comes to take it once.
fn holder_ends_with_or_without_the_lock(dies_holding: bool) {
  let mut builder = loom::model::Builder::new();
  builder.preemption_bound = Some(3);
  builder.check(move || {
    let lock = Lock::new(FREE, Mutation::None);
    let holder = {
      let lock = lock.clone();
      thread::spawn(move || {
        let me = held_by(1);
        let abandoned = lock.lock(me);
        lock.critical_section(abandoned);
        if !dies_holding {
          lock.unlock(me);
        }
        lock.teardown(1);
      })
    };
    let me = held_by(2);
    let abandoned = lock.lock(me);
    lock.critical_section(abandoned);
    lock.unlock(me);
    holder.join().unwrap();
    let told = lock.told_abandoned.load(SeqCst);
    let end = lock.word.load(SeqCst);
    if dies_holding {
      // Owner 2 came after owner 1 died (learns it, frees the word), or
      // before owner 1 took it (owner 1's death leaves it ABANDONED).
      assert!(
        (told == 1 && end == FREE) || (told == 0 && end == ABANDONED),
        "told {told}, word {end}"
      );
    } else {
      assert_eq!((told, end), (0, FREE));
    }
  });
}

#[test]
fn a_dead_holders_lock_goes_to_each_waiter_and_the_first_learns_it() {
  holder_dies_with_two_waiters(Mutation::None);
}

#[test]
fn a_thread_that_ends_holding_the_lock_frees_it_for_the_next() {
  holder_ends_with_or_without_the_lock(true);
}

#[test]
fn a_thread_that_ends_after_unlocking_changes_nothing() {
  holder_ends_with_or_without_the_lock(false);
}

/// Owner 1 holds the lock and its thread ends while owner 2 takes it
/// (lock()), owner 3 waits for it once and gives up (lock(timeout) whose
/// deadline passes), and a waitForUnlock() of owner 4 watches it: owner 2
/// gets the lock in every interleaving, and the lock ends free.
fn holder_dies_with_a_waiter_a_quitter_and_a_watcher(mutation: Mutation) {
  let mut builder = loom::model::Builder::new();
  builder.preemption_bound = Some(2);
  builder.check(move || {
    let lock = Lock::new(held_by(1), mutation);
    let taker = {
      let lock = lock.clone();
      thread::spawn(move || {
        let me = held_by(2);
        let abandoned = lock.lock(me);
        lock.critical_section(abandoned);
        lock.unlock(me);
      })
    };
    let quitter = {
      let lock = lock.clone();
      thread::spawn(move || {
        let me = held_by(3);
        if let Some(abandoned) = lock.lock_once(me) {
          lock.critical_section(abandoned);
          lock.unlock(me);
        }
      })
    };
    let watcher = {
      let lock = lock.clone();
      thread::spawn(move || lock.wait_for_unlock())
    };
    lock.teardown(1);
    for thread in [taker, quitter, watcher] {
      thread.join().unwrap();
    }
    assert!(lock.told_abandoned.load(SeqCst) <= 1);
    assert_eq!(lock.word.load(SeqCst), FREE, "the lock ends free");
  });
}

#[test]
fn a_waiter_gets_a_dead_holders_lock_past_a_quitter_and_a_watcher() {
  holder_dies_with_a_waiter_a_quitter_and_a_watcher(Mutation::None);
}

/// The mutation a child run of this test binary models
/// (`mutated_model`), by name.
const MUTATION_VAR: &str = "LOOM_ROBUST_MUTATION";

/// Runs `holder_dies_with_two_waiters` with the mutation named by
/// [`MUTATION_VAR`]. Run only as a child process of [`fails_with`]: a
/// lost wake-up is a deadlock, which loom reports by aborting the process.
#[test]
#[ignore = "run by the mutation tests, in a child process"]
fn mutated_model() {
  let name = std::env::var(MUTATION_VAR).expect("run by a mutation test");
  let mutation = [
    Mutation::None,
    Mutation::TakeAbandonedWithoutWaiters,
    Mutation::ClaimWithoutWaiters,
    Mutation::WaitWithoutSettingWaiters,
    Mutation::DeadReleaseWithoutNotify,
    Mutation::DeadReleaseWithoutRetry,
    Mutation::DeadReleaseAsUnlocked,
    Mutation::WatcherKeepsWakeUp,
    Mutation::GiveUpBeforeLooking,
    Mutation::ReleaseIgnoresFair,
  ]
  .into_iter()
  .find(|m| format!("{m:?}") == name)
  .expect("a known mutation");
  if matches!(
    mutation,
    Mutation::WatcherKeepsWakeUp | Mutation::GiveUpBeforeLooking | Mutation::ReleaseIgnoresFair
  ) {
    holder_dies_with_a_waiter_a_quitter_and_a_watcher(mutation);
  } else {
    holder_dies_with_two_waiters(mutation);
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
fn mutation_taking_an_abandoned_word_without_waiters_loses_a_wake_up() {
  fails_with(Mutation::TakeAbandonedWithoutWaiters, "deadlock");
}

#[test]
fn mutation_a_waiter_taking_without_waiters_loses_a_wake_up() {
  fails_with(Mutation::ClaimWithoutWaiters, "deadlock");
}

#[test]
fn mutation_waiting_without_setting_waiters_loses_a_wake_up() {
  fails_with(Mutation::WaitWithoutSettingWaiters, "deadlock");
}

#[test]
fn mutation_a_dead_release_that_wakes_nobody_strands_the_waiters() {
  fails_with(Mutation::DeadReleaseWithoutNotify, "deadlock");
}

#[test]
fn mutation_a_dead_release_without_retry_strands_a_waiter() {
  fails_with(Mutation::DeadReleaseWithoutRetry, "deadlock");
}

#[test]
fn mutation_a_watcher_that_keeps_its_wake_up_strands_the_waiter() {
  fails_with(Mutation::WatcherKeepsWakeUp, "deadlock");
}

#[test]
fn mutation_a_quitter_that_does_not_look_again_strands_the_waiter() {
  fails_with(Mutation::GiveUpBeforeLooking, "deadlock");
}

#[test]
fn mutation_a_release_that_ignores_a_late_fair_bit_leaves_the_lock_held() {
  fails_with(Mutation::ReleaseIgnoresFair, "deadlock");
}

#[test]
fn mutation_a_dead_release_as_unlocked_tells_nobody() {
  fails_with(Mutation::DeadReleaseAsUnlocked, "exactly one holder learns");
}
