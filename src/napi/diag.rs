//! The binding's side of the table of who holds and who waits
//! (`crate::diag`): what `lockWatch` and `stakeWatch` are told for it, a
//! take's wait (`diagWait`, `diagWaitEnd`), and the snapshot
//! (`diagSnapshot`), in the shapes lib/diagnostics.js reads.

use napi::sys;

use super::env;
use super::ffi::{Failure, Js, NResult};
use super::held::Shown;
use super::memory::locate;
use super::shared::core;
use crate::diag::{Wait, MAX_INTS};

/// The arguments `label`, `name` and `threadId` that lockWatch and
/// stakeWatch take after their own: `label` the instance's class (low 8
/// bits) and how many Int32s from its word are its primitive's (the next
/// 8), `name` a string or undefined. `None` where `label` is not a number
/// (an older lib/ that says nothing of it). The word's Int32s must lie in
/// `array` from `index`.
pub fn shown(
  js: Js,
  array: sys::napi_value,
  index: f64,
  [label, name, thread]: [sys::napi_value; 3],
) -> NResult<Option<Shown>> {
  let Ok(label) = js.i32(label) else {
    return Ok(None);
  };
  let word_ints = ((label >> 8) & 0xff) as usize;
  if !(1..=MAX_INTS).contains(&word_ints) {
    return Err(Failure::Range(format!(
      "label's word count must be from 1 to {MAX_INTS}"
    )));
  }
  locate(js, array, index + (word_ints - 1) as f64)
    .map_err(|_| Failure::Range("index must leave room for the primitive's words".into()))?;
  let name = js.string(name)?.map(String::into_boxed_str);
  let thread = js
    .f64(thread)
    .map_err(|_| Failure::Type("threadId must be a number".into()))?;
  Ok(Some(Shown {
    thread,
    label: (label & 0xff) as u32,
    name,
    word_ints,
  }))
}

/// `diagWait(i32a, index, info, what, since, threadId)` → the wait's id: a
/// take of this env's thread starts to wait for the primitive whose word
/// is `i32a[index]`; `info` its class (low 8 bits) and 256 if it blocks;
/// `what` what it asked for; `since` when (ms since the Unix epoch).
pub fn wait(
  js: Js,
  [array, index, info, what, since, thread]: [sys::napi_value; 6],
) -> NResult<sys::napi_value> {
  let location = locate(js, array, js.f64(index)?)?;
  let info = js.i32(info)?;
  let wait = Wait {
    thread: js.f64(thread)?,
    label: (info & 0xff) as u32,
    word: location.key,
    base: location.buffer_base,
    what: js.i32(what)?,
    blocking: info & 0x100 != 0,
    since: js.f64(since)?,
  };
  let env = env::held(js)?.borrow_mut().diag_env();
  let id = if env == 0 {
    0
  } else {
    core().diag_wait(env, wait)?
  };
  js.number(id as f64)
}

/// `diagWaitEnd(id)`: the wait `id` (from diagWait) has ended.
pub fn wait_end(js: Js, [id]: [sys::napi_value; 1]) -> NResult<sys::napi_value> {
  let id = js.f64(id)?;
  if id > 0.0 {
    core().diag_wait_end(id as u64)?;
  }
  js.undefined()
}

/// Ints per watched row in `diagSnapshot()`'s `watched`: thread, label,
/// buffer, byte offset in it, name (an index in `names`, or -1), then the
/// count and the values of the word's Int32s, and the same of the stake's.
pub const WATCHED_INTS: usize = 5 + 2 * (1 + MAX_INTS);
/// Numbers per wait in its `waits`: id, thread, label, buffer (0 if none),
/// byte offset, what, blocking (1 or 0), since.
pub const WAIT_NUMBERS: usize = 8;

/// `diagSnapshot(i32a?, index?)` → `{ watched, waits, names }`: the core's
/// table now, as flat arrays of numbers (see [`WATCHED_INTS`],
/// [`WAIT_NUMBERS`]) and the names they index; only the rows and waits of
/// the primitive whose word is `i32a[index]`, if given.
pub fn snapshot(js: Js, [array, index]: [sys::napi_value; 2]) -> NResult<sys::napi_value> {
  let mut seen = core().diag_snapshot()?;
  if js.is_object(array)? {
    let word = locate(js, array, js.f64(index)?)?.key;
    seen.watched.retain(|row| row.row.word == word);
    seen.waits.retain(|wait| wait.wait.word == word);
  }
  let mut names = Vec::new();
  let mut watched = Vec::with_capacity(seen.watched.len() * WATCHED_INTS);
  for row in &seen.watched {
    let name = match &row.row.name {
      Some(name) => {
        names.push(js.utf8(name)?);
        (names.len() - 1) as f64
      }
      None => -1.0,
    };
    watched.extend([
      row.row.thread,
      f64::from(row.row.label),
      f64::from(row.buffer),
      (row.row.word - row.row.base) as f64,
      name,
    ]);
    for ints in [&row.words, &row.cells] {
      watched.push(ints.len() as f64);
      watched.extend((0..MAX_INTS).map(|i| ints.get(i).map_or(0.0, |&v| f64::from(v))));
    }
  }
  let mut waits = Vec::with_capacity(seen.waits.len() * WAIT_NUMBERS);
  for wait in &seen.waits {
    waits.extend([
      wait.id as f64,
      wait.wait.thread,
      f64::from(wait.wait.label),
      f64::from(wait.buffer.unwrap_or(0)),
      (wait.wait.word - wait.wait.base) as f64,
      f64::from(wait.wait.what),
      if wait.wait.blocking { 1.0 } else { 0.0 },
      wait.wait.since,
    ]);
  }
  let out = js.object()?;
  js.define_value(out, "watched", js.numbers(&watched)?)?;
  js.define_value(out, "waits", js.numbers(&waits)?)?;
  js.define_value(out, "names", js.array(&names)?)?;
  Ok(out)
}
