'use strict';
// `node benchmark/run.js --instructions`: CPU instructions per operation,
// counted by valgrind's callgrind, for the package ("addon") and this
// Node's built-in Atomics ("native"), in the same run. Wall-clock figures
// on a shared machine move 2-3x between runs; instruction counts repeat to
// ~0.1%.
//
// Method, per case and implementation: run the case program
// (benchmark/instructions/<case>.js) under
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null --dump-instr=no
//     node --single-threaded <case> --impl <impl> --ops N
// and again with --ops 0 (same program, same set-up and warm-up), read the
// "Collected :" total valgrind prints, subtract, divide by N. The whole
// process is counted, every thread (callgrind runs them one at a time; for
// the two cases with threads, --separate-threads=yes also gives the main
// thread's part, and the case reports how its waits went);
// --single-threaded turns off V8's background compiler and GC threads, so
// that their work is not scheduled differently from run to run. Each
// measurement is made twice (--reps) to show how well it repeats. One
// valgrind at a time.
//
// `--wall`: the same programs without valgrind, for the wall-clock figure
// that goes beside each count: each prints the nanoseconds its measured
// part took (benchmark/lib/ops.js `timed`), with --ops N × WALL_SCALE (the
// counts' N runs for a few seconds under valgrind, ~50× slower). Rounds
// alternate addon and native, each a fresh process; the ratio is the
// median of the per-round ratios (each round's two runs back to back), so
// that load that shifts over minutes cancels out.

const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const d = require('./driver');

