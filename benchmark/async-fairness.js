'use strict';
// How fairly async tasks share a lock. Three async tasks on the main
// thread loop for --ms: ask for the lock, hold it across one
// `await new Promise((r) => setImmediate(r))`, release, ask again. Each
// task's acquisitions are counted and each acquisition's wait (asking to
// getting, performance.now()) is kept.
//
// Scenarios:
//   one-thread   the three tasks alone, one row per lock flavour:
//                  async-mutex 0.5 `Mutex` (npm, FIFO: the reference)
//                  AsyncLock, `const release = await lock.acquire(); …; release()`
//                  AsyncLock, `await lock.executeLocked(f)`
//                  `new Semaphore(1)`, `await s.runExclusive(f)`
//                  RwLock, `await rw.runExclusive(f)` (the write lock)
//                  the package's async-mutex entry (lib/async-mutex, or the package's
//                  `./async-mutex` export): `Mutex` as async-mutex's, and `Semaphore(1)`
//                  with `const [, release] = await s.acquire()`; "n/a (not built yet)"
//                  while neither loads
//   vs-workers   the same three tasks against two worker_threads, each in a tight
//                blocking loop on the same lock, made with `X.from(posted)` over the
//                instance the main thread posted (AsyncLock: lock(); count++; unlock();
//                Semaphore: acquireSync(); count++; release(); RwLock: writeSync();
//                count++; releaseWrite()). The workers stop when the main thread sets
//                a shared Int32 flag at the deadline, post their counts and are joined.
//                (Rows whose lock lives in one thread only say n/a.)
//
// Every holder adds 1 to a plain (non-atomic) Int32 slot under the lock (the
// tasks read it before their setImmediate and write it after, so that an
// overlap loses an update); each run checks it against all acquisitions
// (mutual exclusion) and a run where they differ fails the whole command.
//
// Per row: each task's acquisitions and its share of the three tasks' (%),
// the largest and smallest share of the run (tasks are alike, so a starved
// task may be task 2 in one round and task 3 in the next: the medians of
// task 1, 2, 3 alone can hide it; these cannot), the wait's p99 and max over
// all tasks (ms), and the max as a number of holds (max ÷ the median hold,
// roughly how many hand-offs the longest wait sat through). vs-workers adds
// each worker's acquisitions and the main thread's share of all.
//
//   node benchmark/async-fairness.js [--ms 500] [--rounds 3] [--scenario one-thread,vs-workers]
//        [--only SUBSTRING] [--json] [--write]
//
// Each row and round runs in a fresh process (this file with --child), the
// row order rotated every round; figures are medians over the rounds. --only
// keeps the rows whose name contains SUBSTRING; --json also prints one JSON
// line with the figures; --write writes benchmark/results-fairness.{md,json}.
// Not part of `npm test`: timings are claims for the results file, never
// limits in tests.

const { isMainThread, workerData, parentPort } = require('worker_threads');
const { performance } = require('perf_hooks');
const d = require('./lib/driver');
const h = require('./lib/harness');

const TASKS = 3;
const WORKERS = 2;
const SCENARIOS = ['one-thread', 'vs-workers'];

// Int32 slots of the run's SharedArrayBuffer, each on its own cache line.
const LOCK = 0; // the lock's slots (a Semaphore takes three, an RwLock two)
const COUNTER = 16; // the non-atomic counter every holder increments
const GO = 32; // vs-workers: 1 once the workers may start
const STOP = 48; // vs-workers: 1 once they must stop
const SLOTS = 64;

function resolves(id) {
  try {
    require.resolve(id);
    return true;
  } catch (_) {
    return false;
  }
}

/**
 * The package's async-mutex entry, or null while there is none. An entry
 * that is there but throws when loaded is an error, not an n/a.
 */
function packageAsyncMutex() {
  for (const id of ['../async-mutex', 'atomics-waitasync/async-mutex']) {
    if (resolves(id)) return require(id);
  }
  return null;
}

const pkg = () => require('..');
const notBuilt = () => (packageAsyncMutex() ? null : 'n/a (not built yet)');

// take(lock, body): asks for the lock, runs the async body holding it, releases.
async function acquireRelease(lock, body) {
  const release = await lock.acquire();
  try {
    await body();
  } finally {
    release();
  }
}

