//! The binding's side of the table of who holds and who waits
//! (`crate::diag`): what `lockWatch` and `stakeWatch` are told for it, a
//! take's wait (`diagWait`, `diagWaitEnd`), and the snapshot
//! (`diagSnapshot`), in the shapes lib/diagnostics.js reads.

use napi::sys;

use super::env;
use super::ffi::{Failure, Js, NResult};
use super::held::{self, Shown};
use super::memory::Element;
use super::memory::{inspect, locate};
use super::shared::core;
use crate::diag::{CycleLink, Inversion, Named, Taken, Wait, MAX_INTS, PAGE_SLOTS, SLOT_INTS};

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

/// `diagWait(i32a, index, info, what, since, threadId, ctx?)` → the wait's
/// id times 4 plus the table's flags (`crate::diag::DETECT`, `ORDER`): a
/// take of this env's thread starts to wait for the primitive whose word
/// is `i32a[index]`; `info` its class (low 8 bits), 256 if it blocks, 512
/// if it must wait (a Condition's re-take: `Wait::must_wait`), 1024 if it
/// has a timeout (`Wait::timed`: it waits on too); `what` what
/// it asked for; `since` when (ms since the Unix epoch); `ctx` (async
/// takes) the keys of the holds its async context keeps, as `diagTook`
/// gave them. With detection on, a wait that would close a cycle is not
/// made: the cycle's links come back instead (an array); one that must
/// wait is made, and comes back as `{ wait, cycle }`, `wait` the number
/// above.
pub fn wait(
  js: Js,
  [array, index, info, what, since, thread, ctx]: [sys::napi_value; 7],
) -> NResult<sys::napi_value> {
  let location = locate(js, array, js.f64(index)?)?;
  let info = js.i32(info)?;
  let must_wait = info & 0x200 != 0;
  let wait = Wait {
    thread: js.f64(thread)?,
    label: (info & 0xff) as u32,
    word: location.key,
    base: location.buffer_base,
    what: js.i32(what)?,
    blocking: info & 0x100 != 0,
    since: js.f64(since)?,
    ctx: js
      .f64_elements(ctx, 1024)?
      .into_iter()
      .map(|key| key as usize)
      // A re-take's context let go of the word it takes again (the
      // Condition released it): not a hold it keeps.
      .filter(|&key| !(must_wait && key == location.key))
      .collect(),
    must_wait,
    timed: info & 0x400 != 0,
  };
  let env = env::held(js)?.borrow_mut().diag_env();
  if env == 0 {
    return js.number(0.0);
  }
  let flags = core().diag_flags(None)?;
  // Made: should its answer fail, nobody could end it.
  let made = |id: u64| {
    js.number(id as f64 * 4.0 + f64::from(flags))
      .inspect_err(|_| {
        let _ = core().diag_wait_end(id);
      })
  };
  match core().diag_wait(env, wait)? {
    Ok(id) => made(id),
    Err(closed) => match closed.made {
      None => cycle(js, &closed.links),
      Some(id) => {
        let answer = || -> NResult<sys::napi_value> {
          let out = js.object()?;
          js.define_value(out, "wait", made(id)?)?;
          js.define_value(out, "cycle", cycle(js, &closed.links)?)?;
          Ok(out)
        };
        answer().inspect_err(|_| {
          let _ = core().diag_wait_end(id);
        })
      }
    },
  }
}

/// `diagPage(i32a, threadId)` → true if the Int32Array `i32a` (over a
/// SharedArrayBuffer, at least `PAGE_SLOTS * SLOT_INTS` long, 8-aligned)
/// is now one of this env's pages of waits (`crate::diag`, whose module
/// docs give its layout); false if nothing is shown of this env.
pub fn page(js: Js, [array, thread]: [sys::napi_value; 2]) -> NResult<sys::napi_value> {
  let short = || Failure::Range("a page must be an Int32Array of 1,024 elements or more".into());
  let (described, buffer) = inspect(js, array).map_err(|_| short())?;
  if !described.covers((PAGE_SLOTS * SLOT_INTS - 1) as f64) {
    return Err(short());
  }
  let mut location = described.locate(0.0)?;
  if !matches!(location.element, Element::Int32) || location.key % 8 != 0 {
    return Err(Failure::Type(
      "a page must be an 8-aligned Int32Array".into(),
    ));
  }
  location.buffer = Some(buffer);
  let thread = js
    .f64(thread)
    .map_err(|_| Failure::Type("threadId must be a number".into()))?;
  js.boolean(held::add_page(js, &env::held(js)?, &location, thread)?)
}

