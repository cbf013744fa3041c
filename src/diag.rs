//! Who holds what and who waits for what, process-wide: the table that a
//! snapshot (`query()`, lib/diagnostics.js) reads from any thread, however
//! many threads and copies of the package there are. One per core.
//!
//! Two kinds of rows:
//! - **Watched**: every live primitive instance of every thread (an env of
//!   each copy of the package), with where its words and its stake lie.
//!   Its env adds the row when it starts to watch the instance for its
//!   teardown (src/napi/held.rs) and takes it out before it lets go of the
//!   instance's buffers, so that the memory a row names is alive for as
//!   long as the row is here: a snapshot reads it under the table's lock.
//!   Who holds what is read from that memory (the words say it: an
//!   AsyncLock's owner, a stake's permits or share), never recorded on the
//!   take's path, which stays free of native calls.
//! - **Waits**: a take that has to wait says so before it blocks or parks,
//!   and again when it ends (lib/diagnostics.js): the slow path only. With
//!   both flags off (the usual case) it writes the wait into a slot of its
//!   thread's **pages** ([`Diag::add_page`]): shared memory the table reads
//!   when it looks (a snapshot, a check for a cycle), so that a wait costs
//!   its thread a few stores and no native call. With a flag on, it is a
//!   call ([`Diag::wait`]), which can check it and answer.
//!
//! A page is [`PAGE_SLOTS`] slots of [`SLOT_INTS`] Int32s. Slot 0 is the
//! header: its first Int32 is the table's flags, which the table writes
//! into every page (the thread reads them before each wait). Each other
//! slot is free (its first Int32, the generation, 0) or holds a wait: Int32
//! 1 its info (class in the low 8 bits, 256 blocking, 1024 timed), 2 what
//! it asked for, and from Int32 4 three doubles: its word's address, its
//! buffer's address, and when it started (ms since the Unix epoch). The
//! thread writes the fields of a free slot, then its generation (never the
//! same one twice in a row), and ends the wait by storing 0, all plain
//! stores (lib/tracking.js: an Atomics.store costs a call). The table
//! reads the generation, the fields, then the generation again, and takes
//! the wait only if both reads agree (a seqlock's reader): on x64, whose
//! stores reach memory in order, a wait that starts or ends as it looks is
//! seen whole or not at all; on a weakly ordered CPU, a wait that starts at
//! that very moment may be seen with the fields of the slot's wait before.
//! Nothing here depends on them being right: the addresses are only
//! compared, never read through.
//!
//! The table knows nothing of what the ints mean: the JavaScript side,
//! which writes the words, also reads them (by `label`, its class).

use std::collections::HashMap;
use std::sync::atomic::{fence, AtomicI32, AtomicU64, Ordering};

use crate::deadlock::{self, Blocker, Prim, Waiting};
use crate::robust;

/// How many Int32s a row reads, at most, at its word and at its stake.
pub const MAX_INTS: usize = 4;

/// One watched instance (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Watched {
  /// Its thread's worker_threads `threadId`.
  pub thread: f64,
  /// Its class, as the JavaScript side numbers them.
  pub label: u32,
  /// The name given at its construction, if any.
  pub name: Option<Box<str>>,
  /// The address of its primitive's first Int32 (the registry key), and
  /// how many Int32s from there are the primitive's (up to [`MAX_INTS`]).
  pub word: usize,
  pub word_ints: usize,
  /// The address of its stake's first Int32 and how many it has (up to
  /// [`MAX_INTS`]); 0 and 0 for an instance without one (AsyncLock).
  pub cell: usize,
  pub cell_ints: usize,
  /// The address the word's buffer starts at.
  pub base: usize,
}

/// A take that waits.
#[derive(Debug, Clone, PartialEq)]
pub struct Wait {
  /// Its thread's worker_threads `threadId`.
  pub thread: f64,
  /// Its class, as in [`Watched::label`].
  pub label: u32,
  /// The address of the primitive's first Int32, and of its buffer.
  pub word: usize,
  pub base: usize,
  /// What it asked for (the class's encoding: permits, read or write…).
  pub what: i32,
  /// A blocking take (the thread sleeps), or an async one (a promise).
  pub blocking: bool,
  /// When it started to wait, in ms since the Unix epoch.
  pub since: f64,
  /// For an async wait: the keys of the holds its async context keeps
  /// (see `crate::deadlock`); empty for a blocking one, which keeps all
  /// of its thread's.
  pub ctx: Vec<usize>,
  /// A take that must wait whatever it closes: a Condition's re-take of
  /// its lock, which returns only holding it. With detection on, it is
  /// made even when it closes a cycle, and the cycle is answered all the
  /// same (see [`Closed`]).
  pub must_wait: bool,
  /// A take with a timeout: it ends by itself, so no wait of a cycle it is
  /// in is failed (each is made, and the cycle answered, as for
  /// `must_wait`); but it is in cycles like any other wait (its thread
  /// may take it again).
  pub timed: bool,
}

/// The cycle a wait closes, with detection on (see [`Diag::wait`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Closed {
  pub links: Vec<CycleLink>,
  /// The wait's id if it was made all the same (a [`Wait::must_wait`],
  /// or a cycle with a [`Wait::timed`] wait in it).
  pub made: Option<u64>,
}

/// A watched row as a snapshot saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenWatched {
  pub row: Watched,
  /// The row's buffer, numbered by the table while any row names it.
  pub buffer: u32,
  /// The Int32s at its word and at its stake, as read.
  pub words: Vec<i32>,
  pub cells: Vec<i32>,
}

/// A wait as a snapshot saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenWait {
  pub id: u64,
  pub wait: Wait,
  /// Its buffer's number (as [`SeenWatched::buffer`]), if a row names it.
  pub buffer: Option<u32>,
}

/// What a snapshot returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
  pub watched: Vec<SeenWatched>,
  pub waits: Vec<SeenWait>,
}

/// The table (see the module docs).
#[derive(Default)]
pub struct Diag {
  state: parking_lot::Mutex<State>,
  /// Tests only: what else happens in each gap between two looks at a
  /// cycle ([`Diag::wait`]), the table's lock let go of.
  #[cfg(test)]
  in_gap: Option<Box<InGap>>,
}

