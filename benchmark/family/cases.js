'use strict';
// benchmark/lock-family.js's cases: one table, CASES, of each row's name,
// the form it runs (family/implementations.js), what it reports, and how
// it runs: `main`, its body on the main thread, and `worker`, the body of
// each of its workers. Then those bodies, and `runCase` (one case with one
// implementation, in the fresh process of `lock-family.js --child`) and
// `workerMain` (a worker of it). Not a script. What each case measures,
// and how f (and the rwlock rows' r and w) check mutual exclusion: the
// header of benchmark/lock-family.js.

const path = require('path');
const { workerData, parentPort } = require('worker_threads');
const { performance } = require('perf_hooks');
const h = require('../lib/harness');
const { SLOTS, implementation, sharedState } = require('./implementations');

const { COUNTER, GO, TURN, STOP, LAST, PHASE, MIRROR, INUSE, OVER } = SLOTS;

// The workers run the entry, whose dispatch calls workerMain in a worker.
const ENTRY = path.join(__dirname, '..', 'lock-family.js');

// A row of the results: the figure `key` of a case's metrics, shown as
// `label` in `unit`; `better` says which way the package's ratio is good.
const metric = (key, label, unit, better) => ({ key, label, unit, better });

/**
 * The rows of a case where the main thread takes something again and again
 * among busy workers, timing each take: its takes per second (`takes`),
 * the wait's p50, p99 and longest, and every thread's operations (`all`).
 */
function mainWaitMetrics(what, takes, all) {
  return [
    metric('mainPerSec', `${what}: ${takes}`, '/s', 'higher'),
    metric('p50us', `${what}: wait p50`, 'µs', 'lower'),
    metric('p99us', `${what}: wait p99`, 'µs', 'lower'),
    metric('maxUs', `${what}: wait max`, 'µs', 'lower'),
    metric('opsPerSec', `${what}: ${all}`, 'ops/s', 'higher'),
  ];
}

// The uncontended rows: f under the blocking or the async form, on the main thread.
const uncontendedCase = (name, form, blocking, label) =>
  ({ name, form, main: uncontended, blocking, metrics: [metric('nsPerOp', label, 'ns/op', 'lower')] });

// The contended rows: `workers` workers in a loop (blocking, or `asyncWorkers`).
const contendedCase = (name, form, workers, asyncWorkers, label) =>
  ({ name, form, main: contended, workers, asyncWorkers, worker: form === 'rwlock' ? rwLoop : loop,
    metrics: [metric('opsPerSec', label, 'ops/s', 'higher')] });

