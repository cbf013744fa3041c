//! Model checking of Barrier's word protocol with loom: the very same
//! `src/stake.rs` (the break of a generation whose party's thread ended
//! while it waited) against the JavaScript steps of lib/barrier.js,
//! mirrored here step for step (`arrive`, `standing`, `breakGeneration`),
//! over a model of the registry's wait and notify (enqueue only if the word
//! still holds the expected value, checked under the queue's lock).
//!
//! Checked in every interleaving (up to 3 preemptions): every party's wait
//! ends (a lost wake-up shows as a thread asleep for good: loom reports the
//! deadlock); a generation ends one way for all its parties: passed for
//! every one, or broken for every one that did not break it; a generation
//! that completed is never told broken.
//!
//! And a reset() racing a break: the waiting party is told broken. (Not
//! modelled: the `ended` bits, which only a party that wakes two or more
//! generations late reads: more threads than parties, or resets.)
//!
//! Each step that matters has a mutation that weakens it, and a test that
//! the model then fails, run in a child process (loom aborts the process on
//! a deadlock): a model that cannot fail proves nothing.

mod sync {
  pub use loom::sync::atomic::{fence, AtomicI32};
}

#[path = "../src/stake.rs"]
#[allow(dead_code, reason = "the Semaphore's steps have a model of their own")]
mod stake;

use std::sync::atomic::Ordering::SeqCst;

use loom::sync::atomic::AtomicI32;
use loom::sync::Arc;
use loom::thread;

#[path = "common/loom_mutation.rs"]
mod loom_mutation;
#[path = "common/loom_wait_queue.rs"]
mod loom_wait_queue;
use loom_wait_queue::WaitQueue;
use stake::{BARRIER_BROKEN as BROKEN, BARRIER_GENERATION_SHIFT as SHIFT};

/// A step of the protocol weakened, to see the model fail.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mutation {
  None,
  /// The last arrival starts the next generation but wakes nobody.
  LastWithoutNotify,
  /// A break sets BROKEN but wakes nobody.
  BreakWithoutNotify,
  /// reset() starts the next generation without PREV_BROKEN.
  ResetWithoutPrevBroken,
}

/// The state's bit: the generation before ended broken (reset()).
const PREV_BROKEN: i32 = 1 << 15;

/// How a party's wait ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
  Passed,
  Broken,
  /// It broke the generation itself (timed out, aborted).
  BrokeIt,
}

struct Barrier {
  state: AtomicI32,
  ended: AtomicI32,
  parties: i32,
  /// The registry's queue on the word (common/loom_wait_queue.rs).
  waits: WaitQueue,
  mutation: Mutation,
}

impl Barrier {
  fn new(parties: i32, mutation: Mutation) -> Arc<Barrier> {
    Arc::new(Barrier {
      state: AtomicI32::new(0),
      ended: AtomicI32::new(0),
      parties,
      waits: WaitQueue::new(),
      mutation,
    })
  }

  /// The binding's wait(i32a, index, expected) on the state.
  fn wait_on(&self, expected: i32) {
    self.waits.wait(&self.state, expected);
  }

  /// notify(i32a, index, Infinity).
  fn wake_all(&self) {
    self.waits.notify(usize::MAX);
  }

  /// lib/barrier.js `arrive`: the generation arrived at, and whether this
  /// party completed it (and woke the others). None: broken.
  fn arrive(&self) -> Option<(u32, bool)> {
    let mut seen = self.state.load(SeqCst);
    loop {
      if seen & BROKEN != 0 {
        return None;
      }
      let generation = (seen as u32) >> SHIFT;
      let arrived = (seen & 0x7fff) + 1;
      if arrived == self.parties {
        let next_generation = (generation + 1) & 0x3fff;
        let next = (next_generation << SHIFT) as i32;
        match self.state.compare_exchange(seen, next, SeqCst, SeqCst) {
          Ok(_) => {
            // lib/barrier.js clearEnded: the bit of 16 generations on.
            self
              .ended
              .fetch_and(!(1 << ((next_generation + 16) & 31)), SeqCst);
            if self.mutation != Mutation::LastWithoutNotify {
              self.wake_all();
            }
            return Some((generation, true));
          }
          Err(now) => seen = now,
        }
        continue;
      }
      match self.state.compare_exchange(seen, seen + 1, SeqCst, SeqCst) {
        Ok(_) => return Some((generation, false)),
        Err(now) => seen = now,
      }
    }
  }

