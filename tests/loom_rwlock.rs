//! Model checking of RwLock's word protocol with loom: the very same
//! `src/stake.rs` (the return of a dead thread's share of the state)
//! against the JavaScript steps of lib/rwlock.js, mirrored here step for
//! step (`takeRead`, `takeWrite`, `countWaitingWriter`,
//! `uncountWaitingWriter`, `giveRead`, `giveWrite` and the look at
//! `waiters` right after each of their changes, `lockSlow`), over a model of the registry's wait and notify (enqueue
//! only if the word still holds the expected value, checked under the
//! queue's lock; notify takes waiters off in FIFO order). Each thread has
//! its own instance, whose stake (its share of `state`, its waits counted
//! in `waiters`) the model keeps as lib/rwlock.js does, next to the atomic
//! step that changed it.
//!
//! Checked in every interleaving (all of them for two threads, up to 3 or
//! 4 preemptions for three), for two readers and a writer, a reader and
//! two writers, a writer that gives up while a reader waits behind it, and
//! a thread that ends holding a read, the write lock, or counted as a
//! waiting writer (its teardown is src/stake.rs `release_dead_share`, then
//! a wake-up of every waiter): never a writer inside with a reader or
//! another writer (one word counts who is inside, changed by
//! read-modify-writes: of two threads inside at once, the second sees the
//! first); every blocked thread gets the lock (a lost wake-up shows as a
//! thread asleep for good: loom reports the deadlock); and once every other
//! thread is gone, a reader and then a writer get the lock (a share left
//! in `state` keeps one of them waiting for good), which is then free.
//!
//! JavaScript's Atomics are sequentially consistent; loom models SeqCst
//! accesses as AcqRel only, so the mirror puts a SeqCst fence between the
//! two halves of each store-buffering pair the protocol relies on (a
//! waiter's add to `waiters` and load of `state`; a release's change of
//! `state` and load of `waiters`), as src/stake.rs does.
//!
//! Not modelled: the wake-up a release owes when its notify throws (the
//! stake's third Int32), for the teardown wakes the waiters whatever the
//! stake says, which `dies_mid_release` checks; the spin before the wait
//! (a take repeated); reads an instance takes again past waiting writers,
//! and the saturations (1023 writers counted, 2^20 - 1 readers).
//!
//! Each step that matters has a mutation that weakens it, and a test that
//! the model then fails, run in a child process (loom aborts the process on
//! a deadlock): a model that cannot fail proves nothing.

mod sync {
  pub use loom::sync::atomic::{fence, AtomicI32};
}

#[path = "../src/stake.rs"]
#[allow(
  dead_code,
  reason = "the Semaphore's and the Barrier's steps have models of their own"
)]
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

// lib/rwlock.js's state: WRITER, the writers waiting, the readers.
const READER: i32 = 1;
const READERS: i32 = 0xfffff;
const WAITING_WRITER: i32 = 1 << 20;
const WAITING_WRITERS: i32 = 0x3ff << 20;
const WRITER: i32 = stake::RWLOCK_WRITER;
const ABANDONED: i32 = stake::RWLOCK_ABANDONED;
const WRITE_BLOCKERS: i32 = WRITER | READERS;

/// A step of the protocol weakened, to see the model fail.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mutation {
  None,
  /// The last reader's release wakes nobody.
  ReadReleaseWithoutWake,
  /// A writer's release wakes nobody.
  WriteReleaseWithoutWake,
  /// A writer that stops waiting takes itself out of the writers waiting,
  /// but wakes nobody.
  WithdrawWithoutWake,
  /// A writer that stops waiting stays counted among the writers waiting.
  WithdrawKeepsCount,
  /// A release reads `waiters` before it changes `state`.
  ReadWaitersFirst,
  /// A waiter reads `state` before it adds itself to `waiters`.
  AnnounceLate,
  /// A waiter waits on `state` read once more, not on the value it looked at.
  WaitOnFreshValue,
  /// takeWrite takes while readers hold the lock.
  WriteIgnoresReaders,
  /// takeRead takes while a writer holds the lock (only writers waiting
  /// keep a read out).
  ReadIgnoresWriter,
  /// takeWrite leaves a dead writer's mark out of its share, so that its
  /// release leaves the mark in the state.
  TakeLeavesMark,
  /// A writer that counted itself among the writers waiting takes the
  /// lock without taking its count back.
  TakeKeepsCount,
  /// The dead thread's teardown takes its waits out of `waiters` but not
  /// its share out of `state`.
  DeadKeepsShare,
  /// The dead thread's teardown gives its share back but wakes nobody.
  DeadReleaseWithoutWake,
  /// The teardown wakes the waiters only if the thread's share was not 0.
  DeadWakesOnlyIfHeld,
}