// The rows that check mutual exclusion by each holder's counting. A case's
// members besides those above: `permits` (the semaphore's, 1 by default),
// `parties` (the barrier's), `onMain` (condition-main), and for the rows
// where the main thread takes among 3 busy workers, `take(t)`: the take it
// times, `mainNeeds` (the form's member it uses), `mainWrites` (the main
// thread writes, the workers only read) and `permitCheck` (each holder
// checks the permits held).
const CASES = [
  uncontendedCase('blocking', 'lock', true, 'uncontended lock+unlock, blocking'),
  uncontendedCase('async', 'lock', false, 'uncontended async lock (await)'),
  contendedCase('contended-2', 'lock', 2, false, '2 workers contending, blocking'),
  contendedCase('contended-4', 'lock', 4, false, '4 workers contending, blocking'),
  contendedCase('async-contended-2', 'lock', 2, true, '2 workers contending, async'),
  contendedCase('async-contended-4', 'lock', 4, true, '4 workers contending, async'),
  { name: 'condition-main', form: 'lock', main: condition, worker: pingPongEnd, onMain: true,
    metrics: [metric('tripsPerSec', 'condition ping-pong, main (async) ↔ worker', 'round trips/s', 'higher')] },
  { name: 'condition-workers', form: 'lock', main: condition, worker: pingPongEnd, onMain: false,
    metrics: [metric('tripsPerSec', 'condition ping-pong, worker ↔ worker', 'round trips/s', 'higher')] },
  { name: 'fairness', form: 'lock', main: contended, workers: 3, worker: loop,
    take: ({ api, inc }) => () => api.locked(inc), mainNeeds: 'locked',
    metrics: [
      metric('mainPerSec', 'fairness: main acquisitions', '/s', 'higher'),
      metric('mainShare', 'fairness: main share of all acquisitions', 'fraction', 'higher'),
      metric('p50us', 'fairness: main wait p50', 'µs', 'lower'),
      metric('p99us', 'fairness: main wait p99', 'µs', 'lower'),
      metric('maxUs', 'fairness: main wait max', 'µs', 'lower'),
      metric('opsPerSec', 'fairness: all acquisitions', 'ops/s', 'higher'),
    ] },
  // The semaphore rows run the lock rows' loops over a semaphore of 1.
  uncontendedCase('semaphore-blocking', 'semaphore', true, 'semaphore, uncontended acquire+release, blocking'),
  uncontendedCase('semaphore-async', 'semaphore', false, 'semaphore, uncontended async acquire (await)'),
  contendedCase('semaphore-contended-2', 'semaphore', 2, false, 'semaphore, 2 workers contending, blocking'),
  contendedCase('semaphore-contended-4', 'semaphore', 4, false, 'semaphore, 4 workers contending, blocking'),
  { name: 'barrier-2', form: 'barrier', main: barrier, worker: barrierParty, parties: 2,
    metrics: [metric('phasesPerSec', 'barrier, 2 blocking workers, phases', 'phases/s', 'higher')] },
  { name: 'barrier-4', form: 'barrier', main: barrier, worker: barrierParty, parties: 4,
    metrics: [metric('phasesPerSec', 'barrier, 4 blocking workers, phases', 'phases/s', 'higher')] },
  // The rwlock rows: the same loops with reads and, contended, a write every 10th operation.
  uncontendedCase('rwlock-read-blocking', 'rwlock', true, 'rwlock, uncontended read lock+release, blocking'),
  uncontendedCase('rwlock-read-async', 'rwlock', false, 'rwlock, uncontended async read (await)'),
  contendedCase('rwlock-contended-2', 'rwlock', 2, false, 'rwlock, 2 workers contending (1 write in 10), blocking'),
  contendedCase('rwlock-contended-4', 'rwlock', 4, false, 'rwlock, 4 workers contending (1 write in 10), blocking'),
  { name: 'rwlock-writer-wait', form: 'rwlock', main: contended, workers: 3, worker: rwLoop,
    take: ({ api, pair }) => () => api.writeLocked(pair.write), mainNeeds: 'writeLocked', mainWrites: true,
    metrics: mainWaitMetrics('rwlock, main writes vs 3 reading workers', 'writes', 'all operations') },
  { name: 'semaphore-large-wait', form: 'semaphore', main: contended, workers: 3, worker: loop, permits: 4,
    take: ({ api, check }) => () => api.lockedN(4, () => check.use(4)), mainNeeds: 'lockedN', permitCheck: true,
    metrics: mainWaitMetrics('semaphore of 4, main takes 4 vs 3 workers taking 1', 'takes of 4', 'all takes') },
];

const CASE_NAMES = CASES.map((c) => c.name);

function caseNamed(name) {
  const c = CASES.find((x) => x.name === name);
  if (!c) throw new Error(`unknown case ${name}`);
  return c;
}

/**
 * What a thread of a case works with: the case `c`, the implementation's
 * form `api`, the shared state and its Int32 view, and the case's f:
 * `inc` (lock and semaphore rows), `pair` (rwlock rows: its read and
 * write), `check` (semaphore-large-wait: permitCheck).
 */
function context(c, impl, shared, api, ms) {
  const i32 = new Int32Array(shared.sab);
  return {
    c,
    impl,
    api,
    shared,
    i32,
    ms,
    inc: () => {
      i32[COUNTER] = i32[COUNTER] + 1;
    },
    pair: c.form === 'rwlock' ? rwPair(i32) : null,
    check: c.permitCheck ? permitCheck(i32, shared.permits) : null,
  };
}

/** `{ impl, unsupported }` for the first of `members` the form lacks, with its reason; else null. */
function lacking(t, ...members) {
  for (const member of members) if (!t.api[member]) return { impl: t.impl, unsupported: t.api[`${member}Missing`] };
  return null;
}

/**
 * Lock operations minus the counter: 0 unless two threads were inside f at
 * once and one increment was lost. Reported, not thrown, so that a
 * competitor that breaks mutual exclusion still gets its row (flagged).
 * The rwlock rows count writes only, and reads that saw a write under way.
 */
const lostUpdates = (t, ops) => ops - t.i32[COUNTER];

/**
 * semaphore-large-wait's f: use(n) adds n to the permits held now (INUSE),
 * counting in OVER a holder that sees more than `permits`, and 1 to
 * COUNTER, atomically (up to `permits` holders run it at once); then takes
 * its n back out of INUSE.
 */
function permitCheck(i32, permits) {
  return {
    use(n) {
      if (Atomics.add(i32, INUSE, n) + n > permits) Atomics.add(i32, OVER, 1);
      Atomics.add(i32, COUNTER, 1);
      Atomics.sub(i32, INUSE, n);
    },
  };
}