/// See [`Diag::in_gap`].
#[cfg(test)]
type InGap = dyn Fn(&Diag) + Send + Sync;

#[derive(Default)]
struct State {
  /// By env and the address of what the instance is watched by (its word
  /// for an AsyncLock, its stake's first Int32 otherwise).
  watched: HashMap<(u64, usize), Watched>,
  /// Waits in progress, by id, with their env (those made by a call:
  /// [`Diag::wait`]; the pages hold the others).
  waits: HashMap<u64, (u64, Wait)>,
  /// Every env's pages, in the order added.
  pages: Vec<Page>,
  next_page: u64,
  /// Buffers named by watched rows, by base address: their number, and
  /// how many rows name them.
  buffers: HashMap<usize, (u32, usize)>,
  next_env: u64,
  next_wait: u64,
  next_buffer: u32,
  /// Deadlock detection ([`DETECT`]) and lock-order checks ([`ORDER`]).
  flags: u32,
  /// Where each thread last took each primitive, by thread and key, while
  /// either is on.
  stacks: HashMap<(u64, usize), Box<str>>,
  /// Pairs of primitives (by key) seen held at once, in the order taken,
  /// with a thread that did and both stacks; and the pairs warned of.
  order: HashMap<(usize, usize), Taken>,
  warned: std::collections::HashSet<(usize, usize)>,
  /// Set once rows may name memory that was freed (an env's teardown
  /// failed to take its rows out: [`Diag::blind`]): from then on, no
  /// memory is read, and every primitive reads as free.
  blind: bool,
}

/// A page of waits a thread writes itself (see the module docs).
struct Page {
  env: u64,
  /// Its thread's worker_threads `threadId`.
  thread: f64,
  /// The address of its first Int32.
  at: usize,
  /// Its number (the table's count of pages when it was added), for the
  /// ids of its waits.
  number: u64,
}

impl Page {
  /// Writes `flags` into the page's header (see the module docs).
  ///
  /// # Safety
  /// The page's memory is live (as [`Diag::add_page`] requires).
  unsafe fn write_flags(&self, flags: u32) {
    // SAFETY: live, as the caller promises; 4-aligned (8, add_page's).
    let header = unsafe { &*(self.at as *const AtomicI32) };
    header.store(flags as i32, Ordering::SeqCst);
  }
}

/// Slots per page, and Int32s per slot (see the module docs).
pub const PAGE_SLOTS: usize = 64;
pub const SLOT_INTS: usize = 16;

/// The ids of waits read from pages have this bit (those of calls count
/// up from 1): the page's number (26 bits), the slot (6) and the
/// generation (31) below it.
const PAGE_WAIT: u64 = 1 << 63;

/// [`Diag::flags`]: a wait that would close a cycle fails.
pub const DETECT: u32 = 1;

/// How many times, and how far apart, a wait that closes a cycle sees it
/// before it fails ([`Diag::wait`]).
const CONFIRMATIONS: usize = 3;
const CONFIRM_GAP: std::time::Duration = std::time::Duration::from_millis(2);
/// [`Diag::flags`]: taking two primitives in the inverse order of one
/// seen before is reported.
pub const ORDER: u32 = 2;

/// Two primitives taken in an order: by which thread, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Taken {
  pub thread: f64,
  /// The first's key and where it was taken (if known), then the second's.
  pub first: (usize, Option<Box<str>>),
  pub second: (usize, Option<Box<str>>),
}

/// What a primitive is, for a report: its class, buffer number, byte
/// offset and name.
#[derive(Debug, Clone, PartialEq)]
pub struct Named {
  pub label: u32,
  pub buffer: u32,
  pub offset: usize,
  pub name: Option<Box<str>>,
}

/// One link of a cycle, for the error: the wait, what it waits for, and
/// the thread that holds it (with where it took it) or the writer that
/// waits ahead of it.
#[derive(Debug, Clone, PartialEq)]
pub struct CycleLink {
  pub thread: f64,
  pub blocking: bool,
  pub what: i32,
  pub waits_for: Named,
  pub held_by: Option<f64>,
  pub stack: Option<Box<str>>,
  pub behind: Option<f64>,
}

/// An inverse order, for the warning: the pair as taken now and as taken
/// before.
#[derive(Debug, Clone, PartialEq)]
pub struct Inversion {
  pub now: Taken,
  pub before: Taken,
  pub names: [Named; 2],
}

impl Diag {
  pub fn new() -> Self {
    Self::default()
  }

  /// A number for a new env: the key of its rows.
  pub fn new_env(&self) -> u64 {
    let mut state = self.state.lock();
    state.next_env += 1;
    state.next_env
  }

  /// Adds a page of `env`, whose thread is `thread`, at `at` (see the
  /// module docs), and writes the flags into it.
  ///
  /// # Safety
  /// `PAGE_SLOTS * SLOT_INTS` Int32s from `at`, 8-aligned, are live until
  /// `env` is forgotten ([`forget_env`](Self::forget_env)).
  pub unsafe fn add_page(&self, env: u64, thread: f64, at: usize) {
    let mut state = self.state.lock();
    state.next_page += 1;
    let number = state.next_page;
    let page = Page {
      env,
      thread,
      at,
      number,
    };
    if !state.blind {
      // SAFETY: live, as the caller promises.
      unsafe { page.write_flags(state.flags) };
    }
    state.pages.push(page);
  }

  /// Adds (or replaces) `env`'s row for the instance watched at `at`.
  ///
  /// # Safety
  /// `row.word_ints` Int32s from `row.word` and `row.cell_ints` from
  /// `row.cell` are live, 4-aligned memory until the row leaves the table
  /// ([`unwatch`](Self::unwatch), [`forget_env`](Self::forget_env)).
  pub unsafe fn watch(&self, env: u64, at: usize, mut row: Watched) {
    row.word_ints = row.word_ints.min(MAX_INTS);
    row.cell_ints = if row.cell == 0 {
      0
    } else {
      row.cell_ints.min(MAX_INTS)
    };
    let mut state = self.state.lock();
    state.hold(row.base);
    if let Some(old) = state.watched.insert((env, at), row) {
      state.let_go(old.base);
    }
  }