// id: the row; file: the program in benchmark/instructions/; ops: N, chosen
// so that the measured part takes a few seconds under valgrind (start-up
// alone takes ~8 s and ~600 million instructions), larger for the two cases
// with threads, whose totals vary by a few million instructions from run to
// run (how the threads interleave); param: the case's --param; wall:
// 'only' for a wall-clock row with no count of its own (another part of a
// program that has one), reading the JSON line's field `metric` instead of
// `ns`; v8: node flags; valgrind: valgrind flags.
//
// The two round trips run with valgrind's --fair-sched=yes and V8's
// --no-memory-reducer. Valgrind runs one thread at a time; by default the
// next to run is whichever the kernel wakes first, and the addon's spin
// yields (sched_yield) handed the run to the partner mid-spin, so how often
// main's waitAsync went pending changed from run to run (a quarter to all
// of the round trips), and with it the count: ping-pong moved between
// ~11,000 and ~23,000 for the addon. In turn (fair-sched) the partner
// answers while the waiter waits, as on two cores, and the addon's three
// runs agreed to 3.5 % (on a quiet machine: beside other work, one run's
// main found the answer already there in 70 % of round trips; check each
// run's paths). The memory reducer's wall-clock GCs cost ~2,900 per round
// trip in the runs they landed in.
const CASES = [
  { id: 'notify-idle', file: 'notify-idle', ops: 200000, what: 'notify, nobody waiting' },
  { id: 'wait-async-settle', file: 'wait-async-settle', ops: 10000, what: 'waitAsync pending → notify → await, per waiter' },
  { id: 'lock-uncontended', file: 'lock-uncontended', ops: 50000, what: 'await executeLocked(f), uncontended (native: the V8 post\'s lock)' },
  { id: 'semaphore-uncontended', file: 'semaphore-uncontended', ops: 200000, what: 'acquireSync(1); f(); release(1), uncontended (native: one written by hand)' },
  { id: 'rwlock-uncontended', file: 'rwlock-uncontended', ops: 200000, what: 'readSync(); f(); releaseRead(), uncontended (native: one written by hand)' },
  // A take that waits: in one thread (repeats to ~0.01 %), and handed
  // between two, which moves by tens of percent with how the threads
  // interleave (three runs: 66,860 / 69,573 / 79,659 for the addon, 45,970
  // / 37,397 / 29,663 native; the worker's lock() found main holding the
  // lock in 4,934, 10 and 168 of 5,000 rounds): read it with its paths.
  // (--no-memory-reducer: its wall-clock GCs moved the count by up to 3 %
  // between runs on a busy machine; off, two runs agree to ~0.01 %.)
  { id: 'lock-contended-same-thread', file: 'lock-contended-same-thread', ops: 20000, v8: ['--no-memory-reducer'], what: 'await executeLocked(f) queued behind another instance\'s hold, same thread (native: the V8 post\'s lock)' },
  { id: 'lock-contended', file: 'lock-contended', ops: 5000, threads: true, valgrind: ['--fair-sched=yes'], v8: ['--no-memory-reducer'], what: 'main\'s await executeLocked(f) ⇄ a worker\'s lock(), main\'s take always waits, per round (native: the V8 post\'s lock)' },
  { id: 'ping-pong', file: 'ping-pong', ops: 10000, threads: true, valgrind: ['--fair-sched=yes'], v8: ['--no-memory-reducer'], what: 'main waitAsync ⇄ worker wait, per round trip' },
  { id: 'worker-ping-pong', file: 'worker-ping-pong', ops: 25000, threads: true, valgrind: ['--fair-sched=yes'], v8: ['--no-memory-reducer'], what: 'worker wait ⇄ worker wait, per round trip' },
  { id: 'many-elements', file: 'many-elements', ops: 20000, what: '1,000 elements, one waiter each: notify + settle, per waiter' },
  // A worker notifies the main thread's K waiters, one element each (a
  // pool's jobs): per notify until settled, both threads.
  { id: 'cross-thread-1k', file: 'cross-thread-notify', ops: 20000, param: 1000, threads: true, what: 'worker notifies 1,000 main-thread waiters on 1,000 elements, per notify until settled' },
  { id: 'cross-thread-10k', file: 'cross-thread-notify', ops: 20000, param: 10000, threads: true, what: '… 10,000 waiters on 10,000 elements' },
  { id: 'cross-thread-100k', file: 'cross-thread-notify', ops: 200000, param: 100000, threads: true, what: '… 100,000 waiters on 100,000 elements' },
  // The same runs' other figure: the worker's notify calls alone.
  { id: 'cross-thread-notify-1k', file: 'cross-thread-notify', ops: 20000, param: 1000, wall: 'only', metric: 'notifyNs', what: 'the worker\'s notify call alone, 1,000 elements' },
  { id: 'cross-thread-notify-10k', file: 'cross-thread-notify', ops: 20000, param: 10000, wall: 'only', metric: 'notifyNs', what: '… 10,000 elements' },
  { id: 'cross-thread-notify-100k', file: 'cross-thread-notify', ops: 200000, param: 100000, wall: 'only', metric: 'notifyNs', what: '… 100,000 elements' },
  // And the main thread's waitAsync calls that made the waits.
  { id: 'cross-thread-create-1k', file: 'cross-thread-notify', ops: 20000, param: 1000, wall: 'only', metric: 'createNs', what: 'the main thread\'s waitAsync, pending on an element of its own, 1,000 elements' },
  { id: 'cross-thread-create-10k', file: 'cross-thread-notify', ops: 20000, param: 10000, wall: 'only', metric: 'createNs', what: '… 10,000 elements' },
  { id: 'cross-thread-create-100k', file: 'cross-thread-notify', ops: 200000, param: 100000, wall: 'only', metric: 'createNs', what: '… 100,000 elements' },
  // Fan-out: a worker's one notify wakes K main-thread waiters on one
  // element; per waiter until the last settled.
  { id: 'fan-out-1k', file: 'fan-out', ops: 20000, param: 1000, threads: true, what: 'worker\'s one notify wakes 1,000 main-thread waiters on one element, per waiter until settled' },
  { id: 'fan-out-10k', file: 'fan-out', ops: 20000, param: 10000, threads: true, what: '… 10,000 waiters on one element' },
  { id: 'fan-out-100k', file: 'fan-out', ops: 200000, param: 100000, threads: true, what: '… 100,000 waiters on one element' },
  { id: 'wait-not-equal', file: 'wait-not-equal', ops: 200000, what: 'sync wait whose value differs ("not-equal"), per call' },
  { id: 'notify-growth-0', file: 'notify-growth', ops: 200000, param: 0, what: 'notify, nobody waiting; 0 waiters pending elsewhere', v8: ['--expose-gc'] },
  { id: 'notify-growth-10k', file: 'notify-growth', ops: 200000, param: 10000, what: '… 10,000 waiters pending on other elements', v8: ['--expose-gc'] },
  { id: 'notify-growth-100k', file: 'notify-growth', ops: 200000, param: 100000, what: '… 100,000 waiters pending on other elements', v8: ['--expose-gc'] },
  // V8's memory reducer starts GCs on a wall-clock timer, which under
  // valgrind fires at different points of this long run: it moved the
  // total of --ops 0 by ~120 million instructions between runs (the row
  // once came out negative); off, two runs agreed to ~5,000.
  { id: 'notify-growth-1m', file: 'notify-growth', ops: 200000, param: 1000000, what: '… 1,000,000 waiters pending on other elements', v8: ['--no-memory-reducer', '--expose-gc'] },
];
const IMPLS = ['addon', 'native'];
const DEFAULT_REPS = 2;
const DEFAULT_WALL_ROUNDS = 9;
const WALL_SCALE = 5;
const RUN_TIMEOUT_MS = 20 * 60 * 1000;