/**
 * The rwlock rows' f: write() adds 1 to COUNTER and copies the new count
 * to MIRROR (plain stores, one after the other); read() checks that the
 * two agree, counting the reads that saw them differ (torn()): none while
 * the lock keeps readers out of a write.
 */
function rwPair(i32) {
  let torn = 0;
  return {
    write() {
      const count = i32[COUNTER] + 1;
      i32[COUNTER] = count;
      i32[MIRROR] = count;
    },
    read() {
      if (i32[COUNTER] !== i32[MIRROR]) torn++;
    },
    torn: () => torn,
  };
}

/** A growable Float64Array of latencies. */
function samples() {
  let data = new Float64Array(1 << 16);
  let length = 0;
  return {
    push(v) {
      if (length === data.length) {
        const bigger = new Float64Array(data.length * 2);
        bigger.set(data);
        data = bigger;
      }
      data[length++] = v;
    },
    sorted: () => data.slice(0, length).sort(),
  };
}

/** Starts the case's workers (`data` for each, with `w`'s index) and resolves once all are ready. */
async function startWorkers(t, count, data) {
  const threads = [];
  for (let w = 0; w < count; w++) {
    threads.push(h.startWorker(ENTRY, Object.assign({ impl: t.impl, shared: t.shared, caseName: t.c.name, w }, data)));
  }
  for (const thread of threads) await thread.next(); // 'ready'
  return threads;
}

function go(t) {
  Atomics.store(t.i32, GO, 1);
  Atomics.notify(t.i32, GO);
}

// ---------------------------------------------------------------------------
// The main thread's bodies
// ---------------------------------------------------------------------------

/** Uncontended: f under the blocking (`c.blocking`) or the async form, in batches for --ms; ns per operation. */
async function uncontended(t) {
  const { api, c, impl, pair } = t;
  const why = lacking(t, c.blocking ? 'lockUnlock' : 'locked');
  if (why) return why;
  const blocking = c.blocking;
  const batch = blocking ? 1000 : 100;
  const f = pair ? pair.read : t.inc;
  const loop = async (duration) => {
    let ops = 0;
    const start = performance.now();
    const end = start + duration;
    let now = start;
    while (now < end) {
      if (blocking) for (let k = 0; k < batch; k++) api.lockUnlock(f);
      else for (let k = 0; k < batch; k++) await api.locked(f);
      ops += batch;
      now = performance.now();
    }
    return { ops, ms: now - start };
  };
  const warm = await loop(Math.min(200, t.ms / 5));
  const run = await loop(t.ms);
  const metrics = { nsPerOp: (run.ms * 1e6) / run.ops };
  if (pair) {
    // Reads only: nothing written, no read may see the pair differ.
    return { impl, metrics, ops: run.ops, ms: run.ms, writes: 0, lost: lostUpdates(t, 0), reads: warm.ops + run.ops, torn: pair.torn() };
  }
  return { impl, metrics, ops: run.ops, ms: run.ms, lost: lostUpdates(t, warm.ops + run.ops) };
}

/**
 * Contended: `c.workers` workers loop (async where the case or the
 * implementation says) while the main thread only starts and stops them;
 * operations per second, all threads together. With `c.take`, the main
 * thread takes again and again meanwhile, timing each take: its takes per
 * second, its share and the waits' p50/p99/max.
 */