  /// `env`'s row for the instance watched at `at` leaves the table.
  pub fn unwatch(&self, env: u64, at: usize) {
    let mut state = self.state.lock();
    if let Some(old) = state.watched.remove(&(env, at)) {
      state.let_go(old.base);
      state.forget_word(old.word);
    }
  }

  /// `env` has ended: its rows and its waits leave the table.
  pub fn forget_env(&self, env: u64) {
    let mut state = self.state.lock();
    let gone: Vec<(u64, usize)> = state
      .watched
      .keys()
      .filter(|k| k.0 == env)
      .copied()
      .collect();
    for key in gone {
      if let Some(old) = state.watched.remove(&key) {
        state.let_go(old.base);
        state.forget_word(old.word);
      }
    }
    state.waits.retain(|_, (of, _)| *of != env);
    state.pages.retain(|page| page.env != env);
  }

  /// A take of `env` starts to wait: its id, for [`wait_end`](Self::wait_end);
  /// or, with detection on, the cycle it would close (and it is not in the
  /// table then, unless it must wait or the cycle has a timed wait).
  pub fn wait(&self, env: u64, wait: Wait) -> Result<u64, Closed> {
    let mut state = self.state.lock();
    state.next_wait += 1;
    let id = state.next_wait;
    if wait.blocking {
      // A thread is in one blocking wait at most: one of its registered
      // before is over (its end was lost: out of stack, say), and would
      // otherwise look stuck for good.
      let thread = wait.thread;
      state
        .waits
        .retain(|_, (_, w)| !(w.blocking && w.thread == thread));
    }
    let must_wait = wait.must_wait || wait.timed;
    state.waits.insert(id, (env, wait));
    if state.flags & DETECT == 0 {
      return Ok(id);
    }
    // A cycle is reported only if it is still there, the same waits, at
    // each of CONFIRMATIONS looks CONFIRM_GAP apart (the lock let go of in
    // between): a wait whose thread was just woken and has not ended it,
    // or a take or release seen half done, lasts far less.
    // (What is reported is the last look's: a wait read at the moment it
    // started may read with its slot's wait before, see the module docs.)
    let mut last: Option<(Vec<u64>, Vec<CycleLink>, bool)> = None;
    for look in 0..CONFIRMATIONS {
      let Some((ids, links, timed)) = state.cycle(id) else {
        return Ok(id);
      };
      if last.as_ref().is_some_and(|(seen, _, _)| *seen != ids) {
        return Ok(id);
      }
      last = Some((ids, links, timed));
      if look + 1 < CONFIRMATIONS {
        parking_lot::MutexGuard::unlocked(&mut state, || self.gap());
        if !state.waits.contains_key(&id) {
          return Ok(id); // (its env ended meanwhile)
        }
      }
    }
    let (_, links, timed) = last.unwrap_or_default();
    // A take with a timeout in the cycle ends it by itself (and is how a
    // program backs off): no wait of it fails, each waits on.
    if must_wait || timed {
      return Err(Closed {
        links,
        made: Some(id),
      });
    }
    state.waits.remove(&id);
    Err(Closed { links, made: None })
  }

  /// A gap between two looks at a cycle ([`wait`](Self::wait)), the
  /// table's lock let go of.
  fn gap(&self) {
    #[cfg(test)]
    if let Some(in_gap) = &self.in_gap {
      in_gap(self);
    }
    std::thread::sleep(CONFIRM_GAP);
  }

  /// The flags ([`DETECT`], [`ORDER`]) after setting them to `to`, if
  /// given.
  pub fn flags(&self, to: Option<u32>) -> u32 {
    let mut state = self.state.lock();
    if let Some(to) = to {
      state.flags = to & (DETECT | ORDER);
      if state.flags == 0 {
        state.stacks.clear();
      }
      state.write_flags(to & (DETECT | ORDER));
    }
    state.flags
  }

  /// Thread `thread` (of `env`) has taken the primitive at `word`, at
  /// `stack`: kept for the reports, while either flag is on; and with
  /// [`ORDER`] on, each primitive it holds besides makes a pair with it,
  /// or only those of `within`, if given: the holds of the async context
  /// the take was made in (another task of the thread holds the others).
  /// The pairs seen before in the inverse order, the first time each is.
  pub fn took(
    &self,
    thread: f64,
    word: usize,
    stack: Option<Box<str>>,
    within: Option<&[usize]>,
  ) -> Vec<Inversion> {
    let mut state = self.state.lock();
    if state.flags == 0 {
      return Vec::new();
    }
    let key = (thread.to_bits(), word);
    match stack {
      Some(stack) => state.stacks.insert(key, stack),
      None => state.stacks.remove(&key),
    };
    if state.flags & ORDER == 0 {
      return Vec::new();
    }
    let held: Vec<usize> = state
      .held_by(thread)
      .into_iter()
      .filter(|&k| k != word && within.is_none_or(|keys| keys.contains(&k)))
      .collect();
    let mut found = Vec::new();
    for first in held {
      let taken = Taken {
        thread,
        first: (first, state.stacks.get(&(thread.to_bits(), first)).cloned()),
        second: (word, state.stacks.get(&key).cloned()),
      };
      state
        .order
        .entry((first, word))
        .or_insert_with(|| taken.clone());
      if let Some(before) = state.order.get(&(word, first)).cloned() {
        let pair = (first.min(word), first.max(word));
        if state.warned.insert(pair) {
          let names = [state.named(first), state.named(word)];
          found.push(Inversion {
            now: taken,
            before,
            names,
          });
        }
      }
    }
    found
  }

  /// The wait `id` has ended (nothing if it is not in the table).
  pub fn wait_end(&self, id: u64) {
    self.state.lock().waits.remove(&id);
  }

  /// Rows may name memory that is freed (an env ended, and its rows
  /// could not be taken out): the table never reads memory again.
  pub fn blind(&self) {
    self.state.lock().blind = true;
  }