/// How a blocking lock ends if the lock is held when it looks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Blocked {
  /// It waits (readSync(), writeSync()).
  Waits,
  /// Its first `waits` waits time out (return at once, without a
  /// wake-up); then its deadline has passed: it gives up (lockSlow's
  /// `remaining <= 0`; an abort, for read() and write()).
  GivesUp { waits: u32 },
  /// Its thread ends there, counted in `waiters` (and, a writer, among
  /// the writers waiting): the teardown runs.
  Dies,
}

/// How a blocking lock ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Locked {
  Took,
  GaveUp,
  Died,
}

/// An instance's stake (lib/rwlock.js `#stake`): its share of `state` and
/// its waits counted in `waiters`, the two the teardown gives back.
#[derive(Default, Debug)]
struct Stake {
  share: i32,
  announced: i32,
}

/// The RwLock's words, and the registry's queue on `state`.
struct RwLock {
  state: AtomicI32,
  waiters: AtomicI32,
  /// The registry's queue on the word (common/loom_wait_queue.rs).
  waits: WaitQueue,
  /// Who is inside now: READER for each reader, WRITER for a writer.
  inside: AtomicI32,
  mutation: Mutation,
}

impl RwLock {
  fn new(mutation: Mutation) -> Arc<RwLock> {
    Arc::new(RwLock {
      state: AtomicI32::new(0),
      waiters: AtomicI32::new(0),
      waits: WaitQueue::new(),
      inside: AtomicI32::new(0),
      mutation,
    })
  }

  /// The binding's wait(i32a, index, expected) on `state`.
  fn wait_on(&self, expected: i32) {
    self.waits.wait(&self.state, expected);
  }

  /// notify(i32a, index, Infinity).
  fn wake_all(&self) {
    self.waits.notify(usize::MAX);
  }

  /// lib/rwlock.js `readBlocked` (the blocking forms: `recursive`): whether
  /// `seen` keeps a read of this instance out: a writer; a waiting writer
  /// other than the instance's own, unless the instance holds a read.
  fn read_blocked(&self, seen: i32, stake: &Stake) -> bool {
    if seen & WRITER != 0 && self.mutation != Mutation::ReadIgnoresWriter {
      return true;
    }
    if stake.share & READERS != 0 {
      return false;
    }
    seen & WAITING_WRITERS != stake.share & WAITING_WRITERS
  }

  /// lib/rwlock.js `takeRead`: a CAS from 0 (a free lock) to 1 first, then
  /// a CAS of state + 1 from the value that one saw while nothing keeps the
  /// read out.
  fn take_read(&self, stake: &mut Stake) -> bool {
    let mut seen = match self.state.compare_exchange(0, READER, SeqCst, SeqCst) {
      Ok(_) => {
        stake.share += READER;
        return true;
      }
      Err(was) => was,
    };
    while !self.read_blocked(seen, stake) {
      assert_ne!(seen & READERS, READERS, "too many readers");
      match self
        .state
        .compare_exchange(seen, seen + READER, SeqCst, SeqCst)
      {
        Ok(_) => {
          stake.share += READER;
          return true;
        }
        Err(was) => seen = was,
      }
    }
    false
  }

  /// lib/rwlock.js `takeWrite`: a CAS of state + WRITER (minus this wait's
  /// count among the writers waiting, if `waiting`) while nobody holds it.
  fn take_write(&self, stake: &mut Stake, waiting: bool) -> bool {
    let delta = if waiting && self.mutation != Mutation::TakeKeepsCount {
      WRITER - WAITING_WRITER
    } else {
      WRITER
    };
    let blockers = if self.mutation == Mutation::WriteIgnoresReaders {
      WRITER
    } else {
      WRITE_BLOCKERS
    };
    let mut seen = self.state.load(SeqCst);
    while seen & blockers == 0 {
      match self
        .state
        .compare_exchange(seen, seen + delta, SeqCst, SeqCst)
      {
        Ok(_) => {
          // (The mark of a dead writer, if the state has it: this
          // writer's release takes it out.)
          let mark = if self.mutation == Mutation::TakeLeavesMark {
            0
          } else {
            seen & ABANDONED
          };
          stake.share = stake.share.wrapping_add(delta).wrapping_add(mark);
          return true;
        }
        Err(was) => seen = was,
      }
    }
    false
  }