async function contended(t) {
  const { api, c, impl, i32, pair, check } = t;
  const asyncWorkers = c.asyncWorkers || api.asyncOnly === true;
  const why = lacking(t, asyncWorkers ? 'locked' : 'lockUnlock') || (c.take ? lacking(t, c.mainNeeds) : null);
  if (why) return why;
  const threads = await startWorkers(t, c.workers, { async: asyncWorkers });
  go(t);
  const start = performance.now();
  let mainOps = 0;
  let latency = null;
  if (!c.take) {
    await h.sleep(t.ms);
  } else {
    // The main thread takes again and again, timing each take. A timer
    // stops the workers at the deadline, should one take still be waiting
    // then (and should the main thread never get it, the round ends with
    // the child's timeout: an error).
    const take = c.take(t);
    latency = samples();
    const end = start + t.ms;
    const stopper = setTimeout(() => Atomics.store(i32, GO, 2), t.ms + 50);
    let now = start;
    while (now < end) {
      await take();
      const taken = performance.now();
      latency.push(taken - now);
      now = taken;
      mainOps++;
    }
    clearTimeout(stopper);
  }
  Atomics.store(i32, GO, 2);
  const elapsed = performance.now() - start;
  let ops = mainOps;
  const perWorker = [];
  let writes = c.mainWrites ? mainOps : 0;
  let torn = 0;
  for (const thread of threads) {
    const n = await thread.next(); // { ops }, and in the rwlock rows { writes, torn }
    perWorker.push(n.ops);
    ops += n.ops;
    if (pair) {
      writes += n.writes;
      torn += n.torn;
    }
  }
  for (const thread of threads) await thread.worker.terminate();
  const metrics = { opsPerSec: (ops / elapsed) * 1000 };
  if (latency) {
    const sorted = latency.sorted();
    Object.assign(metrics, {
      mainPerSec: (mainOps / elapsed) * 1000,
      mainShare: mainOps / ops,
      p50us: h.sortedPercentile(sorted, 50) * 1000,
      p99us: h.sortedPercentile(sorted, 99) * 1000,
      maxUs: sorted[sorted.length - 1] * 1000,
    });
  }
  if (pair) {
    return { impl, metrics, ops, perWorker, ms: elapsed, writes, lost: lostUpdates(t, writes), reads: ops - writes, torn };
  }
  // large-wait: f adds to COUNTER atomically (holders are not exclusive);
  // OVER counts the holders that saw more permits held than there are.
  const lost = lostUpdates(t, ops);
  const overcommits = check ? Atomics.load(i32, OVER) : 0;
  return { impl, metrics, ops, mainOps, perWorker, ms: elapsed, lost, overcommits };
}

/**
 * Condition ping-pong for --ms: a blocking worker responds; the initiator
 * is the main thread, awaiting (`c.onMain`), or a second blocking worker.
 * Round trips per second.
 */
async function condition(t) {
  const { api, c, impl, i32, ms } = t;
  const why = lacking(t, 'conditionBlocking') || (c.onMain ? lacking(t, 'conditionAsync') : null);
  if (why) return why;
  const [responder] = await startWorkers(t, 1, { role: 'responder' });
  const [initiator] = c.onMain ? [null] : await startWorkers(t, 1, { role: 'initiator', ms });
  go(t);
  const result = c.onMain
    ? await api.conditionAsync((waitAsync, notify) => pingPongAsync(i32, ms, waitAsync, notify))
    : await initiator.next();
  const answered = await responder.next();
  await responder.worker.terminate();
  if (initiator) await initiator.worker.terminate();
  if (answered !== result.trips) throw new Error(`ping-pong out of step: ${result.trips} sent, ${answered} answered`);
  return { impl, metrics: { tripsPerSec: (result.trips / result.ms) * 1000 }, trips: result.trips, ms: result.ms };
}

/** Barrier: `c.parties` workers pass phases for --ms, all stopping after the same one; phases per second. */
async function barrier(t) {
  const { c, impl, i32, ms } = t;
  i32[LAST] = 0x3fffffff; // until told
  const threads = await startWorkers(t, c.parties, {});
  go(t);
  const start = performance.now();
  await h.sleep(ms);
  Atomics.store(i32, LAST, Atomics.load(i32, PHASE) + 2);
  const phases = [];
  for (const thread of threads) phases.push(await thread.next());
  const elapsed = performance.now() - start;
  for (const thread of threads) await thread.worker.terminate();
  if (phases.some((p) => p !== phases[0])) throw new Error(`barrier out of step: ${phases.join(', ')} phases`);
  return { impl, metrics: { phasesPerSec: (phases[0] / elapsed) * 1000 }, phases: phases[0], ms: elapsed };
}

// ---------------------------------------------------------------------------
// The workers' bodies: each runs from GO=1; its value is posted to the main thread
// ---------------------------------------------------------------------------

/** Lock and semaphore rows: f under lockUnlock (or `await locked(f)`) until GO=2; { ops }. */
async function loop(t, data) {
  const { api, i32 } = t;
  // (semaphore-large-wait: each holder checks the permits held.)
  const f = t.check ? () => t.check.use(1) : t.inc;
  let ops = 0;
  if (data.async) {
    // Node's native Atomics.waitAsync (the post's and multithreading's
    // async lock) and a pending Web Locks request do not keep a thread
    // alive (nodejs/node#61941): an idle timer does, for every
    // implementation alike.
    const stop = h.keepAlive();
    while (Atomics.load(i32, GO) === 1) {
      await api.locked(f);
      ops++;
    }
    stop();
  } else {
    while (Atomics.load(i32, GO) === 1) {
      api.lockUnlock(f);
      ops++;
    }
  }
  return { ops };
}