  /// Every row, with what its memory holds now, and every wait.
  pub fn snapshot(&self) -> Snapshot {
    let state = self.state.lock();
    let read = |at: usize, n: usize| -> Vec<i32> {
      if state.blind {
        return vec![0; n];
      }
      (0..n)
        .map(|i| {
          // SAFETY: `watch`'s contract: live, aligned Int32s for as long
          // as the row is in the table, which it is while the lock is held.
          let int = unsafe { &*((at + 4 * i) as *const AtomicI32) };
          int.load(Ordering::SeqCst)
        })
        .collect()
    };
    let mut watched: Vec<SeenWatched> = state
      .watched
      .values()
      .map(|row| SeenWatched {
        buffer: state.buffers.get(&row.base).map_or(0, |b| b.0),
        words: read(row.word, row.word_ints),
        cells: read(row.cell, row.cell_ints),
        row: row.clone(),
      })
      .collect();
    watched.sort_by(|a, b| {
      (a.buffer, a.row.word, a.row.thread.to_bits()).cmp(&(
        b.buffer,
        b.row.word,
        b.row.thread.to_bits(),
      ))
    });
    let mut waits: Vec<SeenWait> = state
      .all_waits()
      .into_iter()
      .map(|(id, wait)| SeenWait {
        id,
        buffer: state.buffers.get(&wait.base).map(|b| b.0),
        wait,
      })
      .collect();
    waits.sort_by(|a, b| a.wait.since.total_cmp(&b.wait.since).then(a.id.cmp(&b.id)));
    Snapshot { watched, waits }
  }

  /// How many rows and waits the table has (for tests).
  pub fn len(&self) -> (usize, usize) {
    let state = self.state.lock();
    (state.watched.len(), state.all_waits().len())
  }
}

impl State {
  /// Once no row names `word`, what is kept of it goes (its address may
  /// be another primitive's next): where it was taken, the orders it was
  /// seen in and the pairs warned of.
  fn forget_word(&mut self, word: usize) {
    if self.watched.values().any(|row| row.word == word) {
      return;
    }
    self.stacks.retain(|key, _| key.1 != word);
    self
      .order
      .retain(|pair, _| pair.0 != word && pair.1 != word);
    self.warned.retain(|pair| pair.0 != word && pair.1 != word);
  }

  /// The primitives by key, as their rows' memory reads now, for the
  /// detector; the class numbers (`label`) and layouts are lib/core.js
  /// kLabel's: 1 an AsyncLock (the word names its holder, src/robust.rs),
  /// 2 and 8 a Semaphore (its first Int32 the free permits; a stake's
  /// first the permits its instance holds), 3 an RwLock (a stake's first
  /// its share: reads in the low 20 bits, WRITER 1 << 30).
  fn prims(&self) -> HashMap<usize, Prim> {
    const WRITER: i32 = 1 << 30;
    const READERS: i32 = (1 << 20) - 1;
    let mut prims: HashMap<usize, Prim> = HashMap::new();
    if self.blind {
      return prims;
    }
    for row in self.watched.values() {
      // SAFETY: `watch`'s contract: live, aligned Int32s while the row is
      // in the table (the caller holds the lock).
      let int = |at: usize| unsafe { &*(at as *const AtomicI32) }.load(Ordering::SeqCst);
      match row.label {
        1 => {
          let owner = robust::owner_of(int(row.word));
          prims.entry(row.word).or_insert(Prim::Lock {
            holder: (owner != 0).then(|| f64::from(owner - 1)),
          });
        }
        // (Not async-mutex's Semaphore, 8, nor SignalSemaphore, 9: anyone
        // may release those, so a wait on them is never known stuck.)
        2 if row.cell_ints > 0 && row.word_ints >= 3 => {
          let entry = prims.entry(row.word).or_insert(Prim::Permits {
            total: int(row.word + 8),
            free: int(row.word),
            holders: Vec::new(),
          });
          if let Prim::Permits { holders, .. } = entry {
            let held = int(row.cell);
            if held > 0 {
              holders.push((row.thread, held));
            }
          }
        }
        3 if row.cell_ints > 0 => {
          let state = int(row.word);
          let entry = prims.entry(row.word).or_insert(Prim::Rw {
            writer: None,
            readers: Vec::new(),
            reads: state & READERS,
            written: state & WRITER != 0,
          });
          if let Prim::Rw {
            writer, readers, ..
          } = entry
          {
            let share = int(row.cell);
            if share & WRITER != 0 {
              *writer = Some(row.thread);
            }
            let reads = share & READERS;
            if reads != 0 {
              match readers.iter_mut().find(|r| r.0 == row.thread) {
                Some(r) => r.1 += reads,
                None => readers.push((row.thread, reads)),
              }
            }
          }
        }
        _ => {}
      }
    }
    prims
  }

  /// The keys of what thread `thread` holds now (from memory).
  fn held_by(&self, thread: f64) -> Vec<usize> {
    let mut held: Vec<usize> = Vec::new();
    for (&word, prim) in &self.prims() {
      let holds = match prim {
        Prim::Lock { holder } => *holder == Some(thread),
        Prim::Permits { holders, .. } => holders.iter().any(|h| h.0 == thread),
        Prim::Rw {
          writer, readers, ..
        } => *writer == Some(thread) || readers.iter().any(|r| r.0 == thread),
      };
      if holds {
        held.push(word);
      }
    }
    held.sort_unstable();
    held
  }

  /// What names the primitive at `word`, from a row over it.
  fn named(&self, word: usize) -> Named {
    let rows = || self.watched.values().filter(|r| r.word == word);
    let row = rows().next();
    Named {
      label: row.map_or(0, |r| r.label),
      buffer: row
        .and_then(|r| self.buffers.get(&r.base))
        .map_or(0, |b| b.0),
      offset: row.map_or(0, |r| word - r.base),
      name: rows().find_map(|r| r.name.clone()),
    }
  }