  /// lib/rwlock.js `take`.
  fn take(&self, stake: &mut Stake, write: bool) -> bool {
    if write {
      self.take_write(stake, false)
    } else {
      self.take_read(stake)
    }
  }

  /// lib/rwlock.js `countWaitingWriter`: state + WAITING_WRITER unless
  /// 1023 are counted.
  fn count_waiting_writer(&self, stake: &mut Stake) -> bool {
    let mut seen = self.state.load(SeqCst);
    while seen & WAITING_WRITERS != WAITING_WRITERS {
      match self
        .state
        .compare_exchange(seen, seen + WAITING_WRITER, SeqCst, SeqCst)
      {
        Ok(_) => {
          stake.share += WAITING_WRITER;
          return true;
        }
        Err(was) => seen = was,
      }
    }
    false
  }

  /// With [`Mutation::ReadWaitersFirst`], the load of `waiters` a release
  /// makes before it changes `state` (else None: after, in `wake_waiters`).
  fn waiters_first(&self) -> Option<bool> {
    if self.mutation != Mutation::ReadWaitersFirst {
      return None;
    }
    let waiting = self.waiters.load(SeqCst) > 0;
    fence(SeqCst);
    Some(waiting)
  }

  /// lib/rwlock.js's look at `waiters` right after a change of `state` (in
  /// giveRead, giveWrite and uncountWaitingWriter): wakes
  /// every waiter if `waiters` is above 0. (The fence: the change and the
  /// load are a store-buffering pair with a waiter's add and look.)
  fn wake_waiters(&self, waiting_first: Option<bool>) {
    let waiting = waiting_first.unwrap_or_else(|| {
      fence(SeqCst);
      self.waiters.load(SeqCst) > 0
    });
    if waiting {
      self.wake_all();
    }
  }

  /// lib/rwlock.js `uncountWaitingWriter`: a writer that stops waiting
  /// takes itself out of the writers waiting and wakes the waiters.
  fn uncount_waiting_writer(&self, stake: &mut Stake) {
    if self.mutation == Mutation::WithdrawKeepsCount {
      return;
    }
    let first = self.waiters_first();
    self.state.fetch_sub(WAITING_WRITER, SeqCst);
    stake.share -= WAITING_WRITER;
    if self.mutation != Mutation::WithdrawWithoutWake {
      self.wake_waiters(first);
    }
  }

  /// lib/rwlock.js `giveRead`: state - 1; the last reader wakes the waiters.
  fn give_read(&self, stake: &mut Stake) {
    assert_ne!(
      stake.share & READERS,
      0,
      "gives back a read it does not hold"
    );
    let first = self.waiters_first();
    let was = self.state.fetch_sub(READER, SeqCst);
    stake.share -= READER;
    if was & READERS == READER && self.mutation != Mutation::ReadReleaseWithoutWake {
      self.wake_waiters(first);
    }
  }

  /// lib/rwlock.js `giveWrite`: state - WRITER (and the mark of a dead
  /// writer, if its take found one), then wakes the waiters.
  fn give_write(&self, stake: &mut Stake) {
    assert_ne!(
      stake.share & WRITER,
      0,
      "gives back a write it does not hold"
    );
    let first = self.waiters_first();
    let mine = WRITER | (stake.share & ABANDONED);
    self.state.fetch_sub(mine, SeqCst);
    stake.share = stake.share.wrapping_sub(mine);
    if self.mutation != Mutation::WriteReleaseWithoutWake {
      self.wake_waiters(first);
    }
  }

  /// lib/rwlock.js `give`.
  fn give(&self, stake: &mut Stake, write: bool) {
    if write {
      self.give_write(stake);
    } else {
      self.give_read(stake);
    }
  }

