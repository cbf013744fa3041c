'use strict';
// Who holds what and who waits for what, across every thread of the
// process: query(), report() and each primitive's util.inspect.
//
// The binding keeps one table per process (src/diag.rs; every copy of the
// package shares it): a row for each live instance of each thread, naming
// its primitive's Int32s and its stake, and each take that waits. A
// snapshot reads that memory as it is now; this file says what the Int32s
// mean, class by class, as the files that write them define them:
//
//   AsyncLock   the word names its holder (lib/owned-word.js)
//   Semaphore   each instance's stake counts the permits it holds
//   RwLock      each instance's stake is its share of the state: its reads,
//               WRITER if it writes (lib/rwlock.js)
//   Condition,  no holders: only waiters
//   Barrier,
//   Latch
//
// Nothing here runs on a take's path: a snapshot costs one native call.

const { holderOf, ABANDONED, WAITERS } = require('./owned-word.js');

// Node's util, when first needed (util.inspect of an instance not found).
const util = () => require('util');

const { kLabel, kKindOfLabel } = require('./core.js');
// async-mutex's Semaphore shows as 'Semaphore', with `package: 'async-mutex'`.
const kMutexSemaphore = kLabel.MutexSemaphore & 0xff;
// The layout of a snapshot's rows (src/napi/diag.rs WATCHED_INTS, WAIT_NUMBERS).
const kMaxInts = 4;
const kRowInts = 5 + 2 * (1 + kMaxInts);
const kWaitNumbers = 8;

// RwLock's state and share (lib/rwlock.js).
const RW_ABANDONED = 1 << 31;
const RW_WRITER = 1 << 30;
const RW_READERS = (1 << 20) - 1;

/** What a wait's `what` number says it asked for, by class. */
function asked(label, what) {
  switch (kKindOfLabel[label]) {
    case 'Semaphore': // (async-mutex's too)
    case 'SignalSemaphore':
      return { permits: what };
    case 'RwLock':
      return { mode: what === 2 ? 'write' : 'read' };
    case 'AsyncLock':
      return { mode: 'exclusive' };
    default:
      return {};
  }
}

/**
 * The binding's raw snapshot -> `{ at, primitives }`: one entry per
 * primitive (a buffer and an index), with the instances of every thread
 * over it merged.
 */
function decode(raw, at) {
  const byPlace = new Map();
  const { watched, waits, names } = raw;
  for (let i = 0; i < watched.length; i += kRowInts) {
    const thread = watched[i];
    const label = watched[i + 1];
    const buffer = watched[i + 2];
    const offset = watched[i + 3];
    const name = watched[i + 4] >= 0 ? names[watched[i + 4]] : undefined;
    const words = watched.slice(i + 6, i + 6 + watched[i + 5]);
    const cellAt = i + 6 + kMaxInts;
    const cells = watched.slice(cellAt + 1, cellAt + 1 + watched[cellAt]);
    const key = `${buffer}:${offset}`;
    let entry = byPlace.get(key);
    if (entry === undefined) {
      entry = newEntry(label, buffer, offset, words);
      byPlace.set(key, entry);
    }
    if (entry.name === undefined && name !== undefined) entry.name = name;
    if (!entry.threads.includes(thread)) entry.threads.push(thread);
    addHolder(entry, label, thread, cells);
  }
  for (let i = 0; i < waits.length; i += kWaitNumbers) {
    const entry = byPlace.get(`${waits[i + 3]}:${waits[i + 4]}`);
    if (entry === undefined) continue; // its instance was collected meanwhile
    entry.waiters.push({
      threadId: waits[i + 1],
      blocking: waits[i + 6] === 1,
      ...asked(waits[i + 2], waits[i + 5]),
      since: waits[i + 7],
      waitedMs: Math.max(0, at - waits[i + 7]),
    });
  }
  const primitives = [...byPlace.values()];
  for (const entry of primitives) entry.threads.sort((a, b) => a - b);
  return { at, primitives };
}

/** A primitive's entry, from the first row over it. */
function newEntry(label, buffer, offset, words) {
  const entry = {
    kind: kKindOfLabel[label] || 'unknown',
    name: undefined,
    buffer,
    index: offset / 4,
    state: {},
    abandoned: false,
    holders: [],
    waiters: [],
    threads: [],
  };
  if (label === kMutexSemaphore) entry.package = 'async-mutex';
  const word = words[0];
  switch (label === kMutexSemaphore ? 'MutexSemaphore' : kKindOfLabel[label]) {
    case 'AsyncLock': {
      const holder = holderOf(word);
      entry.abandoned = word === ABANDONED;
      entry.state = { locked: holder !== null, contended: holder !== null && (word & WAITERS) !== 0 };
      if (holder !== null) entry.holders.push({ threadId: holder, mode: 'exclusive' });
      break;
    }
    case 'Semaphore':
      entry.state = { free: word, permits: words[2] };
      break;
    case 'MutexSemaphore':
      entry.state = { value: word };
      break;
    case 'RwLock':
      entry.abandoned = (word & RW_ABANDONED) !== 0;
      entry.state = { readers: word & RW_READERS, writeLocked: (word & RW_WRITER) !== 0 };
      break;
    case 'Condition':
      entry.state = { sequence: word };
      break;
    case 'Barrier':
      entry.state = { arrived: word & 0x7fff, parties: words[2], broken: (word & (1 << 16)) !== 0 };
      break;
    case 'Latch':
      entry.state = { count: word };
      break;
    case 'SignalSemaphore':
      entry.state = { available: word };
      break;
    default:
      break;
  }
  return entry;
}