  /// The cycle the wait `id` closes, if it does (`crate::deadlock`): the
  /// ids of its waits, and its links.
  /// Also whether any of them has a timeout ([`Wait::timed`]).
  fn cycle(&self, id: u64) -> Option<(Vec<u64>, Vec<CycleLink>, bool)> {
    // In the same order at every look (by id): which of several paths the
    // search returns depends on it, and the looks must agree.
    let mut listed = self.all_waits();
    listed.sort_unstable_by_key(|(id, _)| *id);
    let waits: Vec<Waiting> = listed
      .iter()
      .map(|(id, w)| Waiting {
        id: *id,
        thread: w.thread,
        word: w.word,
        what: w.what,
        blocking: w.blocking,
        ctx: w.ctx.clone(),
      })
      .collect();
    let all: HashMap<u64, &Wait> = listed.iter().map(|(id, w)| (*id, w)).collect();
    let links = deadlock::cycle(&self.prims(), &waits, id)?;
    let ids: Vec<u64> = links.iter().map(|link| link.wait).collect();
    let timed = ids.iter().any(|i| all.get(i).is_some_and(|w| w.timed));
    let links = links
      .into_iter()
      .filter_map(|link| {
        let wait = all.get(&link.wait)?;
        let (held_by, behind, stack) = match link.blocker {
          Blocker::Hold { thread, word, .. } => (
            Some(thread),
            None,
            self.stacks.get(&(thread.to_bits(), word)).cloned(),
          ),
          Blocker::Wait(other) => (None, all.get(&other).map(|w| w.thread), None),
        };
        Some(CycleLink {
          thread: wait.thread,
          blocking: wait.blocking,
          what: wait.what,
          waits_for: self.named(wait.word),
          held_by,
          stack,
          behind,
        })
      })
      .collect();
    Some((ids, links, timed))
  }

  /// Every wait in progress: those made by a call, and those the pages
  /// hold now (none once blind), by id.
  fn all_waits(&self) -> Vec<(u64, Wait)> {
    let mut all: Vec<(u64, Wait)> = self
      .waits
      .iter()
      .map(|(&id, (_, w))| (id, w.clone()))
      .collect();
    if self.blind {
      return all;
    }
    for page in &self.pages {
      for slot in 1..PAGE_SLOTS {
        // SAFETY: `add_page`'s contract: the page is live while it is in
        // the table, and the caller holds the lock.
        if let Some((generation, wait)) = unsafe { read_slot(page, slot) } {
          let id = PAGE_WAIT
            | (page.number & ((1 << 26) - 1)) << 37
            | (slot as u64) << 31
            | u64::from(generation);
          all.push((id, wait));
        }
      }
    }
    all
  }

  /// Writes `flags` into every page's header (see the module docs).
  fn write_flags(&self, flags: u32) {
    if self.blind {
      return;
    }
    for page in &self.pages {
      // SAFETY: `add_page`'s contract: live while in the table (the
      // caller holds the lock).
      unsafe { page.write_flags(flags) };
    }
  }

  fn hold(&mut self, base: usize) {
    if let Some(buffer) = self.buffers.get_mut(&base) {
      buffer.1 += 1;
      return;
    }
    self.next_buffer += 1;
    let number = self.next_buffer;
    self.buffers.insert(base, (number, 1));
  }

  fn let_go(&mut self, base: usize) {
    if let Some(buffer) = self.buffers.get_mut(&base) {
      buffer.1 -= 1;
      if buffer.1 == 0 {
        self.buffers.remove(&base);
      }
    }
  }
}

/// The wait in slot `slot` of `page`, with its generation, if it holds
/// one that stayed the same while read (see the module docs).
///
/// # Safety
/// `page`'s memory is live (as [`Diag::add_page`] requires).
unsafe fn read_slot(page: &Page, slot: usize) -> Option<(u32, Wait)> {
  let at = page.at + slot * SLOT_INTS * 4;
  // SAFETY: within the page (slot < PAGE_SLOTS), live as the caller
  // promises; 4-aligned, and 8 at the doubles (the page is 8-aligned, a
  // slot 64 bytes).
  let int = |i: usize| unsafe { &*((at + 4 * i) as *const AtomicI32) };
  let double = |i: usize| {
    // SAFETY: as above.
    let bits = unsafe { &*((at + 4 * i) as *const AtomicU64) };
    f64::from_bits(bits.load(Ordering::Relaxed))
  };
  let generation = int(0).load(Ordering::Acquire);
  if generation <= 0 {
    return None;
  }
  let info = int(1).load(Ordering::Relaxed);
  let what = int(2).load(Ordering::Relaxed);
  let (word, base, since) = (double(4), double(6), double(8));
  fence(Ordering::Acquire);
  if int(0).load(Ordering::Relaxed) != generation {
    return None; // (it ended, or another started, as it was read)
  }
  let address = |x: f64| {
    ((0.0..9_007_199_254_740_992.0).contains(&x) && x.fract() == 0.0).then_some(x as usize)
  };
  let (word, base) = (address(word)?, address(base)?);
  if base > word {
    return None;
  }
  Some((
    generation as u32,
    Wait {
      thread: page.thread,
      label: (info & 0xff) as u32,
      word,
      base,
      what,
      blocking: info & 0x100 != 0,
      since,
      ctx: Vec::new(),
      must_wait: false,
      timed: info & 0x400 != 0,
    },
  ))
}

#[cfg(test)]
mod tests {
  use super::*;

  fn row(thread: f64, ints: &[AtomicI32], base: usize) -> Watched {
    Watched {
      thread,
      label: 1,
      name: Some("a".into()),
      word: ints.as_ptr() as usize,
      word_ints: ints.len(),
      cell: 0,
      cell_ints: 3,
      base,
    }
  }

  #[test]
  fn a_snapshot_reads_the_words_of_each_watched_row_as_they_are_now() {
    let diag = Diag::new();
    let ints = [AtomicI32::new(6), AtomicI32::new(0)];
    let env = diag.new_env();
    // SAFETY: `ints` outlives the table's use of it (unwatched below).
    unsafe { diag.watch(env, ints.as_ptr() as usize, row(2.0, &ints, 100)) };
    ints[1].store(3, Ordering::SeqCst);
    let seen = diag.snapshot();
    assert_eq!(seen.watched.len(), 1);
    assert_eq!(seen.watched[0].words, vec![6, 3]);
    assert_eq!(
      seen.watched[0].cells,
      Vec::<i32>::new(),
      "no stake: nothing read there"
    );
    diag.unwatch(env, ints.as_ptr() as usize);
    assert_eq!(diag.len(), (0, 0));
  }

