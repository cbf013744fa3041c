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
//!   and again when it ends (lib/diagnostics.js): the slow path only.
//!
//! The table knows nothing of what the ints mean: the JavaScript side,
//! which writes the words, also reads them (by `label`, its class).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};

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
}

#[derive(Default)]
struct State {
  /// By env and the address of what the instance is watched by (its word
  /// for an AsyncLock, its stake's first Int32 otherwise).
  watched: HashMap<(u64, usize), Watched>,
  /// Waits in progress, by id, with their env.
  waits: HashMap<u64, (u64, Wait)>,
  /// Buffers named by watched rows, by base address: their number, and
  /// how many rows name them.
  buffers: HashMap<usize, (u32, usize)>,
  next_env: u64,
  next_wait: u64,
  next_buffer: u32,
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
      }
    }
    state.waits.retain(|_, (of, _)| *of != env);
  }

  /// A take of `env` starts to wait: its id, for [`wait_end`](Self::wait_end).
  pub fn wait(&self, env: u64, wait: Wait) -> u64 {
    let mut state = self.state.lock();
    state.next_wait += 1;
    let id = state.next_wait;
    state.waits.insert(id, (env, wait));
    id
  }

  /// The wait `id` has ended (nothing if it is not in the table).
  pub fn wait_end(&self, id: u64) {
    self.state.lock().waits.remove(&id);
  }

  /// Every row, with what its memory holds now, and every wait.
  pub fn snapshot(&self) -> Snapshot {
    let state = self.state.lock();
    let read = |at: usize, n: usize| -> Vec<i32> {
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
      .waits
      .iter()
      .map(|(&id, (_, wait))| SeenWait {
        id,
        buffer: state.buffers.get(&wait.base).map(|b| b.0),
        wait: wait.clone(),
      })
      .collect();
    waits.sort_by_key(|w| w.id);
    Snapshot { watched, waits }
  }

  /// How many rows and waits the table has (for tests).
  pub fn len(&self) -> (usize, usize) {
    let state = self.state.lock();
    (state.watched.len(), state.waits.len())
  }
}

impl State {
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
    let id = diag.wait(
      b,
      Wait {
        thread: 1.0,
        label: 1,
        word: at,
        base: 100,
        what: 1,
        blocking: true,
        since: 5.0,
      },
    );
    let other = diag.wait(
      b,
      Wait {
        thread: 1.0,
        label: 1,
        word: 8,
        base: 200,
        what: 1,
        blocking: false,
        since: 6.0,
      },
    );
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
    let wait = Wait {
      thread: 0.0,
      label: 1,
      word: at,
      base: 100,
      what: 1,
      blocking: true,
      since: 0.0,
    };
    diag.wait(a, wait.clone());
    let kept = diag.wait(b, wait);
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
