'use strict';
// benchmark/lock-family.js's orchestration: rounds × cases ×
// implementations, each in a fresh process (`lock-family.js --child`), the
// implementations rotated from round to round; then the figures as
// markdown (what benchmark/results-family.md holds) and JSON
// (results-family.json). Not a script: `orchestrate()` is the entry's
// main, which reads the command line described in its header.

const d = require('../lib/driver');
const { median } = require('../lib/harness');
const { ENTRY, CASE_NAMES, caseNamed } = require('./cases');
const { IMPLEMENTATIONS, IMPLS, childOptions, multithreadingVersion } = require('./implementations');

const label = (impl) => IMPLEMENTATIONS[impl].label;

/** One case with one implementation in a fresh process of `node` (`runtime`): its result, or `{ impl, error }`. */
function runChild(node, runtime, caseName, impl, ms) {
  const child = childOptions(impl, runtime);
  if (child.unsupported) return { impl, unsupported: child.unsupported };
  const { result, why, child: run } = d.runJson(node, child.flags.concat([ENTRY, '--child', caseName, '--impl', impl, '--ms', String(ms)]),
    { timeout: ms * 20 + 30000 });
  if (run.status !== 0 || !result) return { impl, error: `${caseName} ${impl} on Node ${runtime.version}: ${why}\n${run.stderr}` };
  return result;
}

/** Every round of every case on one Node: { rows, unsupported, errors }. */
function measureRuntime(node, runtime, cases, impls, rounds, ms) {
  const perRound = {}; // case -> impl -> [result by round]
  const unsupportedWhy = {}; // case -> impl -> reason
  const errors = [];
  const violations = [];
  for (const caseName of cases) {
    perRound[caseName] = {};
    unsupportedWhy[caseName] = {};
    for (const impl of impls) perRound[caseName][impl] = [];
    for (let r = 0; r < rounds; r++) {
      // Rotate the order each round, so drift on a noisy machine hits all.
      const order = impls.slice(r % impls.length).concat(impls.slice(0, r % impls.length));
      for (const impl of order) {
        if (unsupportedWhy[caseName][impl]) continue;
        process.stderr.write(`  Node ${runtime.version} ${caseName} round ${r + 1}/${rounds} ${impl}\n`);
        const result = runChild(node, runtime, caseName, impl, ms);
        if (result.error) {
          errors.push({ caseName, impl, round: r + 1, message: result.error });
          console.error(result.error);
          continue;
        }
        if (result.unsupported) {
          unsupportedWhy[caseName][impl] = result.unsupported;
          continue;
        }
        perRound[caseName][impl][r] = result.metrics;
        if (result.lost || result.torn || result.overcommits) {
          // The rwlock rows count the writes' increments, and the reads that saw a write under way.
          const broken = [];
          if (result.lost) {
            broken.push(result.writes === undefined ? `${result.lost} of ${result.ops} increments lost`
              : `${result.lost} of ${result.writes} writes' increments lost`);
          }
          if (result.torn) broken.push(`${result.torn} of ${result.reads} reads saw a write under way (COUNTER ≠ MIRROR)`);
          if (result.overcommits) broken.push(`${result.overcommits} holders saw more permits held than the semaphore has`);
          const note = `${caseName}, ${label(impl)}, round ${r + 1}: mutual exclusion broken, ${broken.join('; ')}`;
          violations.push({ caseName, impl, round: r + 1, lost: result.lost, ops: result.ops, torn: result.torn, note });
          console.error(`  ${note}`);
        }
      }
    }
  }
  const rows = [];
  for (const caseName of cases) {
    for (const metric of caseNamed(caseName).metrics) {
      const row = { caseName, key: metric.key, label: metric.label, unit: metric.unit, better: metric.better,
        median: {}, rounds: {}, ratio: {}, ratios: {}, na: {} };
      for (const impl of impls) {
        const values = perRound[caseName][impl].map((m) => (m ? m[metric.key] : undefined));
        row.rounds[impl] = values;
        const present = values.filter((v) => v !== undefined);
        row.median[impl] = present.length ? median(present) : null;
        if (unsupportedWhy[caseName][impl]) row.na[impl] = unsupportedWhy[caseName][impl];
      }
      // package ÷ competitor, per round (the processes of a round ran close
      // together), then the median of those.
      for (const impl of impls) {
        if (impl === 'package') continue;
        const ratios = [];
        for (let r = 0; r < rounds; r++) {
          const p = row.rounds.package[r];
          const c = row.rounds[impl][r];
          if (p !== undefined && c !== undefined && c > 0) ratios.push(p / c);
        }
        row.ratios[impl] = ratios;
        row.ratio[impl] = ratios.length ? median(ratios) : null;
      }
      rows.push(row);
    }
  }
  return { rows, unsupported: unsupportedWhy, errors, violations };
}