// The workers' blocking loops' step, by the class the worker rebuilds with X.from(posted).
const BLOCKING = {
  AsyncLock(lock, f) {
    lock.lock();
    f();
    lock.unlock();
  },
  Semaphore(semaphore, f) {
    semaphore.acquireSync();
    f();
    semaphore.release();
  },
  RwLock(rw, f) {
    rw.writeSync();
    f();
    rw.releaseWrite();
  },
};

// The rows. make(i32): the main thread's lock (over the run's buffer where it
// can be shared); take: as above; worker: the class of BLOCKING the workers
// use (null: this lock cannot be shared with workers); missing(): why the row
// cannot run here, or null.
const ROWS = [
  {
    name: 'async-mutex 0.5 Mutex (reference)',
    form: '`const release = await m.acquire(); …; release()`',
    missing: () => (resolves('async-mutex') ? null : 'n/a (npm install --no-save --ignore-scripts async-mutex@0.5.0)'),
    make: () => new (require('async-mutex').Mutex)(),
    take: acquireRelease,
    worker: null,
  },
  {
    name: 'AsyncLock acquire()',
    form: '`const release = await lock.acquire(); …; release()`',
    make: (i32) => new (pkg().AsyncLock)(i32, LOCK),
    take: acquireRelease,
    worker: 'AsyncLock',
  },
  {
    name: 'AsyncLock executeLocked(f)',
    form: '`await lock.executeLocked(f)`',
    make: (i32) => new (pkg().AsyncLock)(i32, LOCK),
    take: (lock, body) => lock.executeLocked(body),
    worker: 'AsyncLock',
  },
  {
    name: 'Semaphore(1) runExclusive(f)',
    form: '`await s.runExclusive(f)`',
    make: (i32) => new (pkg().Semaphore)(1, i32, LOCK),
    take: (semaphore, body) => semaphore.runExclusive(body),
    worker: 'Semaphore',
  },
  {
    name: 'RwLock runExclusive(f)',
    form: '`await rw.runExclusive(f)` (the write lock)',
    make: (i32) => new (pkg().RwLock)(i32, LOCK),
    take: (rw, body) => rw.runExclusive(body),
    worker: 'RwLock',
  },
  {
    name: 'atomics-waitasync/async-mutex Mutex',
    form: '`const release = await m.acquire(); …; release()`',
    missing: notBuilt,
    make: () => new (packageAsyncMutex().Mutex)(),
    take: acquireRelease,
    worker: 'AsyncLock', // (its word is an AsyncLock's: the workers take it blocking)
  },
  {
    name: 'atomics-waitasync/async-mutex Semaphore(1)',
    form: '`const [, release] = await s.acquire(); …; release()`',
    missing: notBuilt,
    make: () => new (packageAsyncMutex().Semaphore)(1),
    async take(semaphore, body) {
      const [, release] = await semaphore.acquire();
      try {
        await body();
      } finally {
        release();
      }
    },
    worker: null,
  },
];

/** Why `row` cannot run in `scenario`, or null. */
function rowMissing(row, scenario) {
  const why = row.missing ? row.missing() : null;
  if (why) return why;
  if (scenario === 'vs-workers' && !row.worker) return 'n/a (one thread only)';
  return null;
}

// ---------------------------------------------------------------------------
// A worker (vs-workers): the blocking loop from GO until STOP; posts its count.
// ---------------------------------------------------------------------------

function workerMain() {
  const { kind, posted, sab } = workerData;
  const i32 = new Int32Array(sab);
  const lock = pkg()[kind].from(posted);
  const step = BLOCKING[kind];
  const inc = () => {
    i32[COUNTER] = i32[COUNTER] + 1;
  };
  parentPort.postMessage('ready');
  while (Atomics.load(i32, GO) === 0) Atomics.wait(i32, GO, 0);
  let count = 0;
  while (Atomics.load(i32, STOP) === 0) {
    step(lock, inc);
    count++;
  }
  parentPort.postMessage(count);
}

// ---------------------------------------------------------------------------
// One row of one scenario, in this (fresh) process
// ---------------------------------------------------------------------------