  /// A blocking wait of `thread` on the word at `word` (buffer at `base`).
  fn waiting(thread: f64, word: usize, base: usize) -> Wait {
    Wait {
      thread,
      label: 1,
      word,
      base,
      what: 1,
      blocking: true,
      since: 5.0,
      ctx: vec![],
      must_wait: false,
      timed: false,
    }
  }

  #[test]
  fn buffers_are_numbered_while_a_row_names_them_and_waits_find_their_number() {
    let diag = Diag::new();
    let ints = [AtomicI32::new(0)];
    let (a, b) = (diag.new_env(), diag.new_env());
    let at = ints.as_ptr() as usize;
    // SAFETY: as above.
    unsafe { diag.watch(a, at, row(0.0, &ints, 100)) };
    // SAFETY: as above.
    unsafe { diag.watch(b, at, row(1.0, &ints, 100)) };
    let id = diag.wait(b, waiting(1.0, at, 100)).unwrap();
    let other = diag
      .wait(
        b,
        Wait {
          blocking: false,
          ..waiting(1.0, 8, 200)
        },
      )
      .unwrap();
    let seen = diag.snapshot();
    assert_eq!(
      seen.watched[0].buffer, seen.watched[1].buffer,
      "one buffer, one number"
    );
    assert_eq!(
      seen.waits.iter().map(|w| w.id).collect::<Vec<_>>(),
      vec![id, other]
    );
    assert_eq!(seen.waits[0].buffer, Some(seen.watched[0].buffer));
    assert_eq!(seen.waits[1].buffer, None, "no row names that buffer");
    diag.wait_end(id);
    diag.unwatch(a, at);
    assert_eq!(diag.snapshot().waits.len(), 1);
    assert_eq!(diag.snapshot().watched.len(), 1, "b's row stays");
  }

  #[test]
  fn an_ended_env_takes_its_rows_and_its_waits_with_it() {
    let diag = Diag::new();
    let ints = [AtomicI32::new(0)];
    let (a, b) = (diag.new_env(), diag.new_env());
    let at = ints.as_ptr() as usize;
    // SAFETY: as above.
    unsafe { diag.watch(a, at, row(0.0, &ints, 100)) };
    // SAFETY: as above.
    unsafe { diag.watch(b, at, row(1.0, &ints, 100)) };
    diag.wait(a, waiting(0.0, at, 100)).unwrap();
    let kept = diag.wait(b, waiting(1.0, at, 100)).unwrap();
    diag.forget_env(a);
    let seen = diag.snapshot();
    assert_eq!(seen.watched.len(), 1);
    assert_eq!(seen.watched[0].row.thread, 1.0);
    assert_eq!(
      seen.waits.iter().map(|w| w.id).collect::<Vec<_>>(),
      vec![kept]
    );
    diag.forget_env(b);
    assert_eq!(diag.len(), (0, 0));
  }

  /// Two AsyncLock words, the first held by thread 1 and the second by
  /// thread 2 (owner = threadId + 1, shifted left once), watched by an env
  /// of each thread.
  fn abba(words: &[AtomicI32; 2]) -> (Diag, u64, u64) {
    let diag = Diag::new();
    words[0].store(2 << 1, Ordering::SeqCst);
    words[1].store(3 << 1, Ordering::SeqCst);
    let (one, two) = (diag.new_env(), diag.new_env());
    for (env, thread) in [(one, 1.0), (two, 2.0)] {
      for word in words {
        let at = word as *const AtomicI32 as usize;
        // SAFETY: the caller's words outlive the table it gets.
        unsafe { diag.watch(env, at, row(thread, std::slice::from_ref(word), at)) };
      }
    }
    (diag, one, two)
  }

  /// A page as a thread's lib/tracking.js keeps it (8-aligned).
  #[repr(align(8))]
  struct PageMemory([AtomicI32; PAGE_SLOTS * SLOT_INTS]);

  impl PageMemory {
    fn new() -> Box<Self> {
      Box::new(PageMemory(std::array::from_fn(|_| AtomicI32::new(0))))
    }

    fn at(&self) -> usize {
      self.0.as_ptr() as usize
    }

    /// Writes a blocking wait for one of the word at `word` into `slot`,
    /// as lib/tracking.js's `written` does, with generation `generation`.
    fn write(&self, slot: usize, generation: i32, word: usize, base: usize) {
      let at = slot * SLOT_INTS;
      let double = |i: usize, x: f64| {
        let bits = x.to_bits();
        self.0[at + i].store(bits as u32 as i32, Ordering::SeqCst);
        self.0[at + i + 1].store((bits >> 32) as u32 as i32, Ordering::SeqCst);
      };
      self.0[at + 1].store(1 | 0x100, Ordering::SeqCst);
      self.0[at + 2].store(1, Ordering::SeqCst);
      double(4, word as f64);
      double(6, base as f64);
      double(8, 7.0);
      self.0[at].store(generation, Ordering::SeqCst);
    }

    fn end(&self, slot: usize) {
      self.0[slot * SLOT_INTS].store(0, Ordering::SeqCst);
    }
  }