function fmt(value) {
  if (value === null || value === undefined) return 'n/a';
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 0.01 || abs === 0) return value.toFixed(2);
  return value.toExponential(1);
}

function figuresTable(rows, impls, violations) {
  const broken = (caseName, impl) => violations.some((v) => v.caseName === caseName && v.impl === impl);
  return d.markdownTable(['case', 'unit'].concat(impls.map((i) => label(i))),
    rows.map((row) => [row.label, row.unit].concat(impls.map((i) => fmt(row.median[i]) + (broken(row.caseName, i) ? ' †' : '')))),
    [false, false].concat(impls.map(() => true)));
}

function ratioTable(rows, impls) {
  const others = impls.filter((i) => i !== 'package');
  return d.markdownTable(['case', 'better'].concat(others.map((i) => `÷ ${label(i)}`)),
    rows.map((row) => [row.label, `${row.better}`].concat(others.map((i) => (row.ratio[i] === null ? '—' : `${row.ratio[i].toFixed(2)}×`)))),
    [false, false].concat(others.map(() => true)));
}

const FORMS = `What each implementation runs (f adds 1 to a plain Int32 slot):

| | blocking | async |
|---|---|---|
| atomics-waitasync | \`lock.lock(); f(); lock.unlock()\` | \`await lock.executeLocked(f)\`; condition: \`await cond.waitAsync(lock)\` inside executeLocked, workers \`cond.wait(lock)\` |
| Atomics.Mutex (V8) | \`Atomics.Mutex.lock(m, f)\`; \`Atomics.Condition.wait(c, m)\` | \`await Atomics.Mutex.lockAsync(m, f)\`; \`await Atomics.Condition.waitAsync(c, m)\` inside lockAsync |
| Web Locks | — | \`await locks.request('lock-family', f)\`, in every thread (also in the "blocking" contended rows) |
| multithreading | \`g = m.blockingLock(); f(); g.dispose()\`; \`cv.blockingWait(g)\` | \`g = await m.lock(); f(); g.dispose()\`; \`await cv.wait(g)\` |
| post (native Atomics) | \`lock.lock(); f(); lock.unlock()\` | \`executeLocked(f)\` wrapped in a promise f resolves |

Semaphore rows, a semaphore of 1 permit (so that the counter still checks the permits held):

| | blocking | async |
|---|---|---|
| atomics-waitasync | \`s.acquireSync(1); f(); s.release(1)\` | \`await s.runExclusive(f)\` |
| multithreading | \`g = s.blockingAcquire(1); f(); g.dispose()\` | \`g = await s.acquire(1); f(); g.dispose()\` |
| post (native Atomics) | a semaphore written by hand on native \`Atomics.wait\`/\`notify\` (benchmark/semaphore-native.js) | the same with \`Atomics.waitAsync\` |

RwLock rows (r checks that two plain slots a write updates together agree; w adds 1 to the counter and copies it to the
second slot; contended workers take the write lock around w every 10th operation, a read around r otherwise):

| | blocking | async |
|---|---|---|
| atomics-waitasync | \`rw.readSync(); r(); rw.releaseRead()\`; \`rw.writeSync(); w(); rw.releaseWrite()\` | \`await rw.runShared(r)\`; \`await rw.runExclusive(w)\` |
| Web Locks | — | \`await locks.request('lock-family-rw', { mode: 'shared' }, r)\`; \`mode: 'exclusive'\` for w (also in the "blocking" contended rows) |
| multithreading | \`g = rw.blockingRead(); r(); g.dispose()\`; \`rw.blockingWrite()\` | \`g = await rw.read(); r(); g.dispose()\`; \`await rw.write()\` |
| post (native Atomics) | a reader-writer lock written by hand on native \`Atomics.wait\`/\`notify\` (benchmark/rwlock-native.js) | the same with \`Atomics.waitAsync\` |

Contended rows: the main thread only starts and stops the workers. Fairness: 3 workers in a blocking loop
(Web Locks: async loops) while the main thread awaits the async form in a loop; "main share" is the main
thread's acquisitions over all acquisitions (4 threads: 0.25 would be an even share).`;

