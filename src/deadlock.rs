//! Deadlock detection over the table of who holds and who waits
//! (`crate::diag`): whether a take that is about to wait would close a
//! cycle of takes that can never end, and which.
//!
//! The model. A *wait* is a take that waits now for a primitive: a blocking
//! one stops its whole thread, so every hold of that thread waits with it;
//! an async one stops only its task, so only the holds taken in its own
//! async context (`ctx`: executeLocked and the like, around it) wait with
//! it: the thread's other tasks run on and may release what they hold.
//! A hold, by thread h, is *kept* when a stuck wait of h keeps it (h's
//! blocking wait, or an async wait of h with the hold in its context). A
//! wait is *stuck* when it cannot get what it asks for while the kept
//! holds stay: an AsyncLock's holder's hold is kept; a writer's: any
//! reader's or writer's hold is; a reader's: the writer's hold is, or,
//! with no writer, a waiting writer (which holds new readers off) is
//! stuck; a Semaphore's: the free permits and those of the holds not kept
//! are fewer than it asks for.
//!
//! The stuck waits are the greatest fixpoint: start with every wait stuck,
//! and take out any wait that is not, until none changes.
//! That is Coffman's reduction, with the holds of tasks that run on (not in
//! any stuck wait's keeping) as the resources that come back. A wait with
//! no blocker (a Latch, a Condition, a Barrier: nothing is held) is never
//! stuck: they are not found.
//!
//! A new wait closes a cycle when it is stuck and a chain of blockers leads
//! from it back to a hold it keeps. The chain is what the error names.

use std::collections::{HashMap, HashSet, VecDeque};

/// A primitive as its memory reads now.
#[derive(Debug, Clone, PartialEq)]
pub enum Prim {
  /// An AsyncLock: its holder's thread, if held.
  Lock { holder: Option<f64> },
  /// A Semaphore: its permits, those free now, and what each thread
  /// holds. Permits in neither are in flight: a take or a release between
  /// its step on the word and its stake (read at another moment), by a
  /// thread that runs.
  Permits {
    total: i32,
    free: i32,
    holders: Vec<(f64, i32)>,
  },
  /// An RwLock: its writer's thread, if a stake says so, and each reader's
  /// with its reads; and what its state word says: the reads, and whether
  /// a writer holds it. A state that says more than the stakes is a take
  /// or a release in flight, by a thread that runs.
  Rw {
    writer: Option<f64>,
    readers: Vec<(f64, i32)>,
    reads: i32,
    written: bool,
  },
}

/// A take that waits.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
  pub id: u64,
  pub thread: f64,
  /// The primitive's key (its word's address).
  pub word: usize,
  /// What it asks for: permits of a Semaphore; 1 (read) or 2 (write) of
  /// an RwLock; anything for an AsyncLock.
  pub what: i32,
  pub blocking: bool,
  /// For an async wait: the keys of the holds its context keeps.
  pub ctx: Vec<usize>,
}

/// One link of a cycle: the wait, and the thread holding what it waits
/// for (with the key of that hold) or the wait holding it off.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
  pub wait: u64,
  pub blocker: Blocker,
}

/// What a wait waits on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Blocker {
  /// Thread `thread` holds the primitive `word`: alone (`exclusive`: an
  /// AsyncLock, an RwLock's write lock) or as one of many (permits, reads).
  Hold {
    thread: f64,
    word: usize,
    exclusive: bool,
  },
  /// The wait `wait` (a writer waiting) holds it off.
  Wait(u64),
}

/// Whether wait `w` keeps the hold of `word` by its thread.
fn keeps(w: &Waiting, word: usize, exclusive: bool) -> bool {
  w.blocking || (exclusive && w.ctx.contains(&word))
}

/// What holds `w` off from what it asks of `prim`; empty if it could be
/// given now.
fn blockers(w: &Waiting, prim: &Prim, waits: &[Waiting]) -> Vec<Blocker> {
  let word = w.word;
  let hold = |thread: f64, exclusive: bool| Blocker::Hold {
    thread,
    word,
    exclusive,
  };
  match prim {
    Prim::Lock { holder } => holder.iter().map(|&t| hold(t, true)).collect(),
    Prim::Permits { free, holders, .. } => {
      if *free >= w.what {
        return Vec::new();
      }
      holders
        .iter()
        .filter(|h| h.1 > 0)
        .map(|h| hold(h.0, false))
        .collect()
    }
    Prim::Rw {
      writer, readers, ..
    } => {
      if let Some(t) = writer {
        return vec![hold(*t, true)];
      }
      if w.what == 2 {
        // A writer waits for every reader (its own reads included).
        return readers.iter().map(|r| hold(r.0, false)).collect();
      }
      // A reader waits only while writers wait (they hold new readers off).
      waits
        .iter()
        .filter(|v| v.word == word && v.what == 2 && v.id != w.id)
        .map(|v| Blocker::Wait(v.id))
        .collect()
    }
  }
}