  #[test]
  fn a_wait_written_into_a_page_is_seen_until_it_ends_and_a_page_holds_the_flags() {
    let diag = Diag::new();
    let env = diag.new_env();
    let page = PageMemory::new();
    let word = AtomicI32::new(0);
    let key = &word as *const AtomicI32 as usize;
    diag.flags(Some(ORDER));
    // SAFETY: `page` outlives the table's use of it (its env is forgotten
    // below).
    unsafe { diag.add_page(env, 4.0, page.at()) };
    assert_eq!(
      page.0[0].load(Ordering::SeqCst),
      ORDER as i32,
      "the flags, written when it was added"
    );
    diag.flags(Some(DETECT));
    assert_eq!(
      page.0[0].load(Ordering::SeqCst),
      DETECT as i32,
      "and when they change"
    );
    diag.flags(Some(0));
    assert_eq!(diag.snapshot().waits, vec![], "a free slot holds no wait");
    page.write(3, 9, key, key - 8);
    let waits = diag.snapshot().waits;
    assert_eq!(waits.len(), 1);
    let wait = &waits[0].wait;
    assert_eq!(
      (
        wait.thread,
        wait.word,
        wait.base,
        wait.what,
        wait.blocking,
        wait.since
      ),
      (4.0, key, key - 8, 1, true, 7.0)
    );
    assert_eq!(wait.label, 1);
    page.end(3);
    assert_eq!(diag.snapshot().waits, vec![], "ended");
    page.write(5, 10, key, key);
    diag.forget_env(env);
    assert_eq!(
      diag.snapshot().waits,
      vec![],
      "its env ended: its pages go with it"
    );
    diag.flags(Some(ORDER));
    assert_eq!(
      page.0[0].load(Ordering::SeqCst),
      0,
      "a forgotten page is not written"
    );
  }

  #[test]
  fn a_slot_that_does_not_hold_an_address_holds_no_wait() {
    let diag = Diag::new();
    let env = diag.new_env();
    let page = PageMemory::new();
    // SAFETY: as above.
    unsafe { diag.add_page(env, 4.0, page.at()) };
    page.write(1, 1, 64, 128); // (its buffer after its word)
    page.write(2, 2, usize::MAX, 0); // (not a whole number below 2 ** 53)
    assert_eq!(diag.snapshot().waits, vec![]);
    diag.blind();
    page.write(3, 3, 64, 0);
    assert_eq!(diag.snapshot().waits, vec![], "blind: no page is read");
    diag.forget_env(env);
  }

  #[test]
  fn detection_sees_a_wait_that_started_in_a_page_before_it_was_switched_on() {
    let words = [AtomicI32::new(0), AtomicI32::new(0)];
    let (diag, one, two) = abba(&words);
    let key = |i: usize| &words[i] as *const AtomicI32 as usize;
    let page = PageMemory::new();
    // SAFETY: as above.
    unsafe { diag.add_page(one, 1.0, page.at()) };
    // Detection off: thread 1 (holding word 0) waits for word 1 in its page.
    page.write(1, 1, key(1), key(1));
    assert_eq!(diag.flags(Some(DETECT)), DETECT);
    let closed = diag
      .wait(two, waiting(2.0, key(0), key(0)))
      .expect_err("thread 2's wait closes the cycle through the page's");
    assert_eq!(closed.made, None);
    let threads: Vec<(f64, Option<f64>)> =
      closed.links.iter().map(|l| (l.thread, l.held_by)).collect();
    assert_eq!(threads, vec![(2.0, Some(1.0)), (1.0, Some(2.0))]);
    page.end(1);
    diag
      .wait(two, waiting(2.0, key(0), key(0)))
      .expect("thread 1's wait ended: no cycle");
    diag.forget_env(one);
  }

  #[test]
  fn a_cycle_with_two_paths_is_reported_every_time() {
    // Thread 1 holds a, and waits (two async waits that keep a) for b and
    // for c; thread 2 holds b and c, and waits (blocking) for a: the
    // search may go through either of thread 1's waits, and every look
    // must take the same one.
    for _ in 0..40 {
      let words = [
        AtomicI32::new(2 << 1),
        AtomicI32::new(3 << 1),
        AtomicI32::new(3 << 1),
      ];
      let diag = Diag::new();
      let (one, two) = (diag.new_env(), diag.new_env());
      let key = |i: usize| &words[i] as *const AtomicI32 as usize;
      for (env, thread) in [(one, 1.0), (two, 2.0)] {
        for i in 0..3 {
          // SAFETY: `words` outlive the table.
          unsafe { diag.watch(env, key(i), row(thread, &words[i..=i], key(i))) };
        }
      }
      for i in [1, 2] {
        let mut wait = waiting(1.0, key(i), key(i));
        wait.blocking = false;
        wait.ctx = vec![key(0)];
        diag.wait(one, wait).expect("no cycle yet");
      }
      diag.flags(Some(DETECT));
      let closed = diag
        .wait(two, waiting(2.0, key(0), key(0)))
        .expect_err("it closes the cycle");
      assert_eq!(closed.made, None);
    }
  }

  #[test]
  fn with_detection_on_the_wait_that_closes_a_cycle_fails_and_is_not_made() {
    let words = [AtomicI32::new(0), AtomicI32::new(0)];
    let (diag, one, two) = abba(&words);
    let key = |i: usize| &words[i] as *const AtomicI32 as usize;
    assert_eq!(diag.flags(Some(DETECT)), DETECT);
    assert_eq!(diag.took(1.0, key(0), Some("at one".into()), None), vec![]);
    diag
      .wait(one, waiting(1.0, key(1), key(1)))
      .expect("thread 2 runs on");
    let closed = diag
      .wait(two, waiting(2.0, key(0), key(0)))
      .expect_err("it closes the cycle");
    assert_eq!(closed.made, None);
    let links = closed.links;
    assert_eq!(links.len(), 2);
    assert_eq!((links[0].thread, links[0].held_by), (2.0, Some(1.0)));
    assert_eq!(
      links[0].stack.as_deref(),
      Some("at one"),
      "where thread 1 took what thread 2 waits for"
    );
    assert_eq!((links[1].thread, links[1].held_by), (1.0, Some(2.0)));
    assert_eq!(diag.len().1, 1, "the failed wait is not in the table");
    diag.flags(Some(0));
    diag
      .wait(two, waiting(2.0, key(0), key(0)))
      .expect("detection off: the wait is made");
  }