/**
 * rwlock rows: every 10th operation a write (none where the main thread
 * writes), the others reads, until GO=2; what it did and how many of its
 * reads saw a write under way: { ops, writes, torn }.
 */
async function rwLoop(t, data) {
  const { api, i32, pair } = t;
  const writer = !t.c.mainWrites;
  let ops = 0;
  let writes = 0;
  if (data.async) {
    const stop = h.keepAlive(); // as in loop
    while (Atomics.load(i32, GO) === 1) {
      if (ops % 10 === 9 && writer) {
        await api.writeLocked(pair.write);
        writes++;
      } else {
        await api.locked(pair.read);
      }
      ops++;
    }
    stop();
  } else {
    while (Atomics.load(i32, GO) === 1) {
      if (ops % 10 === 9 && writer) {
        api.writeUnlock(pair.write);
        writes++;
      } else {
        api.lockUnlock(pair.read);
      }
      ops++;
    }
  }
  return { ops, writes, torn: pair.torn() };
}

/**
 * Barrier rows: phases until LAST (set by the main thread once its time is
 * up, a phase or two ahead of worker 0, so that every worker stops after
 * the same phase); worker 0 counts them in PHASE. The phases passed.
 */
function barrierParty(t, data) {
  const { api, i32 } = t;
  let phase = 0;
  while (phase < Atomics.load(i32, LAST)) {
    api.arrive();
    phase++;
    if (data.w === 0) Atomics.store(i32, PHASE, phase);
  }
  return phase;
}

/** Condition rows: the responder (its answers) or the blocking initiator ({ trips, ms }). */
function pingPongEnd(t, data) {
  const { api, i32 } = t;
  if (data.role === 'responder') return api.conditionBlocking((wait, notify) => respond(i32, wait, notify));
  return api.conditionBlocking((wait, notify) => pingPong(i32, data.ms, wait, notify));
}

// The condition ping-pong, holding the lock throughout except inside the
// waits. The initiator waits for TURN 0, counts a round trip, hands TURN to
// the responder and notifies; after `ms` it sets STOP instead. The
// responder answers each TURN 1 and counts; the two counts must agree.
function pingPong(i32, ms, wait, notify) {
  const end = performance.now() + ms;
  const start = performance.now();
  let trips = 0;
  for (;;) {
    while (i32[TURN] !== 0) wait();
    if (performance.now() >= end) break;
    i32[TURN] = 1;
    notify();
    trips++;
  }
  const elapsed = performance.now() - start;
  i32[STOP] = 1;
  notify();
  return { trips, ms: elapsed };
}

// pingPong with an awaited wait: written twice, as one function would put
// an await (a microtask per wait) into the blocking initiator's timed loop.
async function pingPongAsync(i32, ms, waitAsync, notify) {
  const end = performance.now() + ms;
  const start = performance.now();
  let trips = 0;
  for (;;) {
    while (i32[TURN] !== 0) await waitAsync();
    if (performance.now() >= end) break;
    i32[TURN] = 1;
    notify();
    trips++;
  }
  const elapsed = performance.now() - start;
  i32[STOP] = 1;
  notify();
  return { trips, ms: elapsed };
}

function respond(i32, wait, notify) {
  let answered = 0;
  for (;;) {
    while (i32[TURN] !== 1 && i32[STOP] === 0) wait();
    if (i32[STOP] !== 0) return answered;
    i32[TURN] = 0;
    answered++;
    notify();
  }
}

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

/** One case, one implementation, in this (fresh) process: its result, or `{ impl, unsupported }`. */
async function runCase(caseName, impl, ms) {
  const c = caseNamed(caseName);
  const stop = h.keepAlive(); // as in the workers
  try {
    const shared = sharedState(impl, c.permits || 1, c.parties || 0);
    const api = await implementation(impl, c.form, shared);
    if (api.unsupported) return { impl, unsupported: api.unsupported };
    return await c.main(context(c, impl, shared, api, ms));
  } finally {
    stop();
  }
}

/** A worker of a case: builds its form, posts 'ready', waits for GO, then posts what its body returns. */
async function workerMain() {
  const { impl, shared, caseName, ms } = workerData;
  const c = caseNamed(caseName);
  const api = await implementation(impl, c.form, shared);
  const t = context(c, impl, shared, api, ms);
  parentPort.postMessage('ready');
  while (Atomics.load(t.i32, GO) === 0) Atomics.wait(t.i32, GO, 0);
  parentPort.postMessage(await c.worker(t, workerData));
}

module.exports = { ENTRY, CASES, CASE_NAMES, caseNamed, runCase, workerMain };