  /// lib/barrier.js `standing`: Some(passed?) once the generation is over.
  fn standing(&self, generation: u32, state: i32) -> Option<bool> {
    let now = (state as u32) >> SHIFT;
    if now == generation {
      return if state & BROKEN != 0 {
        Some(false)
      } else {
        None
      };
    }
    if now == (generation + 1) & 0x3fff {
      return Some(state & PREV_BROKEN == 0);
    }
    Some(self.ended.load(SeqCst) & (1 << (generation & 31)) == 0)
  }

  /// lib/barrier.js `reset`: breaks the current generation, then starts the
  /// next one saying the one before was broken.
  fn reset(&self) {
    let generation = (self.state.load(SeqCst) as u32) >> SHIFT;
    self.break_generation(generation, false);
    let broken = self.state.load(SeqCst);
    if (broken as u32) >> SHIFT != generation {
      return;
    }
    self.ended.fetch_or(1 << (generation & 31), SeqCst);
    let next = (((generation + 1) & 0x3fff) << SHIFT) as i32;
    let next = if self.mutation == Mutation::ResetWithoutPrevBroken {
      next
    } else {
      next | PREV_BROKEN
    };
    if self
      .state
      .compare_exchange(broken, next, SeqCst, SeqCst)
      .is_ok()
    {
      self.wake_all();
    }
  }

  /// lib/barrier.js `breakGeneration` (a timeout or an abort), or, with
  /// `dead`, the teardown's src/stake.rs `break_dead_party`; then every
  /// waiter is woken. Whether it broke the generation.
  fn break_generation(&self, generation: u32, dead: bool) -> bool {
    let broke = if dead {
      stake::break_dead_party(&self.state, &self.ended, generation)
    } else {
      let mut seen = self.state.load(SeqCst);
      loop {
        if (seen as u32) >> SHIFT != generation || seen & BROKEN != 0 {
          break false;
        }
        match self
          .state
          .compare_exchange(seen, seen | BROKEN, SeqCst, SeqCst)
        {
          Ok(_) => {
            self.ended.fetch_or(1 << (generation & 31), SeqCst);
            break true;
          }
          Err(now) => seen = now,
        }
      }
    };
    if broke && self.mutation != Mutation::BreakWithoutNotify {
      self.wake_all();
    }
    broke
  }

  /// A party: arrives, then waits until its generation is over. With
  /// `gives_up`, it breaks the generation instead of its first wait (a
  /// timeout that has passed, or an abort), as lib/barrier.js does when
  /// next() throws; with `dies` too, it does so as a thread that ended.
  fn party(&self, gives_up: bool, dies: bool) -> Outcome {
    let Some((generation, last)) = self.arrive() else {
      return Outcome::Broken;
    };
    if last {
      return Outcome::Passed;
    }
    self.wait_for(generation, gives_up, dies)
  }

  /// The waiting part of [`Barrier::party`], for a party of `generation`.
  fn wait_for(&self, generation: u32, gives_up: bool, dies: bool) -> Outcome {
    let mut first = true;
    loop {
      let state = self.state.load(SeqCst);
      if let Some(passed) = self.standing(generation, state) {
        return if passed {
          Outcome::Passed
        } else {
          Outcome::Broken
        };
      }
      if gives_up && first {
        first = false;
        if self.break_generation(generation, dies) {
          return Outcome::BrokeIt;
        }
        continue; // over meanwhile: its outcome is this party's
      }
      self.wait_on(state);
    }
  }
}

/// Three parties; the third gives up (or dies) while it waits. Every party
/// ends; the generation ends one way for all.
fn one_gives_up(mutation: Mutation, dies: bool) {
  let mut model = loom::model::Builder::new();
  model.preemption_bound = Some(3);
  model.check(move || {
    let barrier = Barrier::new(3, mutation);
    let parties: Vec<_> = [false, true]
      .into_iter()
      .map(|gives_up| {
        let barrier = barrier.clone();
        thread::spawn(move || barrier.party(gives_up, dies))
      })
      .collect();
    let mut outcomes = vec![barrier.party(false, false)];
    for party in parties {
      outcomes.push(party.join().unwrap());
    }
    let broke = outcomes.contains(&Outcome::BrokeIt);
    for outcome in &outcomes {
      match outcome {
        Outcome::Passed => assert!(
          !broke,
          "a party passed a generation another broke: {outcomes:?}"
        ),
        Outcome::Broken => assert!(
          broke,
          "a party was told broken with nobody breaking it: {outcomes:?}"
        ),
        Outcome::BrokeIt => {}
      }
    }
  });
}

