//! Blocking park/unpark for the synchronous `wait`.
//!
//! A [`Parker`] belongs to one thread and is reused by every sync wait it
//! makes ([`Parker::reset`] starts a wait): a wait allocates nothing. The
//! thread that takes the waiter out of the registry (a notify) calls
//! [`Parker::unpark`]; the waiting thread sleeps in [`Parker::park_until`]
//! for at most one slice at a time, so that it can go back to JS between
//! slices and let `worker.terminate()` run (a blocking wait in Rust is not
//! interruptible by V8's termination).
//!
//! The state is one word of a [`Futex`] (see `crate::sync`):
//!
//! | state     | meaning                                                    |
//! |-----------|------------------------------------------------------------|
//! | `WAITING` | nobody woke it yet, and it is not asleep                    |
//! | `PARKED`  | nobody woke it yet, and it may be asleep on the futex       |
//! | `WOKEN`   | a notify took it off its queue                              |
//!
//! `unpark` swaps in `WOKEN` and makes the wake-up system call only when
//! it swapped out `PARKED`: a waiter still spinning costs its notifier no
//! system call. Before sleeping, a waiter looks at the word for a while
//! ([`Parker::spin`]; how long adapts: `crate::sync::SPIN_MAX`).
//!
//! **Reuse.** A notify's `unpark` runs after the registry's lock is gone, so
//! it may come late; [`reset`](Parker::reset) must not undo it, or the next
//! wait would start woken by a notify meant for this one (or the late swap
//! would wake the next wait). So a wait ends only once no unpark for it is
//! outstanding: it saw `WOKEN`, or it took its own waiter off the queue
//! (then no notify has it), or, if a notify took it first, it waits in
//! [`park`](Parker::park) for that unpark (see `crate::sync_wait`). What
//! may still come late is only the wake-up system call of an unpark that
//! already swapped: the futex then returns early, the word says
//! `WAITING`/`PARKED`, and the waiter sleeps on. Model-checked in
//! `tests/loom_sync_wait.rs`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use crate::sync::{
  spin_round, yield_core, Futex, Waited, SPIN_CLOCK_EVERY, SPIN_MAX, SPIN_MIN, SPIN_PROBE_EVERY,
  SPIN_TIME, SPIN_YIELD_EVERY, YIELD_OFF_MAX, YIELD_OFF_MIN, YIELD_SLOW,
};

// A spin near its deadline (SPIN_MIN rounds) never yields.
const _: () = assert!(SPIN_MIN < SPIN_YIELD_EVERY);

/// Nobody woke it yet, and it is not asleep.
const WAITING: u32 = 0;
/// Nobody woke it yet, and it may be asleep on the futex.
const PARKED: u32 = 1;
/// A notify took it off its queue.
const WOKEN: u32 = 2;

/// Where a parked thread stands after a slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParkState {
  /// Nobody woke it yet.
  Waiting,
  /// A notify took it off its queue.
  Woken,
}

/// See the module docs.
pub struct Parker {
  /// `WAITING`, `PARKED` or `WOKEN`. Written by its thread (`reset`,
  /// `WAITING` → `PARKED`) and by the one unpark of each wait (→ `WOKEN`).
  state: Futex,
  /// How many rounds the next spin lasts, and how many waits since one
  /// last lasted `SPIN_MAX`: its thread's own (atomics only because the
  /// parker is shared with its notifiers, who never touch these; std's,
  /// not the model's, under loom: no step of any race).
  spin_limit: AtomicU32,
  spins_short: AtomicU32,
  /// How many more spins (one per slice of a wait: `sync_wait`) go without
  /// yielding after a slow yield, and how many the next slow yield turns
  /// yields off for (it only grows): its thread's own, as the two above.
  yields_off: AtomicU32,
  yield_backoff: AtomicU32,
}

impl Default for Parker {
  fn default() -> Self {
    Self::new()
  }
}