  #[test]
  fn a_cycle_gone_by_the_next_look_is_not_reported() {
    // Thread 1's wait ends (its thread was woken, say) in the gap after
    // the first look at the cycle thread 2's wait closes: by the second,
    // the cycle is gone.
    let words = [AtomicI32::new(0), AtomicI32::new(0)];
    let (mut diag, one, two) = abba(&words);
    let key = |i: usize| &words[i] as *const AtomicI32 as usize;
    diag.flags(Some(DETECT));
    let first = diag
      .wait(one, waiting(1.0, key(1), key(1)))
      .expect("thread 2 runs on");
    let gaps = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = gaps.clone();
    diag.in_gap = Some(Box::new(move |diag| {
      if seen.fetch_add(1, Ordering::SeqCst) == 0 {
        // Another thread ends it: the table's lock is let go of.
        std::thread::scope(|s| {
          s.spawn(|| diag.wait_end(first));
        });
      }
    }));
    let second = diag
      .wait(two, waiting(2.0, key(0), key(0)))
      .expect("the cycle was gone by the second look");
    assert_eq!(
      gaps.load(Ordering::SeqCst),
      1,
      "one gap, then the look that saw it gone"
    );
    let waits = diag.snapshot().waits;
    assert_eq!(waits.iter().map(|w| w.id).collect::<Vec<_>>(), vec![second]);
  }

  #[test]
  fn a_cycle_with_a_timed_wait_in_it_fails_no_wait_and_is_answered() {
    let words = [AtomicI32::new(0), AtomicI32::new(0)];
    let (diag, one, two) = abba(&words);
    let key = |i: usize| &words[i] as *const AtomicI32 as usize;
    diag.flags(Some(DETECT));
    let timed = |w: Wait| Wait { timed: true, ..w };
    let first = diag
      .wait(one, timed(waiting(1.0, key(1), key(1))))
      .expect("thread 2 runs on");
    let closed = diag
      .wait(two, waiting(2.0, key(0), key(0)))
      .expect_err("the cycle is answered");
    let second = closed
      .made
      .expect("thread 1's timeout ends it: this wait is made too");
    diag.wait_end(second);
    diag.wait_end(first);
    diag
      .wait(two, waiting(2.0, key(0), key(0)))
      .expect("thread 1 no longer waits");
    let closed = diag
      .wait(one, timed(waiting(1.0, key(1), key(1))))
      .expect_err("it closes the cycle");
    assert!(closed.made.is_some(), "a timed wait is made all the same");
  }

  #[test]
  fn a_wait_that_must_wait_is_made_though_it_closes_a_cycle_which_is_answered() {
    let words = [AtomicI32::new(0), AtomicI32::new(0)];
    let (diag, one, two) = abba(&words);
    let key = |i: usize| &words[i] as *const AtomicI32 as usize;
    diag.flags(Some(DETECT));
    diag
      .wait(one, waiting(1.0, key(1), key(1)))
      .expect("thread 2 runs on");
    let closed = diag
      .wait(
        two,
        Wait {
          must_wait: true,
          ..waiting(2.0, key(0), key(0))
        },
      )
      .expect_err("it closes the cycle");
    assert_eq!(closed.links.len(), 2);
    let id = closed.made.expect("made all the same");
    assert_eq!(diag.len().1, 2, "both waits are in the table");
    diag.wait_end(id);
    assert_eq!(diag.len().1, 1);
  }

  #[test]
  fn with_lock_order_on_the_first_inverse_pair_is_reported_once() {
    let words = [AtomicI32::new(0), AtomicI32::new(0)];
    let (diag, _, _) = abba(&words);
    let key = |i: usize| &words[i] as *const AtomicI32 as usize;
    diag.flags(Some(ORDER));
    // Thread 1 holds word 0, then takes word 1 (made its holder here).
    words[1].store(2 << 1, Ordering::SeqCst);
    assert_eq!(diag.took(1.0, key(1), Some("1 then".into()), None), vec![]);
    // Thread 2 holds word 1, then takes word 0.
    words[0].store(3 << 1, Ordering::SeqCst);
    words[1].store(3 << 1, Ordering::SeqCst);
    let found = diag.took(2.0, key(0), Some("2 then".into()), None);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].before.thread, 1.0);
    assert_eq!(found[0].before.second.1.as_deref(), Some("1 then"));
    assert_eq!(
      (found[0].now.first.0, found[0].now.second.0),
      (key(1), key(0))
    );
    assert_eq!(diag.took(2.0, key(0), None, None), vec![], "once per pair");
  }

  #[test]
  fn a_take_within_an_async_context_pairs_only_with_that_contexts_holds() {
    let words = [AtomicI32::new(0), AtomicI32::new(0)];
    let (diag, _, _) = abba(&words);
    let key = |i: usize| &words[i] as *const AtomicI32 as usize;
    diag.flags(Some(ORDER));
    // Thread 1 holds both, word 0 through another task than the one that
    // takes word 1: no pair.
    words[1].store(2 << 1, Ordering::SeqCst);
    assert_eq!(diag.took(1.0, key(1), None, Some(&[])), vec![]);
    // Thread 2 takes them in the inverse order, as one task.
    words[0].store(3 << 1, Ordering::SeqCst);
    words[1].store(3 << 1, Ordering::SeqCst);
    assert_eq!(
      diag.took(2.0, key(0), None, Some(&[key(1)])),
      vec![],
      "nothing to invert"
    );
    // Thread 1 again, now as one task: that inverts thread 2's.
    words[0].store(2 << 1, Ordering::SeqCst);
    words[1].store(2 << 1, Ordering::SeqCst);
    assert_eq!(diag.took(1.0, key(1), None, Some(&[key(0)])).len(), 1);
  }

  #[test]
  fn a_row_watched_again_at_the_same_place_replaces_the_old_one() {
    let diag = Diag::new();
    let ints = [AtomicI32::new(0)];
    let env = diag.new_env();
    let at = ints.as_ptr() as usize;
    // SAFETY: as above.
    unsafe { diag.watch(env, at, row(0.0, &ints, 100)) };
    // SAFETY: as above.
    unsafe { diag.watch(env, at, row(0.0, &ints, 100)) };
    assert_eq!(diag.len(), (1, 0));
    diag.unwatch(env, at);
    // The buffer's number went with its last row: a new row gets a new one.
    // SAFETY: as above.
    unsafe { diag.watch(env, at, row(0.0, &ints, 100)) };
    assert_eq!(diag.snapshot().watched[0].buffer, 2);
  }
}