/// The waits that hold `blocker`'s resource while stuck: the stuck waits
/// of its thread that keep it, or the waiting writer itself.
fn keepers<'a>(blocker: Blocker, waits: &'a [Waiting], stuck: &HashSet<u64>) -> Vec<&'a Waiting> {
  match blocker {
    Blocker::Hold {
      thread,
      word,
      exclusive,
    } => waits
      .iter()
      .filter(|v| stuck.contains(&v.id) && v.thread == thread && keeps(v, word, exclusive))
      .collect(),
    Blocker::Wait(id) => waits
      .iter()
      .filter(|v| v.id == id && stuck.contains(&v.id))
      .collect(),
  }
}

/// Whether `w` cannot get what it asks of `prim` while the waits in
/// `stuck` stay stuck: a lock's holder, any of a writer's readers, or a
/// reader's writer (holding, or waiting ahead of it) kept by a stuck wait;
/// or fewer permits than it asks for, counting the free ones and those of
/// holders that run on.
fn blocked(w: &Waiting, prim: &Prim, waits: &[Waiting], stuck: &HashSet<u64>) -> bool {
  let kept = |b: Blocker| !keepers(b, waits, stuck).is_empty();
  match prim {
    // A blocking wait for a lock its own thread holds has ended: it is on
    // its way out (a blocking take of a lock its thread holds throws, or
    // times out).
    Prim::Lock { holder } if w.blocking && *holder == Some(w.thread) => false,
    Prim::Permits {
      total,
      free,
      holders,
    } => {
      let held: i64 = holders.iter().map(|h| i64::from(h.1.max(0))).sum();
      let in_flight = (i64::from(*total) - i64::from(*free) - held).max(0);
      let back: i64 = holders
        .iter()
        .filter(|h| {
          h.1 > 0
            && !kept(Blocker::Hold {
              thread: h.0,
              word: w.word,
              exclusive: false,
            })
        })
        .map(|h| i64::from(h.1))
        .sum();
      i64::from(*free) + in_flight + back < i64::from(w.what)
    }
    Prim::Rw {
      writer,
      readers,
      reads,
      written,
    } => {
      let seen: i32 = readers.iter().map(|r| r.1).sum();
      // A take or a release in flight: its thread runs.
      if (*written && writer.is_none()) || (w.what == 2 && *reads > seen) {
        return false;
      }
      blockers(w, prim, waits).into_iter().any(kept)
    }
    Prim::Lock { .. } => blockers(w, prim, waits).into_iter().any(kept),
  }
}

/// The stuck waits (see the module docs).
pub fn stuck(prims: &HashMap<usize, Prim>, waits: &[Waiting]) -> HashSet<u64> {
  let mut stuck: HashSet<u64> = waits.iter().map(|w| w.id).collect();
  loop {
    let mut changed = false;
    for w in waits {
      if !stuck.contains(&w.id) {
        continue;
      }
      let still = prims
        .get(&w.word)
        .is_some_and(|prim| blocked(w, prim, waits, &stuck));
      if !still {
        stuck.remove(&w.id);
        changed = true;
      }
    }
    if !changed {
      return stuck;
    }
  }
}

/// If the wait `new` (in `waits`) closes a cycle: the links from it, round
/// to a hold it keeps.
pub fn cycle(prims: &HashMap<usize, Prim>, waits: &[Waiting], new: u64) -> Option<Vec<Link>> {
  let stuck = stuck(prims, waits);
  if !stuck.contains(&new) {
    return None;
  }
  // Through other threads first: a wait for permits that its own thread
  // holds some of is stuck also for the permits others keep, and those
  // are the story to tell; its own hold alone, only if there is none.
  path(prims, waits, &stuck, new, false).or_else(|| path(prims, waits, &stuck, new, true))
}