/**
 * One task: until `end`, ask, hold across a setImmediate, release. The
 * counter is read before the hold and written after it, so that anyone
 * else inside the lock meanwhile makes an update go missing.
 */
async function task(row, lock, i32, end, record) {
  while (performance.now() < end) {
    const asked = performance.now();
    let got = 0;
    await row.take(lock, async () => {
      got = performance.now();
      const count = i32[COUNTER];
      await new Promise((resolve) => setImmediate(resolve));
      i32[COUNTER] = count + 1;
      record.holds.push(performance.now() - got);
    });
    record.waits.push(got - asked);
    record.acquisitions++;
  }
}

async function runRow(scenario, row, ms) {
  const sab = new SharedArrayBuffer(SLOTS * 4);
  const i32 = new Int32Array(sab);
  const lock = row.make(i32);
  const workers = [];
  if (scenario === 'vs-workers') {
    for (let w = 0; w < WORKERS; w++) workers.push(h.startWorker(__filename, { kind: row.worker, posted: lock, sab }));
    for (const w of workers) await w.next(); // 'ready'
    Atomics.store(i32, GO, 1);
    Atomics.notify(i32, GO);
  }
  const records = [];
  for (let t = 0; t < TASKS; t++) records.push({ acquisitions: 0, waits: [], holds: [] });
  const start = performance.now();
  const end = start + ms;
  // The workers stop at the deadline; a task still waiting then gets the
  // lock once they have let go, and its wait counts.
  const stopper = setTimeout(() => Atomics.store(i32, STOP, 1), ms);
  await Promise.all(records.map((record) => task(row, lock, i32, end, record)));
  clearTimeout(stopper);
  Atomics.store(i32, STOP, 1);
  const perWorker = [];
  for (const w of workers) perWorker.push(await w.next());
  const exitCodes = [];
  for (const w of workers) exitCodes.push(await w.exited);
  if (exitCodes.some((code) => code !== 0)) throw new Error(`a worker exited with ${exitCodes.join(', ')}`);

  const taskAcquisitions = records.map((r) => r.acquisitions);
  const main = taskAcquisitions.reduce((a, b) => a + b, 0);
  const workerTotal = perWorker.reduce((a, b) => a + b, 0);
  const waits = Float64Array.from([].concat(...records.map((r) => r.waits))).sort();
  const holds = Float64Array.from([].concat(...records.map((r) => r.holds))).sort();
  const shares = taskAcquisitions.map((n) => (main ? (100 * n) / main : 0));
  const holdMedian = h.sortedPercentile(holds, 50);
  const waitMax = waits.length ? waits[waits.length - 1] : null;
  const figures = {};
  taskAcquisitions.forEach((n, t) => (figures[`task${t + 1}`] = n));
  shares.forEach((s, t) => (figures[`share${t + 1}`] = s));
  Object.assign(figures, {
    topShare: Math.max(...shares),
    bottomShare: Math.min(...shares),
    waitP99: h.sortedPercentile(waits, 99),
    waitMax,
    holdMedian,
    holds: holdMedian ? waitMax / holdMedian : null,
  });
  perWorker.forEach((n, w) => (figures[`worker${w + 1}`] = n));
  if (workers.length) figures.mainShareOfAll = (100 * main) / (main + workerTotal);
  const expected = main + workerTotal;
  return { scenario, row: row.name, ms: performance.now() - start, figures, counter: i32[COUNTER], expected,
    lost: expected - i32[COUNTER] };
}

// ---------------------------------------------------------------------------
// Orchestration: rounds × rows, fresh processes, medians
// ---------------------------------------------------------------------------

function runChild(scenario, row, ms) {
  const { child, result, why } = d.runJson(process.execPath, [__filename, '--child', scenario, '--row', row.name, '--ms', String(ms)],
    { timeout: ms * 20 + 30000 });
  // Exit 2 is a run that finished and found mutual exclusion broken: its
  // result says how (lost), and is kept.
  if (!result || (child.status !== 0 && child.status !== 2)) return { error: `${scenario} ${row.name}: ${why}\n${child.stderr}` };
  return result;
}

const ms2 = (v) => (v === null || v === undefined ? '—' : v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toPrecision(2));
const int = (v) => (v === null || v === undefined ? '—' : Math.round(v).toLocaleString('en-US'));
const pct = (v) => (v === null || v === undefined ? '—' : v.toFixed(1));