// The project's goals, package ÷ competitor.
const GOALS = [
  { caseName: 'blocking', key: 'nsPerOp', impl: 'mutex', max: 1.0, what: 'blocking uncontended, time per op ÷ Atomics.Mutex.lock' },
  { caseName: 'async', key: 'nsPerOp', impl: 'weblocks', max: 0.1, what: 'async uncontended, time per op ÷ Web Locks' },
  { caseName: 'contended-2', key: 'opsPerSec', impl: 'mutex', min: 1.0, what: '2 workers contending, throughput ÷ Atomics.Mutex' },
  { caseName: 'contended-4', key: 'opsPerSec', impl: 'mutex', min: 1.0, what: '4 workers contending, throughput ÷ Atomics.Mutex' },
  { caseName: 'blocking', key: 'nsPerOp', impl: 'multithreading', max: 1 / 1.5, what: 'blocking uncontended, time per op ÷ multithreading' },
  { caseName: 'async', key: 'nsPerOp', impl: 'multithreading', max: 1 / 1.5, what: 'async uncontended, time per op ÷ multithreading' },
  { caseName: 'contended-2', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: '2 workers contending, throughput ÷ multithreading' },
  { caseName: 'contended-4', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: '4 workers contending, throughput ÷ multithreading' },
  { caseName: 'async-contended-2', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: '2 workers contending async, throughput ÷ multithreading' },
  { caseName: 'async-contended-4', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: '4 workers contending async, throughput ÷ multithreading' },
  { caseName: 'condition-main', key: 'tripsPerSec', impl: 'multithreading', min: 1.5, what: 'condition main ↔ worker, round trips ÷ multithreading' },
  { caseName: 'condition-workers', key: 'tripsPerSec', impl: 'multithreading', min: 1.5, what: 'condition worker ↔ worker, round trips ÷ multithreading' },
  { caseName: 'semaphore-blocking', key: 'nsPerOp', impl: 'post', max: 1.0, what: 'semaphore blocking uncontended, time ÷ hand-written native' },
  { caseName: 'semaphore-async', key: 'nsPerOp', impl: 'post', max: 1.0, what: 'semaphore async uncontended, time ÷ hand-written native' },
  { caseName: 'semaphore-contended-2', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: 'semaphore 2 workers contending ÷ multithreading' },
  { caseName: 'semaphore-contended-4', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: 'semaphore 4 workers contending ÷ multithreading' },
  { caseName: 'barrier-2', key: 'phasesPerSec', impl: 'multithreading', min: 1.5, what: 'barrier phase, 2 parties ÷ multithreading' },
  { caseName: 'barrier-4', key: 'phasesPerSec', impl: 'multithreading', min: 1.5, what: 'barrier phase, 4 parties ÷ multithreading' },
  { caseName: 'rwlock-read-blocking', key: 'nsPerOp', impl: 'post', max: 1.0, what: 'rwlock blocking uncontended read, time ÷ hand-written native' },
  { caseName: 'rwlock-read-async', key: 'nsPerOp', impl: 'post', max: 1.0, what: 'rwlock async uncontended read, time ÷ hand-written native' },
  { caseName: 'rwlock-contended-2', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: 'rwlock 2 workers contending ÷ multithreading' },
  { caseName: 'rwlock-contended-4', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: 'rwlock 4 workers contending ÷ multithreading' },
];

function goalRows(rows) {
  return GOALS.map((g) => {
    const row = rows.find((r) => r.caseName === g.caseName && r.key === g.key);
    const ratio = row && row.ratio[g.impl] !== undefined ? row.ratio[g.impl] : null;
    const limit = g.max !== undefined ? `≤ ${g.max.toFixed(2)}` : `≥ ${g.min.toFixed(2)}`;
    const met = ratio === null ? null : g.max !== undefined ? ratio <= g.max : ratio >= g.min;
    return { what: g.what, limit, ratio, met };
  });
}

function goalsTable(goals) {
  return d.markdownTable(['goal (package ÷ competitor)', 'limit', 'measured', ''],
    goals.map((g) => [g.what, g.limit, g.ratio === null ? '—' : g.ratio.toFixed(2), g.met === null ? 'not measured' : g.met ? 'met' : 'MISSED']),
    [false, false, true, false]);
}

const USAGE = 'usage: node benchmark/lock-family.js [--rounds 5] [--ms 1000] [--runtimes node20,node22,node24] ' +
  `[--node PATH] [--case ${CASE_NAMES.join(',')}] [--impl ${IMPLS.join(',')}] [--no-write] [--json]`;