  /// lib/rwlock.js `lockSync` and `lockSlow` (without the spin, a take
  /// repeated): take; else (a writer: count itself among the writers
  /// waiting) announce the wait in `waiters`, look at `state`, wait on the
  /// value seen if it keeps this lock out (or time out, give up, or die
  /// there, as `blocked` says), leave, take; a writer that did not take takes itself
  /// out of the writers waiting (lockSlow's outer finally).
  fn lock(&self, stake: &mut Stake, write: bool, blocked: Blocked) -> Locked {
    if self.take(stake, write) {
      return Locked::Took;
    }
    let counted = write && self.count_waiting_writer(stake);
    let mut blocked_looks = 0;
    let took = loop {
      let seen = if self.mutation == Mutation::AnnounceLate {
        let seen = self.state.load(SeqCst);
        fence(SeqCst);
        self.waiters.fetch_add(1, SeqCst);
        stake.announced += 1;
        seen
      } else {
        self.waiters.fetch_add(1, SeqCst);
        stake.announced += 1;
        fence(SeqCst);
        self.state.load(SeqCst)
      };
      let is_blocked = if write {
        seen & WRITE_BLOCKERS != 0
      } else {
        self.read_blocked(seen, stake)
      };
      let mut gave_up = false;
      if is_blocked {
        blocked_looks += 1;
        match blocked {
          Blocked::Waits => {
            if self.mutation == Mutation::WaitOnFreshValue {
              self.wait_on(self.state.load(SeqCst));
            } else {
              self.wait_on(seen);
            }
          }
          Blocked::GivesUp { waits } => gave_up = blocked_looks > waits,
          Blocked::Dies => {
            // Terminated in its wait: no finally runs; the teardown gives
            // back what the stake says.
            self.die(stake);
            return Locked::Died;
          }
        }
      }
      // The inner finally: leave.
      self.waiters.fetch_sub(1, SeqCst);
      stake.announced -= 1;
      if gave_up {
        break false;
      }
      if write {
        if self.take_write(stake, counted) {
          break true;
        }
      } else if self.take_read(stake) {
        break true;
      }
    };
    if counted && !took {
      self.uncount_waiting_writer(stake);
    }
    if took {
      Locked::Took
    } else {
      Locked::GaveUp
    }
  }

  /// Goes inside the critical section, checking that nobody it excludes is
  /// in it.
  fn enter(&self, write: bool) {
    if write {
      let was = self.inside.fetch_add(WRITER, SeqCst);
      assert_eq!(
        was, 0,
        "mutual exclusion broken: a writer went in with others inside"
      );
    } else {
      let was = self.inside.fetch_add(READER, SeqCst);
      assert_eq!(
        was & WRITER,
        0,
        "mutual exclusion broken: a reader went in with a writer inside"
      );
    }
  }

  /// Leaves the critical section.
  fn leave(&self, write: bool) {
    self
      .inside
      .fetch_sub(if write { WRITER } else { READER }, SeqCst);
  }

  /// Takes the lock (blocking), goes in and out, and gives it back.
  fn use_lock(&self, write: bool) {
    let mut stake = Stake::default();
    assert_eq!(self.lock(&mut stake, write, Blocked::Waits), Locked::Took);
    self.enter(write);
    self.leave(write);
    self.give(&mut stake, write);
  }

  /// The env teardown of a thread that ends with `stake` (src/napi/held.rs
  /// `release_all`, `Stake::give_back`): src/stake.rs gives its share and its waits back;
  /// then every waiter is woken.
  fn die(&self, stake: &Stake) {
    let share = if self.mutation == Mutation::DeadKeepsShare {
      0
    } else {
      stake.share
    };
    let waiting = stake::release_dead_share(&self.state, &self.waiters, share, stake.announced);
    let wake = match self.mutation {
      Mutation::DeadReleaseWithoutWake => false,
      Mutation::DeadWakesOnlyIfHeld => waiting && stake.share != 0,
      _ => waiting,
    };
    if wake {
      self.wake_all();
    }
  }

  /// At the end, with every other thread gone: a reader and then a writer
  /// get the lock (a share left in `state` would keep one of them waiting
  /// for good: loom reports the deadlock), and the lock is then free,
  /// with nobody counted waiting.
  fn at_the_end(&self) {
    self.use_lock(false);
    self.use_lock(true);
    self.assert_free();
  }