function usage(message) {
  d.usageExit(
    'usage: node benchmark/run.js --instructions [--reps N] [--case a,b] [--merge] [--node PATH] [--no-write]\n' +
      `  --reps N     measurements per case and implementation (default ${DEFAULT_REPS})\n` +
      `  --case LIST  only these cases (${CASES.map((c) => c.id).join(', ')}); does not write results\n` +
      '  --merge      with --case: replace these rows in the results files, keep the others\n' +
      '  --node PATH  run the cases under another Node binary (default: this one)\n' +
      '  --no-write   print the table only, leave benchmark/results-instructions.{md,json} alone\n' +
      `  --wall       wall clock instead: the same programs without valgrind, N × ${WALL_SCALE}, --rounds N\n` +
      `               (default ${DEFAULT_WALL_ROUNDS}) alternating; writes benchmark/results-wall.{md,json}`,
    message
  );
}

function parseArgs(argv) {
  const options = { reps: DEFAULT_REPS, cases: CASES, node: process.execPath, write: true, merge: false, wall: false, rounds: DEFAULT_WALL_ROUNDS };
  d.parseArgs(argv, options, usage, {
    '--instructions': () => {}, // (how run.js got here)
    '--wall': () => (options.wall = true),
    '--rounds': (next) => (options.rounds = d.positiveInt(next(), '--rounds', usage)),
    '--reps': (next) => (options.reps = d.positiveInt(next(), '--reps', usage)),
    '--case': (next) => {
      const ids = next().split(',');
      const unknown = ids.filter((id) => !CASES.some((c) => c.id === id));
      if (unknown.length) usage(`unknown case: ${unknown.join(', ')}`);
      options.cases = CASES.filter((c) => ids.includes(c.id));
      options.write = false;
    },
    '--merge': () => (options.merge = true),
  });
  if (options.merge && options.cases !== CASES) options.write = true;
  return options;
}

/**
 * The V8 flags that make two runs of one program count the same: one
 * thread (where this Node has the flag), and fixed hash and random seeds
 * (a random hash seed alone moved the total of `--ops 0` by ~5 million
 * instructions, ~1 %, from run to run; fixed, the runs agree to ~10,000).
 */