/// Breadth-first over stuck waits, from `new`: the first blocker that is a
/// hold `new` keeps (but not one of `new`'s own blockers, unless `direct`)
/// ends the cycle; the links that lead there.
fn path(
  prims: &HashMap<usize, Prim>,
  waits: &[Waiting],
  stuck: &HashSet<u64>,
  new: u64,
  direct: bool,
) -> Option<Vec<Link>> {
  let by_id: HashMap<u64, &Waiting> = waits.iter().map(|w| (w.id, w)).collect();
  let first = by_id[&new];
  let mut came_from: HashMap<u64, Link> = HashMap::new();
  let mut queue = VecDeque::from([new]);
  let mut seen = HashSet::from([new]);
  while let Some(id) = queue.pop_front() {
    let w = by_id[&id];
    let Some(prim) = prims.get(&w.word) else {
      continue;
    };
    for blocker in blockers(w, prim, waits) {
      if let Blocker::Hold {
        thread,
        word,
        exclusive,
      } = blocker
      {
        if thread == first.thread && keeps(first, word, exclusive) && (direct || id != new) {
          let mut links = vec![Link { wait: id, blocker }];
          let mut at = id;
          while at != new {
            let link = came_from[&at].clone();
            at = link.wait;
            links.push(link);
          }
          links.reverse();
          return Some(links);
        }
      }
      for next in keepers(blocker, waits, stuck) {
        if seen.insert(next.id) {
          came_from.insert(next.id, Link { wait: id, blocker });
          queue.push_back(next.id);
        }
      }
    }
  }
  None
}

#[cfg(test)]
mod tests {
  use super::*;

  fn lock(holder: Option<f64>) -> Prim {
    Prim::Lock { holder }
  }

  fn blocking(id: u64, thread: f64, word: usize) -> Waiting {
    Waiting {
      id,
      thread,
      word,
      what: 1,
      blocking: true,
      ctx: vec![],
    }
  }

  #[test]
  fn abba_between_two_blocked_threads_is_a_cycle_found_by_the_second_wait() {
    let prims = HashMap::from([(1, lock(Some(1.0))), (2, lock(Some(2.0)))]);
    let first = vec![blocking(10, 1.0, 2)];
    assert_eq!(
      cycle(&prims, &first, 10),
      None,
      "thread 2 runs on: it may release lock 2"
    );
    let both = vec![blocking(10, 1.0, 2), blocking(11, 2.0, 1)];
    let links = cycle(&prims, &both, 11).expect("the second wait closes it");
    assert_eq!(
      links,
      vec![
        Link {
          wait: 11,
          blocker: Blocker::Hold {
            thread: 1.0,
            word: 1,
            exclusive: true
          }
        },
        Link {
          wait: 10,
          blocker: Blocker::Hold {
            thread: 2.0,
            word: 2,
            exclusive: true
          }
        },
      ]
    );
  }

  #[test]
  fn an_async_wait_is_stuck_only_through_the_holds_of_its_own_context() {
    // Thread 0 (the main thread) holds lock 2 in one task and waits for
    // lock 1 in another; thread 1 holds lock 1 and waits for lock 2.
    let prims = HashMap::from([(1, lock(Some(1.0))), (2, lock(Some(0.0)))]);
    let other_task = Waiting {
      id: 1,
      thread: 0.0,
      word: 1,
      what: 1,
      blocking: false,
      ctx: vec![],
    };
    let waits = vec![other_task.clone(), blocking(2, 1.0, 2)];
    assert_eq!(
      cycle(&prims, &waits, 2),
      None,
      "the task holding lock 2 runs on"
    );
    let same_task = Waiting {
      ctx: vec![2],
      ..other_task
    };
    let waits = vec![same_task, blocking(2, 1.0, 2)];
    assert!(
      cycle(&prims, &waits, 2).is_some(),
      "the task that waits holds lock 2"
    );
  }