impl Parker {
  pub fn new() -> Self {
    Parker {
      state: Futex::new(WAITING),
      spin_limit: AtomicU32::new(SPIN_MAX),
      spins_short: AtomicU32::new(0),
      yields_off: AtomicU32::new(0),
      yield_backoff: AtomicU32::new(YIELD_OFF_MIN),
    }
  }

  /// Starts a new wait on this parker, before its waiter is queued (the
  /// queue's lock publishes this to the notifier that takes it). Only
  /// when no unpark is outstanding: see the module docs.
  pub fn reset(&self) {
    self.state.word().store(WAITING, Ordering::Relaxed);
  }

  /// Whether it announced that it may be asleep, for a test to wait on.
  pub fn parked_for_testing(&self) -> bool {
    self.state.word().load(Ordering::SeqCst) == PARKED
  }

  /// How many rounds its next spin lasts (a probe's included), for a test
  /// of the adaptation.
  pub fn spin_limit_for_testing(&self) -> u32 {
    self.next_spin().1
  }

  /// The spin limit as stored, and how many rounds the next spin lasts:
  /// that, or the whole of `SPIN_MAX` if it is a probe (the
  /// `SPIN_PROBE_EVERY`-th wait since the last whole spin).
  fn next_spin(&self) -> (u32, u32) {
    let stored = self.spin_limit.load(Ordering::Relaxed);
    let probe =
      stored < SPIN_MAX && self.spins_short.load(Ordering::Relaxed) + 1 >= SPIN_PROBE_EVERY;
    (stored, if probe { SPIN_MAX } else { stored })
  }

  /// Whether an unpark came.
  fn woken(&self) -> bool {
    self.state.word().load(Ordering::Acquire) == WOKEN
  }

  /// Spins on the word before sleeping: whether an unpark came meanwhile.
  /// Its thread's alone. As long as spins find their wake-up, each lasts
  /// up to `SPIN_MAX` rounds and `SPIN_TIME`; one that finds nothing
  /// halves the next, down to `SPIN_MIN`, and every `SPIN_PROBE_EVERY`-th
  /// wait spins the whole again, once (see `crate::sync::SPIN_MAX`). A wait whose
  /// `deadline` comes within 2 × `SPIN_TIME` spins only `SPIN_MIN` rounds,
  /// so that `wait(…, 0)` returns at once and (unless the thread is
  /// preempted mid-spin) no notify after the deadline is taken for one
  /// before it. The clock is read only for such a deadline, every
  /// `SPIN_CLOCK_EVERY` rounds and after each yield (a notify that comes
  /// early costs no clock read). Every `SPIN_YIELD_EVERY`-th round yields
  /// the core (`crate::sync::yield_core`); a yield slower than `YIELD_SLOW`
  /// (a busy thread kept the core) ends the spin and turns yields off for
  /// the next `YIELD_OFF_MIN` spins (one per 10 ms slice of a wait),
  /// twice as many after each such yield that follows, up to
  /// `YIELD_OFF_MAX`.
  pub fn spin(&self, deadline: Option<Instant>) -> bool {
    let (stored, mut limit) = self.next_spin();
    let probe = limit != stored;
    // A wait whose deadline is near spins SPIN_MIN rounds, and such a spin
    // says nothing of how soon wake-ups come: it leaves the adaptation
    // alone (unless it finds its wake-up: see `spin_found`). Otherwise a
    // timed wait's spin ends SPIN_TIME from now by the clock it just read,
    // at least SPIN_TIME before its deadline: a look at the clock comes
    // every SPIN_CLOCK_EVERY rounds, far less than that.
    let mut adapt = true;
    let mut end = None;
    if let Some(deadline) = deadline {
      let now = Instant::now();
      if deadline <= now + 2 * SPIN_TIME {
        limit = limit.min(SPIN_MIN);
        adapt = false;
      } else {
        end = Some(now + SPIN_TIME);
      }
    }
    // Counted towards the next probe, or the probe spun (not a short wait's
    // few rounds: the probe is then still to come).
    if adapt && stored < SPIN_MAX {
      let short = if probe {
        0
      } else {
        self.spins_short.load(Ordering::Relaxed) + 1
      };
      self.spins_short.store(short, Ordering::Relaxed);
    }
    let off = self.yields_off.load(Ordering::Relaxed);
    if off > 0 {
      self.yields_off.store(off - 1, Ordering::Relaxed);
    }
    let may_yield = off == 0;
    for round in 0..limit {
      if self.woken() {
        return self.spin_found();
      }
      if may_yield && round % SPIN_YIELD_EVERY == SPIN_YIELD_EVERY - 1 {
        let before = Instant::now();
        yield_core();
        let now = Instant::now();
        if now - before > YIELD_SLOW {
          self.yielded_slowly();
          break;
        }
        if now >= *end.get_or_insert(before + SPIN_TIME) {
          break;
        }
        continue;
      }
      spin_round();
      if round % SPIN_CLOCK_EVERY == SPIN_CLOCK_EVERY - 1 {
        // Untimed, the first look at the clock starts it (SPIN_CLOCK_EVERY
        // rounds late).
        let now = Instant::now();
        if now >= *end.get_or_insert(now + SPIN_TIME) {
          break;
        }
      }
    }
    if self.woken() {
      return self.spin_found();
    }
    // Halved from what was stored: a probe that found nothing leaves the
    // spins where they were (halving the probe's whole would make the next
    // few spins long again, doubling what the probes cost).
    if adapt {
      self
        .spin_limit
        .store((stored / 2).max(SPIN_MIN), Ordering::Relaxed);
    }
    false
  }