/// `diagKey(i32a, index)` → the key of the primitive whose word is
/// `i32a[index]`: its address, as a number (what a page's slot names).
pub fn key(js: Js, [array, index]: [sys::napi_value; 2]) -> NResult<sys::napi_value> {
  js.number(locate(js, array, js.f64(index)?)?.key as f64)
}

/// A primitive's `{ label, buffer, index, name }`.
fn named(js: Js, named: &Named) -> NResult<sys::napi_value> {
  let out = js.object()?;
  js.define_value(out, "label", js.number(f64::from(named.label))?)?;
  js.define_value(out, "buffer", js.number(f64::from(named.buffer))?)?;
  js.define_value(out, "index", js.number((named.offset / 4) as f64)?)?;
  if let Some(name) = &named.name {
    js.define_value(out, "name", js.utf8(name)?)?;
  }
  Ok(out)
}

/// A string, or undefined.
fn text(js: Js, text: Option<&str>) -> NResult<sys::napi_value> {
  match text {
    Some(text) => js.utf8(text),
    None => js.undefined(),
  }
}

/// A cycle's links as an array of `{ threadId, blocking, what, waitsFor,
/// heldBy, stack, behind }`.
fn cycle(js: Js, links: &[CycleLink]) -> NResult<sys::napi_value> {
  let mut out = Vec::with_capacity(links.len());
  for link in links {
    let o = js.object()?;
    js.define_value(o, "threadId", js.number(link.thread)?)?;
    js.define_value(o, "blocking", js.boolean(link.blocking)?)?;
    js.define_value(o, "what", js.number(f64::from(link.what))?)?;
    js.define_value(o, "waitsFor", named(js, &link.waits_for)?)?;
    let held_by = match link.held_by {
      Some(thread) => js.number(thread)?,
      None => js.undefined()?,
    };
    js.define_value(o, "heldBy", held_by)?;
    js.define_value(o, "stack", text(js, link.stack.as_deref())?)?;
    let behind = match link.behind {
      Some(thread) => js.number(thread)?,
      None => js.undefined()?,
    };
    js.define_value(o, "behind", behind)?;
    out.push(o);
  }
  js.array(&out)
}

/// `diagFlags(to?)` → the table's flags (`crate::diag::DETECT` 1, `ORDER`
/// 2), after setting them to `to` if it is a number >= 0.
pub fn flags(js: Js, [to]: [sys::napi_value; 1]) -> NResult<sys::napi_value> {
  let to = js.i32(to).ok().filter(|&to| to >= 0).map(|to| to as u32);
  js.number(f64::from(core().diag_flags(to)?))
}

/// `diagTook(i32a, index, stack, threadId, ctx?)` → the primitive's key
/// (its word's address, as a number), or `{ key, inversions }` when taking
/// it now inverts an order seen before (`crate::diag::Diag::took`): each
/// `{ now, before, names }`, `now` and `before` `{ threadId, firstStack,
/// secondStack }` and `names` the two primitives as taken now. `ctx`, for
/// a take made in an async context that holds something: the keys of
/// those holds, the only ones it is paired with.
pub fn took(
  js: Js,
  [array, index, stack, thread, ctx]: [sys::napi_value; 5],
) -> NResult<sys::napi_value> {
  let word = locate(js, array, js.f64(index)?)?.key;
  let stack = js.string(stack)?.map(String::into_boxed_str);
  let within: Option<Vec<usize>> = if js.is_object(ctx)? {
    Some(
      js.f64_elements(ctx, 1024)?
        .into_iter()
        .map(|key| key as usize)
        .collect(),
    )
  } else {
    None
  };
  let inversions = core().diag_took(js.f64(thread)?, word, stack, within.as_deref())?;
  let key = js.number(word as f64)?;
  if inversions.is_empty() {
    return Ok(key);
  }
  let taken = |t: &Taken| -> NResult<sys::napi_value> {
    let o = js.object()?;
    js.define_value(o, "threadId", js.number(t.thread)?)?;
    js.define_value(o, "firstStack", text(js, t.first.1.as_deref())?)?;
    js.define_value(o, "secondStack", text(js, t.second.1.as_deref())?)?;
    Ok(o)
  };
  let mut out = Vec::with_capacity(inversions.len());
  for Inversion { now, before, names } in &inversions {
    let o = js.object()?;
    js.define_value(o, "now", taken(now)?)?;
    js.define_value(o, "before", taken(before)?)?;
    js.define_value(
      o,
      "names",
      js.array(&[named(js, &names[0])?, named(js, &names[1])?])?,
    )?;
    out.push(o);
  }
  let o = js.object()?;
  js.define_value(o, "key", key)?;
  js.define_value(o, "inversions", js.array(&out)?)?;
  Ok(o)
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