  #[test]
  fn a_semaphore_waits_for_all_its_holders_and_not_when_permits_are_free() {
    let sem = |free| Prim::Permits {
      total: 2 + free,
      free,
      holders: vec![(1.0, 1), (2.0, 1)],
    };
    let waits = vec![
      Waiting {
        id: 1,
        thread: 1.0,
        word: 9,
        what: 1,
        blocking: true,
        ctx: vec![],
      },
      Waiting {
        id: 2,
        thread: 2.0,
        word: 9,
        what: 1,
        blocking: true,
        ctx: vec![],
      },
      blocking(3, 3.0, 5),
    ];
    // Threads 1 and 2 each hold a permit and wait for another; thread 3
    // waits for lock 5, which thread 1 holds.
    let prims = HashMap::from([(9, sem(0)), (5, lock(Some(1.0)))]);
    assert!(
      cycle(&prims, &waits, 1).is_some(),
      "every permit is held by a thread that waits for one"
    );
    assert_eq!(stuck(&prims, &waits), HashSet::from([1, 2, 3]));
    let prims = HashMap::from([(9, sem(1)), (5, lock(Some(1.0)))]);
    assert_eq!(
      stuck(&prims, &waits),
      HashSet::new(),
      "a free permit: nobody is stuck"
    );
  }

  #[test]
  fn a_writer_waiting_for_a_reader_that_waits_for_what_the_writer_holds_is_a_cycle() {
    let prims = HashMap::from([
      (
        7,
        Prim::Rw {
          writer: None,
          readers: vec![(1.0, 1)],
          reads: 1,
          written: false,
        },
      ),
      (3, lock(Some(2.0))),
    ]);
    let waits = vec![
      blocking(1, 1.0, 3),
      Waiting {
        id: 2,
        thread: 2.0,
        word: 7,
        what: 2,
        blocking: true,
        ctx: vec![],
      },
    ];
    assert!(cycle(&prims, &waits, 2).is_some());
    // A reader held off by that waiting writer is stuck with it, but only
    // the two close the cycle.
    let mut more = waits.clone();
    more.push(Waiting {
      id: 3,
      thread: 4.0,
      word: 7,
      what: 1,
      blocking: true,
      ctx: vec![],
    });
    assert!(stuck(&prims, &more).contains(&3));
    assert_eq!(
      cycle(&prims, &more, 3),
      None,
      "thread 4 holds nothing anyone waits for"
    );
  }

  #[test]
  fn what_is_seen_half_done_or_held_by_another_task_is_never_stuck() {
    // A permit in neither the free count nor a stake: a take or release
    // in flight, by a thread that runs.
    let prims = HashMap::from([(
      9,
      Prim::Permits {
        total: 2,
        free: 0,
        holders: vec![(1.0, 1)],
      },
    )]);
    let waits = vec![Waiting {
      id: 1,
      thread: 1.0,
      word: 9,
      what: 1,
      blocking: true,
      ctx: vec![],
    }];
    assert_eq!(stuck(&prims, &waits), HashSet::new());
    // A writer's mark or reads in the state that no stake shows yet.
    for (reads, written) in [(1, false), (0, true)] {
      let prims = HashMap::from([(
        7,
        Prim::Rw {
          writer: None,
          readers: vec![],
          reads,
          written,
        },
      )]);
      let writer = Waiting {
        what: 2,
        ..blocking(1, 1.0, 7)
      };
      assert_eq!(stuck(&prims, &[writer]), HashSet::new());
    }
    // A blocking wait for a lock its own thread holds is on its way out.
    let prims = HashMap::from([(1, lock(Some(1.0)))]);
    assert_eq!(stuck(&prims, &[blocking(1, 1.0, 1)]), HashSet::new());
    // Permits held by the main thread, one task of which waits in a
    // context that runs under the semaphore: which task holds them is not
    // known, so the async wait keeps none of them.
    let prims = HashMap::from([
      (
        9,
        Prim::Permits {
          total: 2,
          free: 0,
          holders: vec![(0.0, 1), (1.0, 1)],
        },
      ),
      (5, lock(Some(1.0))),
    ]);
    let waits = vec![
      Waiting {
        id: 1,
        thread: 0.0,
        word: 5,
        what: 1,
        blocking: false,
        ctx: vec![9],
      },
      Waiting {
        what: 1,
        ..blocking(2, 1.0, 9)
      },
    ];
    assert_eq!(cycle(&prims, &waits, 2), None);
  }