/** The markdown of a whole run: the set-up, then for each Node its tables, n/a reasons, violations and failures. */
function markdown(command, about, impls, results) {
  let md = `# AsyncLock and Condition against the alternatives\n\nMade by \`benchmark/lock-family.js\` (see its header for the cases).\n\n` +
    `Command: \`${command}\`\n\n${about}\n\n${FORMS}\n`;
  for (const r of results) {
    const naLines = [];
    for (const caseName of Object.keys(r.unsupported)) {
      for (const impl of Object.keys(r.unsupported[caseName])) naLines.push(`- ${caseName}, ${label(impl)}: ${r.unsupported[caseName][impl]}`);
    }
    md += `\n## Node ${r.node} (V8 ${r.v8})\n\n1-minute load average ${r.loadBefore} before, ${r.loadAfter} after.\n\n` +
      `${figuresTable(r.rows, impls, r.violations)}\n\nRatios, package ÷ competitor (\`better\` says which way is better for the package):\n\n` +
      `${ratioTable(r.rows, impls)}\n\n${goalsTable(goalRows(r.rows))}\n` +
      (naLines.length ? `\nn/a:\n\n${naLines.join('\n')}\n` : '') +
      (r.violations.length ? `\n† mutual exclusion broken (the non-atomic counter fell short of the lock operations, ` +
        `or an rwlock read saw a write under way):\n\n` +
        `${r.violations.map((v) => `- ${v.note}`).join('\n')}\n` : '') +
      (r.errors.length ? `\nRuns that failed (their round has no figure):\n\n` +
        `${r.errors.map((e) => `- ${e.message.split('\n')[0]}, round ${e.round}`).join('\n')}\n` : '');
  }
  return md;
}

/** The entry's main: reads the command line, measures, prints the markdown, writes the results files. */
function orchestrate() {
  if (d.flag('--help', '-h')) d.usageExit(USAGE);
  const rounds = Number(d.arg('rounds', 5));
  const ms = Number(d.arg('ms', 1000));
  const cases = d.arg('case', null) ? d.arg('case').split(',') : CASE_NAMES;
  const impls = d.arg('impl', null) ? d.arg('impl').split(',') : IMPLS;
  for (const c of cases) if (CASE_NAMES.indexOf(c) === -1) throw new Error(`unknown case ${c}; known: ${CASE_NAMES.join(', ')}`);
  for (const i of impls) if (IMPLS.indexOf(i) === -1) throw new Error(`unknown implementation ${i}; known: ${IMPLS.join(', ')}`);
  if (impls[0] !== 'package') throw new Error('--impl must start with package (the ratios are package ÷ competitor)');
  const write = !d.flag('--no-write') && !d.arg('case', null) && !d.arg('impl', null);
  let nodes;
  if (d.arg('runtimes', null)) {
    const { ensure } = require('../../scripts/runtimes');
    nodes = d.arg('runtimes').split(',').map((name) => ensure(name).path);
  } else {
    nodes = [d.arg('node', process.execPath)];
  }
  const command = d.commandLine('benchmark/lock-family.js');
  const machine = d.machine();
  const started = Date.now();
  const loadBefore = d.load();
  const results = [];
  // A competitor that crashes or loses updates is reported in the results;
  // only the package doing so fails the run.
  let packageFailures = 0;
  for (const node of nodes) {
    const runtime = d.runtimeInfo(node);
    const loadAt = d.load();
    const m = measureRuntime(node, runtime, cases, impls, rounds, ms);
    packageFailures += m.errors.concat(m.violations).filter((e) => e.impl === 'package').length;
    results.push(Object.assign({ node: runtime.version, v8: runtime.v8, loadBefore: loadAt, loadAfter: d.load() }, m));
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  const build = d.measuredBuild();
  const about = `${machine}; ${build.text}; multithreading ${multithreadingVersion()}; ` +
    `${rounds} rounds × ${ms} ms per case and implementation, each in a fresh process, the order rotated every round; ` +
    `figures are medians over the rounds; ratios are package ÷ competitor, the median of the per-round ratios. ` +
    `Atomics.Mutex runs under \`node --harmony-struct\`, the others without flags. Whole run ${seconds} s, ` +
    `1-minute load average ${loadBefore} before, ${d.load()} after.`;
  const md = markdown(command, about, impls, results);
  console.log(md);
  if (write) {
    d.writeResults('results-family', md, {
      kind: 'lock-family', command, date: d.date(), machine,
      core: build.core, multithreading: multithreadingVersion(), rounds, ms,
      runtimes: results.map((r) => ({ node: r.node, v8: r.v8, rows: r.rows, goals: goalRows(r.rows), unsupported: r.unsupported,
        violations: r.violations, errors: r.errors })),
    });
  }
  if (d.flag('--json')) {
    console.log(JSON.stringify({ case: 'lock-family', rounds, ms,
      runtimes: results.map((r) => ({ node: r.node, rows: r.rows.map((row) => ({ caseName: row.caseName, key: row.key, median: row.median, ratio: row.ratio })) })) }));
  }
  if (packageFailures) process.exitCode = 1;
}

module.exports = { orchestrate };