  /// The lock is free, and nobody counted waiting.
  fn assert_free(&self) {
    assert_eq!(
      self.state.load(SeqCst),
      0,
      "the lock is not free at the end"
    );
    assert_eq!(
      self.waiters.load(SeqCst),
      0,
      "waits still counted at the end"
    );
    assert_eq!(self.inside.load(SeqCst), 0);
  }
}

/// Checks `f` in every interleaving with at most `preemptions` preemptions
/// (None: all of them).
fn model(preemptions: Option<usize>, f: impl Fn() + Sync + Send + 'static) {
  let mut model = loom::model::Builder::new();
  model.preemption_bound = preemptions;
  model.check(f);
}

/// Two readers and a writer, each blocking: never a writer with anyone
/// inside; every one of them gets the lock.
fn contention(mutation: Mutation) {
  model(Some(3), move || {
    let rwlock = RwLock::new(mutation);
    let others: Vec<_> = [true, false]
      .into_iter()
      .map(|write| {
        let rwlock = rwlock.clone();
        thread::spawn(move || rwlock.use_lock(write))
      })
      .collect();
    rwlock.use_lock(false);
    for other in others {
      other.join().unwrap();
    }
    rwlock.at_the_end();
  });
}

/// Two writers and a reader, each blocking: the writers count themselves
/// among the writers waiting, the reader waits behind them; never two
/// inside but readers; every one of them gets the lock.
fn two_writers(mutation: Mutation) {
  model(Some(3), move || {
    let rwlock = RwLock::new(mutation);
    let others: Vec<_> = [true, true]
      .into_iter()
      .map(|write| {
        let rwlock = rwlock.clone();
        thread::spawn(move || rwlock.use_lock(write))
      })
      .collect();
    rwlock.use_lock(false);
    for other in others {
      other.join().unwrap();
    }
    rwlock.at_the_end();
  });
}

/// The main thread holds a read; a writer waits for it, its first `waits`
/// waits time out, and it gives up when it next finds the lock held, while
/// a reader waits behind the writer's count: the reader gets the lock.
fn writer_gives_up(mutation: Mutation, waits: u32) {
  model(Some(4), move || {
    let rwlock = RwLock::new(mutation);
    let mut mine = Stake::default();
    assert!(rwlock.take_read(&mut mine));
    let writer = {
      let rwlock = rwlock.clone();
      thread::spawn(move || {
        let mut stake = Stake::default();
        let locked = rwlock.lock(&mut stake, true, Blocked::GivesUp { waits });
        if locked == Locked::Took {
          rwlock.enter(true);
          rwlock.leave(true);
          rwlock.give_write(&mut stake);
        }
      })
    };
    let reader = {
      let rwlock = rwlock.clone();
      thread::spawn(move || rwlock.use_lock(false))
    };
    rwlock.give_read(&mut mine);
    writer.join().unwrap();
    reader.join().unwrap();
    rwlock.at_the_end();
  });
}

/// A thread takes the lock (`write` or a read) and ends holding it; the
/// main thread wants it the other way: the teardown gives it back and the
/// main thread gets it. A dead writer leaves the state marked ABANDONED
/// (a dead reader does not), until the next writer's release: the end's
/// reader still sees the mark, its writer takes it out.
fn holder_dies(mutation: Mutation, write: bool) {
  model(None, move || {
    let rwlock = RwLock::new(mutation);
    let holder = {
      let rwlock = rwlock.clone();
      thread::spawn(move || {
        let mut stake = Stake::default();
        assert_eq!(rwlock.lock(&mut stake, write, Blocked::Waits), Locked::Took);
        rwlock.enter(write);
        rwlock.leave(write);
        rwlock.die(&stake); // ends holding it
      })
    };
    rwlock.use_lock(!write);
    holder.join().unwrap();
    let state = rwlock.state.load(SeqCst);
    // (Given back: the mutation that keeps the share is left to strand the end.)
    if state & WRITER == 0 {
      let marked = state & ABANDONED != 0;
      assert_eq!(
        marked, write,
        "a dead writer's lock, and only that, is marked abandoned"
      );
    }
    rwlock.at_the_end();
  });
}