  /// The reference: Coffman's reduction by simulation, for blocking
  /// threads over locks and semaphores: threads that can go (not waiting,
  /// or asking for what is free) finish and give back all they hold,
  /// until none can; those left are deadlocked.
  fn deadlocked_by_simulation(
    holds: &[Vec<(usize, i32)>],
    wants: &[Option<(usize, i32)>],
    totals: &[i32],
  ) -> HashSet<usize> {
    let mut free: Vec<i32> = totals.to_vec();
    for h in holds {
      for &(p, n) in h {
        free[p] -= n;
      }
    }
    let mut done = vec![false; holds.len()];
    loop {
      let next = (0..holds.len()).find(|&t| !done[t] && wants[t].is_none_or(|(p, n)| free[p] >= n));
      let Some(t) = next else { break };
      done[t] = true;
      for &(p, n) in &holds[t] {
        free[p] += n;
      }
    }
    (0..holds.len())
      .filter(|&t| !done[t] && wants[t].is_some())
      .collect()
  }

  #[test]
  fn stuck_agrees_with_the_reduction_on_every_small_state() {
    // 3 threads; primitive 0 and 1 locks (total 1), primitive 2 a
    // semaphore of 2. Each thread holds a subset and waits for at most
    // one primitive it can ask for; every consistent state is checked.
    let totals = [1, 1, 2];
    // Each thread: what it holds, and what it waits for.
    type Thread = (Vec<(usize, i32)>, Option<(usize, i32)>);
    let per_thread: Vec<Thread> = {
      let mut v = Vec::new();
      for mask in 0..8u32 {
        let holds: Vec<(usize, i32)> = (0..3)
          .filter(|p| mask & (1 << p) != 0)
          .map(|p| (p, 1))
          .collect();
        for want in [None, Some((0, 1)), Some((1, 1)), Some((2, 1)), Some((2, 2))] {
          v.push((holds.clone(), want));
        }
      }
      v
    };
    let mut checked = 0;
    for a in &per_thread {
      for b in &per_thread {
        for c in &per_thread {
          let threads = [a, b, c];
          let mut used = [0; 3];
          for t in threads {
            for &(p, n) in &t.0 {
              used[p] += n;
            }
          }
          if (0..3).any(|p| used[p] > totals[p]) {
            continue;
          }
          // A blocking thread does not wait for what it could take now.
          let free: Vec<i32> = (0..3).map(|p| totals[p] - used[p]).collect();
          if threads
            .iter()
            .any(|t| t.1.is_some_and(|(p, n)| free[p] >= n))
          {
            continue;
          }
          // Nor for a lock it holds itself (that take throws).
          if threads.iter().any(|t| {
            t.1
              .is_some_and(|(p, _)| p < 2 && t.0.iter().any(|h| h.0 == p))
          }) {
            continue;
          }
          let holds: Vec<Vec<(usize, i32)>> = threads.iter().map(|t| t.0.clone()).collect();
          let wants: Vec<Option<(usize, i32)>> = threads.iter().map(|t| t.1).collect();
          let expected = deadlocked_by_simulation(&holds, &wants, &totals);
          let holder_of = |p: usize| {
            (0..3)
              .find(|&t| holds[t].iter().any(|h| h.0 == p))
              .map(|t| t as f64)
          };
          let prims = HashMap::from([
            (0, lock(holder_of(0))),
            (1, lock(holder_of(1))),
            (
              2,
              Prim::Permits {
                total: totals[2],
                free: free[2],
                holders: (0..3)
                  .filter_map(|t| holds[t].iter().find(|h| h.0 == 2).map(|h| (t as f64, h.1)))
                  .collect(),
              },
            ),
          ]);
          let waits: Vec<Waiting> = (0..3)
            .filter_map(|t| {
              wants[t].map(|(p, n)| Waiting {
                id: t as u64,
                thread: t as f64,
                word: p,
                what: n,
                blocking: true,
                ctx: vec![],
              })
            })
            .collect();
          let found: HashSet<usize> = stuck(&prims, &waits)
            .into_iter()
            .map(|id| id as usize)
            .collect();
          assert_eq!(found, expected, "holds {holds:?} wants {wants:?}");
          for w in &waits {
            // A stuck wait of a thread in a cycle is found closing it, and
            // every link of the cycle is a real hold or wait.
            if let Some(links) = cycle(&prims, &waits, w.id) {
              assert!(expected.contains(&(w.id as usize)));
              for link in links {
                if let Blocker::Hold { thread, word, .. } = link.blocker {
                  assert!(holds[thread as usize].iter().any(|h| h.0 == word));
                }
              }
            }
          }
          checked += 1;
        }
      }
    }
    assert!(checked > 1000, "{checked} states");
  }
}