function v8Flags(node) {
  const v8 = spawnSync(node, ['--v8-options'], { encoding: 'utf8' }).stdout || '';
  const has = (flag) => new RegExp(`^\\s*${flag}\\b`, 'm').test(v8);
  return ['--single-threaded', '--hash-seed=1', '--random-seed=1'].filter((f) => has(f.split('=')[0]));
}

/**
 * Runs one case program under callgrind; returns its instruction total,
 * and for a case with `threads`, the main thread's part and the case's
 * `paths`.
 */
function count(node, flags, c, impl, ops) {
  const file = path.join(__dirname, '..', 'instructions', c.file + '.js');
  const args = ['--impl', impl, '--ops', String(ops), '--param', String(c.param || 0)];
  const run = callgrind(node, [...flags, ...(c.v8 || [])], file, args, { threads: c.threads, valgrind: c.valgrind });
  if (run.failed || run.main === null) {
    throw new Error(`${c.id} --impl ${impl} --ops ${ops}: ${run.failed || 'no main-thread total'}`);
  }
  if (run.result.unsupported) return { unsupported: run.result.unsupported, seconds: run.seconds };
  return { instructions: run.instructions, main: run.main, paths: run.result.paths, seconds: run.seconds };
}

/**
 * Runs `node <nodeFlags> <file> <args>` under callgrind (as this file's head says;
 * `options.valgrind`: more valgrind flags; `options.threads`: count each
 * thread apart too, `--separate-threads=yes`). Returns the instruction
 * total of the whole process (`instructions`), the main thread's
 * (`main`: undefined without `threads`, null if callgrind wrote none), the
 * program's JSON line (`result`), the `seconds` it took, and `failed`: why
 * it failed (exit status, the program's stderr and the end of valgrind's
 * log), or null. Also used by lib/cold.js for whole programs.
 */