  /// A yield gave the core to a thread that kept it: no yields for the
  /// next `yield_backoff` spins (one per slice of a wait), and twice as
  /// many after the next such.
  fn yielded_slowly(&self) {
    let backoff = self.yield_backoff.load(Ordering::Relaxed);
    self.yields_off.store(backoff, Ordering::Relaxed);
    self
      .yield_backoff
      .store((backoff * 2).min(YIELD_OFF_MAX), Ordering::Relaxed);
  }

  /// A spin found its wake-up: the next one may be whole.
  fn spin_found(&self) -> bool {
    self.spin_limit.store(SPIN_MAX, Ordering::Relaxed);
    self.spins_short.store(0, Ordering::Relaxed);
    true
  }

  /// Marks it as maybe asleep: false if an unpark came first.
  fn announce_sleep(&self) -> bool {
    match self
      .state
      .word()
      .compare_exchange(WAITING, PARKED, Ordering::Acquire, Ordering::Acquire)
    {
      Ok(_) => true,
      Err(now) => now == PARKED,
    }
  }

  /// Sleeps until woken or until `until`, whichever comes first (no spin:
  /// see [`spin`](Self::spin)).
  pub fn park_until(&self, until: Instant) -> ParkState {
    while self.announce_sleep() {
      if self.state.wait(PARKED, Some(until)) == Waited::TimedOut {
        break;
      }
    }
    if self.woken() {
      ParkState::Woken
    } else {
      ParkState::Waiting
    }
  }

  /// Sleeps until woken, however long: for a waiter that lost the race to
  /// take itself off its queue, whose notifier is about to call `unpark`.
  pub fn park(&self) {
    while self.announce_sleep() {
      self.state.wait(PARKED, None);
    }
  }

  /// Wakes the parked thread. Called once per wait, by the owner of the
  /// outcome.
  pub fn unpark(&self) {
    // After the swap the waiter may end its wait and start the next one
    // (`reset`); the system call below then only makes that wait look
    // again, which it survives (see the module docs).
    if self.state.word().swap(WOKEN, Ordering::Release) == PARKED {
      self.state.wake_one();
    }
  }
}

impl crate::wake::Unpark for Parker {
  fn unpark(&self) {
    Parker::unpark(self);
  }
}