/// A writer's thread ends holding the lock (marked ABANDONED); the main
/// thread reads it, while another writer waits, counted among the writers
/// waiting, takes the marked lock once the read is gone, and its thread
/// ends holding it too: the mark stays (the end's reader sees it, its
/// writer takes it out).
fn marked_writer_dies_too(mutation: Mutation) {
  model(None, move || {
    let rwlock = RwLock::new(mutation);
    let mut first = Stake::default();
    assert!(rwlock.take_write(&mut first, false));
    rwlock.die(&first);
    let mut mine = Stake::default();
    assert!(rwlock.take_read(&mut mine));
    assert_ne!(rwlock.state.load(SeqCst) & ABANDONED, 0, "marked");
    let writer = {
      let rwlock = rwlock.clone();
      thread::spawn(move || {
        let mut stake = Stake::default();
        assert_eq!(rwlock.lock(&mut stake, true, Blocked::Waits), Locked::Took);
        rwlock.enter(true);
        rwlock.leave(true);
        rwlock.die(&stake); // ends holding the marked lock
      })
    };
    rwlock.give_read(&mut mine);
    writer.join().unwrap();
    assert_eq!(
      rwlock.state.load(SeqCst) & !ABANDONED,
      0,
      "given back, no waiting writer left counted"
    );
    assert_ne!(rwlock.state.load(SeqCst) & ABANDONED, 0, "still marked");
    rwlock.at_the_end();
  });
}

/// The main thread holds a read; a writer counts itself among the writers
/// waiting and its thread ends in the wait (or, the read gone, ends
/// holding the write lock), while a reader waits behind it: the teardown
/// takes its count (or its lock) back and the reader gets the lock.
fn waiting_writer_dies(mutation: Mutation) {
  model(Some(4), move || {
    let rwlock = RwLock::new(mutation);
    let mut mine = Stake::default();
    assert!(rwlock.take_read(&mut mine));
    let writer = {
      let rwlock = rwlock.clone();
      thread::spawn(move || {
        let mut stake = Stake::default();
        if rwlock.lock(&mut stake, true, Blocked::Dies) == Locked::Took {
          rwlock.enter(true);
          rwlock.leave(true);
          rwlock.die(&stake);
        }
      })
    };
    let reader = {
      let rwlock = rwlock.clone();
      thread::spawn(move || rwlock.use_lock(false))
    };
    rwlock.give_read(&mut mine);
    writer.join().unwrap();
    reader.join().unwrap();
    rwlock.at_the_end();
  });
}

/// A writer gives the lock back and its thread ends at the wake-up's call
/// (after the change of `state`, its stake 0); the main thread waits for a
/// read: the teardown wakes it all the same.
fn dies_mid_release(mutation: Mutation) {
  model(None, move || {
    let rwlock = RwLock::new(mutation);
    let holder = {
      let rwlock = rwlock.clone();
      thread::spawn(move || {
        let mut stake = Stake::default();
        assert_eq!(rwlock.lock(&mut stake, true, Blocked::Waits), Locked::Took);
        rwlock.enter(true);
        rwlock.leave(true);
        // giveWrite up to its look at `waiters`.
        let mine = WRITER | (stake.share & ABANDONED);
        rwlock.state.fetch_sub(mine, SeqCst);
        stake.share = stake.share.wrapping_sub(mine);
        rwlock.die(&stake);
      })
    };
    rwlock.use_lock(false);
    holder.join().unwrap();
    rwlock.at_the_end();
  });
}

#[test]
fn readers_and_a_writer_exclude_each_other_and_all_get_the_lock() {
  contention(Mutation::None);
}

#[test]
fn two_writers_and_a_reader_exclude_each_other_and_all_get_the_lock() {
  two_writers(Mutation::None);
}

#[test]
fn a_writer_that_gives_up_lets_the_readers_it_held_off_go() {
  writer_gives_up(Mutation::None, 0);
}

#[test]
fn a_writer_that_times_out_and_then_gives_up_lets_the_readers_it_held_off_go() {
  writer_gives_up(Mutation::None, 1);
}

#[test]
fn a_dead_readers_read_goes_back_to_the_writer() {
  holder_dies(Mutation::None, false);
}

#[test]
fn a_dead_writers_lock_goes_back_to_the_reader() {
  holder_dies(Mutation::None, true);
}

#[test]
fn a_writer_that_takes_a_dead_writers_lock_and_dies_too_leaves_it_marked() {
  marked_writer_dies_too(Mutation::None);
}

#[test]
fn a_writer_that_dies_waiting_lets_the_reader_go() {
  waiting_writer_dies(Mutation::None);
}