/** Adds what one instance's stake says its thread holds. */
function addHolder(entry, label, thread, cells) {
  const kind = kKindOfLabel[label];
  if (kind === 'Semaphore') { // (async-mutex's too)
    if (cells[0] > 0) merge(entry, { threadId: thread, permits: cells[0] }, 'permits');
  } else if (kind === 'RwLock') {
    const share = cells[0];
    if ((share & RW_WRITER) !== 0) merge(entry, { threadId: thread, mode: 'write' });
    const reads = share & RW_READERS;
    if (reads > 0) merge(entry, { threadId: thread, mode: 'read', reads }, 'reads');
  }
}

/** Adds `holder`, or adds its `count` to the same thread's same hold. */
function merge(entry, holder, count) {
  const same = entry.holders.find((h) => h.threadId === holder.threadId && h.mode === holder.mode);
  if (same === undefined) entry.holders.push(holder);
  else if (count !== undefined) same[count] += holder[count];
}

/** The state of an entry in a few words, for report() and util.inspect. */
function summary(entry) {
  const parts = [];
  const s = entry.state;
  if (entry.kind === 'Semaphore' && s.permits !== undefined) parts.push(`${s.free} of ${s.permits} free`);
  if (entry.package === 'async-mutex') parts.push(`value ${s.value}`);
  if (entry.kind === 'Latch') parts.push(`count ${s.count}`);
  if (entry.kind === 'SignalSemaphore') parts.push(`${s.available} available`);
  if (entry.kind === 'Barrier') parts.push(`${s.arrived} of ${s.parties} arrived${s.broken ? ', broken' : ''}`);
  for (const h of entry.holders) {
    const what = h.permits !== undefined ? ` (${h.permits} permit${h.permits === 1 ? '' : 's'})`
      : h.mode === 'read' ? ` (read${h.reads === 1 ? '' : ` \u00d7${h.reads}`})`
      : h.mode === 'write' ? ' (write)' : '';
    parts.push(`held by thread ${h.threadId}${what}`);
  }
  if (entry.holders.length === 0 && (entry.kind === 'AsyncLock' || entry.kind === 'RwLock')) parts.push('free');
  if (entry.abandoned) parts.push('abandoned');
  if (entry.waiters.length > 0) parts.push(`${entry.waiters.length} waiting`);
  return parts.join(', ');
}

/** What names an entry: its kind, and its name or place. */
const title = (entry) =>
  `${entry.kind}${entry.package ? ` (${entry.package})` : ''} ${entry.name !== undefined ? JSON.stringify(entry.name) : `#${entry.buffer}[${entry.index}]`}`;

/** A snapshot as text: a line per primitive, then one per waiter. */
function format(snapshot) {
  const lines = [`atomics-waitasync: ${snapshot.primitives.length} primitive${snapshot.primitives.length === 1 ? '' : 's'} in use at ${new Date(snapshot.at).toISOString()}`];
  for (const entry of snapshot.primitives) {
    lines.push(`  ${title(entry)}: ${summary(entry) || 'idle'} (threads ${entry.threads.join(', ')})`);
    for (const w of entry.waiters) {
      const what = w.permits !== undefined ? `${w.permits} permit${w.permits === 1 ? '' : 's'}`
        : w.mode === 'read' ? 'a read' : w.mode === 'write' ? 'the write lock' : w.mode === 'exclusive' ? 'the lock' : 'its turn';
      lines.push(`    thread ${w.threadId} waits (${w.blocking ? 'blocking' : 'async'}) for ${what}, ${Math.round(w.waitedMs)} ms`);
    }
  }
  return lines.join('\n');
}

/**
 * query(), report() and the primitives' util.inspect, over the binding's
 * diagSnapshot (undefined in a binary older than this file: query() then
 * throws, and util.inspect shows the fields only).
 */
function createQuery({ diagSnapshot }) {
  const now = () => Date.now();

  /** Every primitive of the package in use in any thread of the process, now. */
  function query() {
    if (typeof diagSnapshot !== 'function') {
      throw new Error('atomics-waitasync: the loaded binary has no diagSnapshot: query() needs a binary of this version (npx atomics-waitasync-build)');
    }
    return decode(diagSnapshot(), now());
  }

  /** query() as text (or `snapshot`, a query() result, as text). */
  function report(snapshot) {
    return format(snapshot === undefined ? query() : snapshot);
  }

  /**
   * What util.inspect shows of `instance`, of class `Class` (index.js makes
   * it each class's inspect): its primitive's state in one line.
   */
  function inspect(Class, instance, options) {
    let line;
    try {
      if (typeof diagSnapshot === 'function' && instance.i32a !== undefined) {
        const entry = decode(diagSnapshot(instance.i32a, instance.index), now()).primitives[0];
        if (entry !== undefined) line = summary(entry) || 'idle';
      }
    } catch {
      // (not one of ours, or a binary without it: the fields only)
    }
    const name = instance.name !== undefined ? ` ${JSON.stringify(instance.name)}` : '';
    if (line === undefined) return `${Class.name}${name} ${util().inspect({ ...instance }, options)}`;
    return `${Class.name}${name} { ${line} }`;
  }

  return { query, report, inspect };
}

module.exports = { createQuery };