function callgrind(node, nodeFlags, file, args, options = {}) {
  const log = path.join(os.tmpdir(), `instructions-${process.pid}.log`);
  // Per-thread output files (<prefix>-01 is the main thread), read and
  // removed below; otherwise no output file at all.
  const prefix = path.join(os.tmpdir(), `instructions-${process.pid}.cg`);
  const valgrindArgs = [
    '--tool=callgrind',
    ...(options.threads ? ['--separate-threads=yes', `--callgrind-out-file=${prefix}`] : ['--callgrind-out-file=/dev/null']),
    '--dump-instr=no',
    ...(options.valgrind || []),
    `--log-file=${log}`,
    node,
    ...nodeFlags,
    file,
    ...args,
  ];
  const started = Date.now();
  const { child, result, why } = d.runJson('valgrind', valgrindArgs, { timeout: RUN_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
  const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
  fs.rmSync(log, { force: true });
  const threads = options.threads ? threadTotals(prefix) : null;
  const seconds = (Date.now() - started) / 1000;
  const collected = /Collected : (\d+)/.exec(text);
  const main = threads === null ? undefined : threads.get('01');
  const failed = child.status !== 0 || !result || !collected ? `${why}\n${child.stderr}\n${text.slice(-2000)}` : null;
  return { instructions: collected ? Number(collected[1]) : null, main, result, seconds, failed };
}

/**
 * The instruction total of each thread in callgrind's per-thread files
 * `<prefix>-NN` (thread number → total), which it removes; the main
 * thread's is null if its file is missing.
 */
function threadTotals(prefix) {
  const dir = path.dirname(prefix);
  const base = path.basename(prefix) + '-';
  const totals = new Map([['01', null]]);
  for (const name of fs.readdirSync(dir)) {
    if (!name.startsWith(base)) continue;
    const full = path.join(dir, name);
    const summary = /^summary: (\d+)$/m.exec(fs.readFileSync(full, 'utf8'));
    fs.rmSync(full, { force: true });
    if (summary) totals.set(name.slice(base.length), Number(summary[1]));
  }
  return totals;
}

/** Every repetition of one case: instructions per op, by implementation. */
function measure(node, flags, c, reps) {
  const row = { id: c.id, what: c.what, ops: c.ops, param: c.param || 0, addon: [], native: [], unsupported: {} };
  for (let rep = 0; rep < reps; rep++) {
    const order = rep % 2 === 0 ? IMPLS : IMPLS.slice().reverse();
    for (const impl of order) {
      const full = count(node, flags, c, impl, c.ops);
      if (full.unsupported) {
        row.unsupported[impl] = full.unsupported;
        continue;
      }
      const empty = count(node, flags, c, impl, 0);
      const perOp = (full.instructions - empty.instructions) / c.ops;
      const run = { perOp, full: full.instructions, empty: empty.instructions };
      if (c.threads) {
        // The main thread's part of perOp, and how the measured waits went.
        run.mainPerOp = (full.main - empty.main) / c.ops;
        run.paths = full.paths;
      }
      row[impl].push(run);
      process.stderr.write(
        `  ${c.id} ${impl} rep ${rep + 1}/${reps}: ${perOp.toFixed(1)} instr/op ` +
          `(${full.instructions} - ${empty.instructions}; ${full.seconds.toFixed(0)} s + ${empty.seconds.toFixed(0)} s)` +
          (c.threads ? `; main thread ${run.mainPerOp.toFixed(1)}; ${fmtPaths(run.paths)}` : '') +
          '\n'
      );
    }
  }
  const mean = (runs) => (runs.length ? runs.reduce((s, r) => s + r.perOp, 0) / runs.length : null);
  // Spread: (max - min) / mean of the repetitions, in percent.
  const spread = (runs) => {
    if (runs.length < 2) return null;
    const v = runs.map((r) => r.perOp);
    return ((Math.max(...v) - Math.min(...v)) / Math.abs(mean(runs))) * 100;
  };
  row.addonMean = mean(row.addon);
  row.nativeMean = mean(row.native);
  row.addonSpread = spread(row.addon);
  row.nativeSpread = spread(row.native);
  row.ratio = row.addonMean !== null && row.nativeMean ? row.addonMean / row.nativeMean : null;
  return row;
}

/** A case's `paths` as `name count, …`. */
function fmtPaths(paths) {
  if (!paths) return 'no paths';
  return Object.keys(paths).map((name) => `${name} ${paths[name]}`).join(', ');
}

function fmtInstr(value) {
  if (value === null) return 'n/a';
  return (Math.round(value) || 0).toLocaleString('en-US'); // (never "-0")
}

function fmtSpread(value) {
  return value === null ? '—' : `${value.toFixed(2)} %`;
}

function tables(rows) {
  const main = d.markdownTable(
    ['case', 'what', 'N', 'addon instr/op', 'native instr/op', 'ratio'],
    rows.map((r) => [
      r.id,
      r.what,
      r.ops.toLocaleString('en-US'),
      r.addonMean === null ? (r.error ? 'error' : 'n/a') : fmtInstr(r.addonMean),
      r.nativeMean === null ? (r.unsupported.native ? 'n/a' : 'error') : fmtInstr(r.nativeMean),
      r.ratio === null ? '—' : r.ratio.toFixed(2),
    ]),
    [false, false, true, true, true, true]
  );
  const runs = (list) => (list.length ? list.map((x) => fmtInstr(x.perOp)).join(' / ') : 'n/a');
  const spread = d.markdownTable(
    ['case', 'addon, each run', 'spread', 'native, each run', 'spread'],
    rows.map((r) => [r.id, runs(r.addon), fmtSpread(r.addonSpread), runs(r.native), fmtSpread(r.nativeSpread)]),
    [false, true, true, true, true]
  );
  // The rows with threads, run by run: the main thread's part, and how the
  // measured waits went (docs/performance.md: what moves these counts).
  const threaded = rows.filter((r) => r.addon.concat(r.native).some((x) => x.mainPerOp !== undefined));
  const split = (x) => `${fmtInstr(x.perOp)} = ${fmtInstr(x.mainPerOp)} + ${fmtInstr(x.perOp - x.mainPerOp)}`;
  const perRun = threaded.length
    ? d.markdownTable(
        ['case', 'impl', 'instr/op = main thread + others', 'measured waits'],
        threaded.flatMap((r) =>
          IMPLS.flatMap((impl) => r[impl].filter((x) => x.mainPerOp !== undefined).map((x) => [r.id, impl, split(x), fmtPaths(x.paths)]))
        ),
        [false, false, true, false]
      )
    : null;
  return { main, spread, perRun };
}

/** The commands, the set-up, the table and the spread of every measurement, as markdown. */
function report(json) {
  const commands = Array.from(new Set(json.rows.map((r) => r.command)));
  // The builds measured, as the .md names them (the rows keep their commit).
  const builds = Array.from(new Set(Array.from(new Set(json.rows.map((r) => r.core))).map(d.buildTextAt)));
  const dates = json.rows.map((r) => r.date).sort();
  const reps = Array.from(new Set(json.rows.map((r) => r.reps)));
  const { main: table, spread, perRun } = tables(json.rows);
  const about =
    `Node ${json.node} (V8 ${json.v8}, ${json.arch}), \`${json.flags.join(' ')}\`, under ${json.valgrind} ` +
    '(callgrind, `--callgrind-out-file=/dev/null --dump-instr=no`; the rows with threads `--separate-threads=yes`); ' +
    `${builds.join(' and ')}; ` +
    `${dates[0]}${dates.length && dates[dates.length - 1] !== dates[0] ? ` to ${dates[dates.length - 1]}` : ''}. ` +
    'instr/op = (instructions with N operations − instructions with 0) / N, the whole process (every thread), ' +
    `mean of ${reps.join(' or ')} measurements; ratio = addon / native (lower is better).`;
  return (
    `Command${commands.length > 1 ? 's' : ''}: ${commands.map((c) => `\`${c}\``).join(', then ')}\n\n${about}\n\n${table}\n\n` +
    'Each measurement (instructions per operation, one per run) and spread = (max − min) / mean:\n\n' +
    `${spread}` +
    (perRun
      ? '\n\nThe rows with threads, each run: the main thread\'s part (callgrind `--separate-threads=yes`), and how ' +
        'the waits of the measured part went (main: answered before it looked, `waitAsync` pending, `waitAsync` ' +
        '"not-equal"; workers: `wait` slept, `wait` "not-equal"):\n\n' +
        perRun
      : '')
  );
}

/**
 * Nanoseconds per measured op of `c` in round `round`: its `metric` field
 * (`ns` by default) of one run without valgrind. Rows that read other
 * fields of the same program (same file, ops and param) share that run,
 * through `runs`, so that their figures come from the same runs.
 */
function time(node, c, impl, round, runs) {
  const key = [c.file, c.ops, c.param || 0, (c.v8 || []).join(' '), impl, round].join('|');
  if (!runs.has(key)) runs.set(key, runOnce(node, c, impl));
  const result = runs.get(key);
  return result === null ? null : result[c.metric || 'ns'] / (c.ops * WALL_SCALE);
}

/** One run of a case's program without valgrind: its JSON line, or null if unsupported. */
function runOnce(node, c, impl) {
  const file = path.join(__dirname, '..', 'instructions', c.file + '.js');
  const ops = c.ops * WALL_SCALE;
  const { child, result, why } = d.runJson(node, [...(c.v8 || []), file, '--impl', impl, '--ops', String(ops), '--param', String(c.param || 0)],
    { timeout: RUN_TIMEOUT_MS });
  if (child.status !== 0 || !result) throw new Error(`${c.id} --impl ${impl}: ${why}\n${child.stderr}`);
  if (result.unsupported) return null;
  return result;
}

const median = (values) => {
  const sorted = values.slice().sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

function fmtNs(ns) {
  if (ns === null) return 'n/a';
  return ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(0)} ns`;
}

/** `--wall`: every case, --rounds rounds, addon and native alternating. */
function mainWall(options, argv) {
  const runtime = d.runtimeInfo(options.node);
  const command = d.commandLine('benchmark/run.js');
  const loadBefore = d.load();
  const started = Date.now();
  const runs = new Map(); // programs' JSON lines, by case program, impl and round
  const rows = options.cases.map((c) => {
    const perImpl = { addon: [], native: [] };
    const ratios = [];
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? IMPLS : IMPLS.slice().reverse();
      const got = {};
      for (const impl of order) got[impl] = time(options.node, c, impl, round, runs);
      for (const impl of IMPLS) if (got[impl] !== null) perImpl[impl].push(got[impl]);
      if (got.addon !== null && got.native) ratios.push(got.addon / got.native);
      process.stderr.write(`  ${c.id} round ${round + 1}/${options.rounds}: addon ${fmtNs(got.addon)}, native ${fmtNs(got.native)}\n`);
    }
    const m = (list) => (list.length ? median(list) : null);
    return {
      id: c.id, what: c.what, ops: c.ops * WALL_SCALE, param: c.param || 0,
      addon: m(perImpl.addon), native: m(perImpl.native),
      ratio: m(ratios), ratioMin: ratios.length ? Math.min(...ratios) : null, ratioMax: ratios.length ? Math.max(...ratios) : null,
    };
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  const date = d.date();
  const run = {
    command, date, rounds: options.rounds, core: d.measuredBuild().commit || 'unknown',
    load: `${loadBefore} before, ${d.load()} after`, seconds,
  };
  for (const row of rows) row.run = run;
  const about = (r) => `Command: \`${r.command}\`\n\nNode ${runtime.version} (V8 ${runtime.v8}, ${runtime.arch}), no flags, ` +
    `${os.cpus().length} cores; ${d.buildTextAt(r.core)}; ${r.date}; ` +
    `${r.rounds} rounds, each a fresh process per implementation, alternating; per op = median over the rounds of ` +
    `(wall time of the measured part / N); ratio = median of the per-round addon / native (lower is better). ` +
    `1-minute load average ${r.load}; ${r.seconds} s.`;
  console.log(`\n${about(run)}\n\n${wallTable(rows)}`);
  if (options.write) {
    const file = path.join(__dirname, '..', 'results-wall.json');
    let all = rows;
    if (options.merge && fs.existsSync(file)) {
      // Each row, kept or new, with the run that made it (the file's own,
      // for rows of a file written before rows carried theirs).
      all = mergedRows(file, runtime, rows, (r, old) => {
        if (r.run === undefined) {
          r.run = { command: old.command, date: old.date, rounds: old.rounds, core: 'unknown', load: 'not recorded', seconds: '?' };
        }
      });
    }
    const json = { kind: 'wall', node: runtime.version, v8: runtime.v8, arch: runtime.arch, command, date: new Date().toISOString(), rounds: options.rounds, rows: all };
    const byRun = new Map(); // run date and command -> { run, ids }
    for (const row of all) {
      const key = `${row.run.date} ${row.run.command}`;
      if (!byRun.has(key)) byRun.set(key, { run: row.run, ids: [] });
      byRun.get(key).ids.push(row.id);
    }
    const sections = [...byRun.values()].map(({ run: r, ids }) =>
      (byRun.size > 1 ? `Rows ${ids.join(', ')}:\n\n` : '') + about(r));
    d.writeResults('results-wall',
      '# Wall clock of the instruction-count programs\n\n' +
      'Made by `benchmark/run.js --instructions --wall`; see docs/performance.md ("Instruction counts").\n\n' +
      `${sections.join('\n\n')}\n\n${wallTable(all)}\n`, json);
  }
}

/**
 * `--merge`: the rows of the results file `file` (of this Node only), with
 * `rows` in place of those measured now, in CASES order. `complete(row,
 * file's JSON)` fills in what an older file's rows lack.
 */
function mergedRows(file, runtime, rows, complete = () => {}) {
  const old = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (old.node !== runtime.version) throw new Error(`--merge: ${file} is from Node ${old.node}, not ${runtime.version}`);
  for (const r of old.rows) complete(r, old);
  const byId = new Map(old.rows.map((r) => [r.id, r]));
  for (const row of rows) byId.set(row.id, row);
  return CASES.map((c) => byId.get(c.id)).filter(Boolean);
}

/** The wall-clock rows as a markdown table. */
function wallTable(rows) {
  return d.markdownTable(
    ['case', 'what', 'N', 'addon / op', 'native / op', 'ratio', 'ratio, min–max'],
    rows.map((r) => [r.id, r.what, r.ops.toLocaleString('en-US'), fmtNs(r.addon), fmtNs(r.native),
      r.ratio === null ? '—' : r.ratio.toFixed(2),
      r.ratio === null ? '—' : `${r.ratioMin.toFixed(2)}–${r.ratioMax.toFixed(2)}`]),
    [false, false, true, true, true, true, true]
  );
}

function main(argv) {
  const options = parseArgs(argv);
  if (options.wall) return mainWall(options, argv);
  const valgrind = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
  if (valgrind.status !== 0) throw new Error('valgrind not found (Debian: apt-get install valgrind)');
  const runtime = d.runtimeInfo(options.node);
  const flags = v8Flags(options.node);
  const command = d.commandLine('benchmark/run.js');
  if (!flags.includes('--single-threaded')) console.error('this Node has no --single-threaded: V8 threads are counted too');
  console.error(`Node ${runtime.version} (${options.node}) ${flags.join(' ')}, ` +
    `${valgrind.stdout.trim()}, ${options.reps} measurements per case and implementation`);

  const started = Date.now();
  const errors = [];
  const rows = options.cases.filter((c) => c.wall !== 'only').map((c) => {
    try {
      return measure(options.node, flags, c, options.reps);
    } catch (error) {
      // One case failing (a crash under valgrind, a timeout) leaves the rest.
      errors.push(error.message);
      console.error(error.message);
      return { id: c.id, what: c.what, ops: c.ops, param: c.param || 0, addon: [], native: [], unsupported: {},
        error: error.message.split('\n')[0], addonMean: null, nativeMean: null, addonSpread: null, nativeSpread: null, ratio: null };
    }
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  const core = d.measuredBuild().commit;
  const date = d.date();
  for (const row of rows) Object.assign(row, { command, date, reps: options.reps, core });
  let json = {
    kind: 'instructions',
    node: runtime.version,
    v8: runtime.v8,
    arch: runtime.arch,
    flags,
    valgrind: valgrind.stdout.trim(),
    date,
    rows,
  };
  const file = path.join(__dirname, '..', 'results-instructions.json');
  if (options.merge && fs.existsSync(file)) {
    json.rows = mergedRows(file, runtime, rows, (r, old) => {
      // (Rows of a file written before rows carried these: the file's own.)
      for (const key of ['command', 'date', 'reps', 'core']) if (r[key] === undefined) r[key] = old[key];
    });
  }
  console.log(`\n${report(json)}\n(this run: ${seconds} s)`);

  if (options.write) {
    d.writeResults('results-instructions',
      '# Instruction counts\n\n' +
      'Made by `benchmark/run.js --instructions`; see docs/performance.md ("Instruction counts").\n\n' +
      report(json) + '\n', json);
  }
  if (errors.length) process.exitCode = 1;
}

module.exports = { main, CASES, v8Flags, callgrind };