function tableOf(scenario, rows) {
  const workers = scenario === 'vs-workers';
  const head = ['lock', 'task 1', 'task 2', 'task 3', 'shares %', 'top / bottom share %', 'wait p99 ms', 'wait max ms',
    'max ÷ median hold'];
  if (workers) head.push('worker 1', 'worker 2', 'main % of all');
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const r of rows) {
    let cells;
    if (r.na) {
      cells = [r.name, r.na].concat(head.slice(2).map(() => ''));
    } else if (!r.median) {
      cells = [r.name, 'failed (see below)'].concat(head.slice(2).map(() => ''));
    } else {
      const m = r.median;
      cells = [r.name, int(m.task1), int(m.task2), int(m.task3),
        `${pct(m.share1)} / ${pct(m.share2)} / ${pct(m.share3)}`, `${pct(m.topShare)} / ${pct(m.bottomShare)}`,
        ms2(m.waitP99), ms2(m.waitMax), m.holds === null ? '—' : `${int(m.holds)} (hold ${ms2(m.holdMedian)} ms)`];
      if (workers) cells.push(int(m.worker1), int(m.worker2), pct(m.mainShareOfAll));
    }
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function asyncMutexVersion() {
  try {
    return require('async-mutex/package.json').version;
  } catch (_) {
    return 'not installed';
  }
}

function orchestrate() {
  if (d.flag('--help', '-h')) {
    d.usageExit('usage: node benchmark/async-fairness.js [--ms 500] [--rounds 3] ' +
      `[--scenario ${SCENARIOS.join(',')}] [--only SUBSTRING] [--json] [--write]`);
  }
  const ms = Number(d.arg('ms', 500));
  const rounds = Number(d.arg('rounds', 3));
  if (!(ms > 0) || !(rounds >= 1)) throw new Error('--ms and --rounds take positive numbers');
  const scenarios = d.arg('scenario', null) ? d.arg('scenario').split(',') : SCENARIOS;
  for (const s of scenarios) if (SCENARIOS.indexOf(s) === -1) throw new Error(`unknown scenario ${s}; known: ${SCENARIOS.join(', ')}`);
  const only = d.arg('only', null);
  const rows = only === null ? ROWS : ROWS.filter((row) => row.name.indexOf(only) !== -1);
  if (!rows.length) throw new Error(`no row's name contains ${JSON.stringify(only)}; rows: ${ROWS.map((r) => r.name).join('; ')}`);
  const command = d.commandLine('benchmark/async-fairness.js');
  const machine = d.machine();
  const loadBefore = d.load();
  const started = Date.now();
  const errors = [];
  const violations = [];
  const results = {};
  for (const scenario of scenarios) {
    const perRound = rows.map(() => []);
    const na = rows.map((row) => rowMissing(row, scenario));
    for (let r = 0; r < rounds; r++) {
      // Rotate the order each round, so drift on a noisy machine hits all.
      const order = rows.map((_, i) => (i + r) % rows.length);
      for (const i of order) {
        if (na[i]) continue;
        process.stderr.write(`  ${scenario} round ${r + 1}/${rounds} ${rows[i].name}\n`);
        const result = runChild(scenario, rows[i], ms);
        if (result.error) {
          errors.push({ scenario, row: rows[i].name, round: r + 1, message: result.error });
          console.error(result.error);
          continue;
        }
        if (result.lost !== 0) {
          const note = `${scenario}, ${rows[i].name}, round ${r + 1}: mutual exclusion broken, the counter is ` +
            `${result.counter} after ${result.expected} acquisitions`;
          violations.push({ scenario, row: rows[i].name, round: r + 1, counter: result.counter, expected: result.expected, note });
          console.error(`  ${note}`);
        }
        perRound[i].push(result.figures);
      }
    }
    results[scenario] = rows.map((row, i) => {
      if (na[i]) return { name: row.name, form: row.form, na: na[i] };
      if (!perRound[i].length) return { name: row.name, form: row.form, median: null, rounds: [] };
      const m = {};
      for (const key of Object.keys(perRound[i][0])) {
        const values = perRound[i].map((f) => f[key]).filter((v) => v !== null && v !== undefined);
        m[key] = values.length ? h.median(values) : null;
      }
      return { name: row.name, form: row.form, median: m, rounds: perRound[i] };
    });
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  const build = d.measuredBuild();
  const about = `Node ${process.version} (V8 ${process.versions.v8}), ${machine}; ${build.text}; ` +
    `async-mutex ${asyncMutexVersion()}; ${TASKS} async tasks on the main thread, each holding the lock across one ` +
    `setImmediate; ${rounds} round${rounds === 1 ? '' : 's'} × ${ms} ms per row, each in a fresh process, the order rotated every round; ` +
    `figures are medians over the rounds (each column on its own). Whole run ${seconds} s, 1-minute load average ` +
    `${loadBefore} before, ${d.load()} after.`;
  const forms = ROWS.filter((row) => rows.indexOf(row) !== -1).map((row) => `- ${row.name}: ${row.form}`).join('\n');
  const titles = {
    'one-thread': 'One thread: three async tasks, nobody else',
    'vs-workers': `Against workers: the same three tasks, and ${WORKERS} workers in a tight blocking loop on the same lock`,
  };
  let md = `# Async tasks sharing a lock: each task's share\n\nMade by \`benchmark/async-fairness.js\` (see its header).\n\n` +
    `Command: \`${command}\`\n\n${about}\n\nWhat each task runs per acquisition:\n\n${forms}\n\n` +
    'Shares are each task\'s acquisitions over the three tasks\' (33.3 each is even); "top / bottom share" is the largest ' +
    'and smallest task share of a run; waits are from asking to getting, over all three tasks; "max ÷ median hold" is ' +
    'the longest wait in holds of the lock (roughly how many hand-offs it sat through). vs-workers: "main % of all" ' +
    'is the three tasks\' acquisitions over everyone\'s. A task that asks before the deadline keeps waiting after it ' +
    'until it gets the lock (the others stop asking, the workers stop): a starved task\'s 1 is that last acquisition, ' +
    'and its wait the whole run.\n';
  for (const scenario of scenarios) md += `\n## ${titles[scenario]}\n\n${tableOf(scenario, results[scenario])}\n`;
  if (violations.length) md += `\nMutual exclusion broken:\n\n${violations.map((v) => `- ${v.note}`).join('\n')}\n`;
  if (errors.length) {
    md += `\nRuns that failed (their round has no figures):\n\n` +
      `${errors.map((e) => `- ${e.message.split('\n')[0]}, round ${e.round}`).join('\n')}\n`;
  }
  console.log(md);
  if (d.flag('--write')) {
    d.writeResults('results-fairness', md, {
      kind: 'async-fairness', command, date: d.date(), node: process.version,
      v8: process.versions.v8, machine, core: build.core, asyncMutex: asyncMutexVersion(), rounds, ms, tasks: TASKS,
      workers: WORKERS, scenarios: results, violations, errors,
    });
  }
  if (d.flag('--json')) {
    const brief = {};
    for (const s of scenarios) brief[s] = results[s].map((r) => ({ name: r.name, na: r.na, median: r.median }));
    console.log(JSON.stringify({ case: 'async-fairness', node: process.version, rounds, ms, scenarios: brief,
      violations: violations.length, errors: errors.length }));
  }
  if (violations.length || errors.length) process.exitCode = 1;
}

// Dispatch last: the tables above are consts.
if (!isMainThread) {
  workerMain();
} else if (d.flag('--child')) {
  const scenario = d.arg('child');
  const row = ROWS.find((r) => r.name === d.arg('row'));
  if (SCENARIOS.indexOf(scenario) === -1 || !row) throw new Error(`--child ${scenario} --row ${d.arg('row')}: no such run`);
  const why = rowMissing(row, scenario);
  if (why) throw new Error(`${row.name}: ${why}`);
  runRow(scenario, row, Number(d.arg('ms', 500))).then(
    (result) => {
      process.stdout.write(JSON.stringify(result) + '\n');
      if (result.lost !== 0) process.exitCode = 2; // mutual exclusion broken
    },
    (error) => {
      console.error(error);
      process.exit(1);
    }
  );
} else {
  orchestrate();
}