/// Two parties, two generations, nobody gives up: every wait passes.
fn two_generations(mutation: Mutation) {
  let mut model = loom::model::Builder::new();
  model.preemption_bound = Some(3);
  model.check(move || {
    let barrier = Barrier::new(2, mutation);
    let other = {
      let barrier = barrier.clone();
      thread::spawn(move || [barrier.party(false, false), barrier.party(false, false)])
    };
    let mine = [barrier.party(false, false), barrier.party(false, false)];
    let theirs = other.join().unwrap();
    assert_eq!(mine, [Outcome::Passed; 2]);
    assert_eq!(theirs, [Outcome::Passed; 2]);
  });
}

/// Three parties: one waits, one gives up, and another thread resets the
/// barrier once one of them arrived: the waiting party is told broken,
/// never passed.
fn reset_during_a_break(mutation: Mutation) {
  let mut model = loom::model::Builder::new();
  model.preemption_bound = Some(2);
  model.check(move || {
    let barrier = Barrier::new(3, mutation);
    // The waiting party arrives before the reset (one that came after
    // would wait for a generation of three that nobody else comes to).
    let (generation, _) = barrier.arrive().unwrap();
    let waiter = {
      let barrier = barrier.clone();
      thread::spawn(move || barrier.wait_for(generation, false, false))
    };
    let quitter = {
      let barrier = barrier.clone();
      thread::spawn(move || barrier.party(true, false))
    };
    barrier.reset();
    let (waited, quit) = (waiter.join().unwrap(), quitter.join().unwrap());
    assert_ne!(
      waited,
      Outcome::Passed,
      "a party passed a generation that was broken and reset ({quit:?})"
    );
  });
}

#[test]
fn a_reset_during_a_break_tells_the_waiting_party_broken() {
  reset_during_a_break(Mutation::None);
}

#[test]
fn two_parties_pass_two_generations() {
  two_generations(Mutation::None);
}

#[test]
fn a_party_that_gives_up_breaks_the_generation_for_all_or_none() {
  one_gives_up(Mutation::None, false);
}

#[test]
fn a_party_whose_thread_ends_breaks_the_generation_for_all_or_none() {
  one_gives_up(Mutation::None, true);
}

/// The mutation a child run of this test binary models, by name.
const MUTATION_VAR: &str = "LOOM_BARRIER_MUTATION";

/// Runs the model with the mutation named by [`MUTATION_VAR`]. Run only as
/// a child process of [`fails_with`].
#[test]
#[ignore = "run by the mutation tests, in a child process"]
fn mutated_model() {
  let name = std::env::var(MUTATION_VAR).expect("run by a mutation test");
  let mutation = [
    Mutation::None,
    Mutation::LastWithoutNotify,
    Mutation::BreakWithoutNotify,
    Mutation::ResetWithoutPrevBroken,
  ]
  .into_iter()
  .find(|m| format!("{m:?}") == name)
  .expect("a known mutation");
  match mutation {
    Mutation::LastWithoutNotify => two_generations(mutation),
    Mutation::ResetWithoutPrevBroken => reset_during_a_break(mutation),
    _ => one_gives_up(mutation, false),
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
fn mutation_a_last_arrival_that_wakes_nobody_strands_the_party() {
  fails_with(Mutation::LastWithoutNotify, "deadlock");
}

#[test]
fn mutation_a_break_that_wakes_nobody_strands_the_parties() {
  fails_with(Mutation::BreakWithoutNotify, "deadlock");
}

#[test]
fn mutation_a_reset_without_prev_broken_tells_a_broken_generation_passed() {
  fails_with(
    Mutation::ResetWithoutPrevBroken,
    "passed a generation that was broken",
  );
}