#[test]
fn a_writer_that_dies_mid_release_still_wakes_the_waiter() {
  dies_mid_release(Mutation::None);
}

/// The mutation a child run of this test binary models, by name.
const MUTATION_VAR: &str = "LOOM_RWLOCK_MUTATION";

/// Runs the model with the mutation named by [`MUTATION_VAR`]. Run only as
/// a child process of [`fails_with`].
#[test]
#[ignore = "run by the mutation tests, in a child process"]
fn mutated_model() {
  let name = std::env::var(MUTATION_VAR).expect("run by a mutation test");
  let mutation = [
    Mutation::None,
    Mutation::ReadReleaseWithoutWake,
    Mutation::WriteReleaseWithoutWake,
    Mutation::WithdrawWithoutWake,
    Mutation::WithdrawKeepsCount,
    Mutation::ReadWaitersFirst,
    Mutation::AnnounceLate,
    Mutation::WaitOnFreshValue,
    Mutation::WriteIgnoresReaders,
    Mutation::ReadIgnoresWriter,
    Mutation::TakeLeavesMark,
    Mutation::TakeKeepsCount,
    Mutation::DeadKeepsShare,
    Mutation::DeadReleaseWithoutWake,
    Mutation::DeadWakesOnlyIfHeld,
  ]
  .into_iter()
  .find(|m| format!("{m:?}") == name)
  .expect("a known mutation");
  match mutation {
    Mutation::WithdrawWithoutWake | Mutation::WithdrawKeepsCount => writer_gives_up(mutation, 0),
    Mutation::DeadKeepsShare | Mutation::TakeLeavesMark => holder_dies(mutation, true),
    Mutation::DeadReleaseWithoutWake => waiting_writer_dies(mutation),
    Mutation::DeadWakesOnlyIfHeld => dies_mid_release(mutation),
    _ => contention(mutation),
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
fn mutation_a_last_read_release_that_wakes_nobody_strands_the_writer() {
  fails_with(Mutation::ReadReleaseWithoutWake, "deadlock");
}

#[test]
fn mutation_a_write_release_that_wakes_nobody_strands_the_waiters() {
  fails_with(Mutation::WriteReleaseWithoutWake, "deadlock");
}

#[test]
fn mutation_a_writer_that_gives_up_waking_nobody_strands_the_reader() {
  fails_with(Mutation::WithdrawWithoutWake, "deadlock");
}

#[test]
fn mutation_a_writer_that_gives_up_still_counted_strands_the_reader() {
  fails_with(Mutation::WithdrawKeepsCount, "deadlock");
}

#[test]
fn mutation_reading_waiters_before_the_change_loses_a_wake_up() {
  fails_with(Mutation::ReadWaitersFirst, "deadlock");
}

#[test]
fn mutation_announcing_after_the_look_loses_a_wake_up() {
  fails_with(Mutation::AnnounceLate, "deadlock");
}

#[test]
fn mutation_waiting_on_a_fresh_value_loses_a_wake_up() {
  fails_with(Mutation::WaitOnFreshValue, "deadlock");
}

#[test]
fn mutation_a_write_taken_past_readers_breaks_mutual_exclusion() {
  fails_with(Mutation::WriteIgnoresReaders, "mutual exclusion broken");
}

#[test]
fn mutation_a_read_taken_past_the_writer_breaks_mutual_exclusion() {
  fails_with(Mutation::ReadIgnoresWriter, "mutual exclusion broken");
}

#[test]
fn mutation_a_writer_that_keeps_its_waiting_count_strands_the_readers() {
  fails_with(Mutation::TakeKeepsCount, "deadlock");
}

#[test]
fn mutation_a_teardown_that_keeps_the_share_strands_the_waiter() {
  fails_with(Mutation::DeadKeepsShare, "deadlock");
}

#[test]
fn mutation_a_teardown_that_wakes_nobody_strands_the_reader() {
  fails_with(Mutation::DeadReleaseWithoutWake, "deadlock");
}

#[test]
fn mutation_a_teardown_that_wakes_only_for_a_share_strands_the_waiter() {
  fails_with(Mutation::DeadWakesOnlyIfHeld, "deadlock");
}

#[test]
fn mutation_a_writer_that_leaves_the_dead_writers_mark_out_of_its_share_never_clears_it() {
  fails_with(Mutation::TakeLeavesMark, "the lock is not free at the end");
}
