'use strict';
// `node benchmark/run.js --cold`: what a fresh thread pays, with no
// warm-up anywhere, the package ("package") beside this Node's own
// Atomics ("native") or, for `require`, beside Node's floor. Every other
// results file is warm (measured after a warm-up); this one is not.
//
// Wall clock: each program of benchmark/cold/ runs in a fresh process,
// once per round and row (a worker row in a fresh worker of a fresh
// process), and measures its own first calls with process.hrtime.bigint();
// each figure is the median over the rounds (9 by default). The runs a
// row compares are made back to back, their order reversed every other
// round, so that load that shifts over seconds hits both alike; the
// table's ratio is package median / native median, and the spread table
// gives each row's range and the range of its per-round ratios.
//
// `--cold --instructions` adds whole-program instruction counts (the
// steady measure: wall-clock figures on the shared VM move 2-3× between
// runs): each program under valgrind's callgrind, `node --single-threaded
// --hash-seed=1 --random-seed=1` (as lib/instructions.js runs its cases),
// start-up to exit, minus the empty program (benchmark/cold/require.js
// --entry none: Node's start-up and exit alone). So the package's row is
// what start-up + its require + its first calls add to a bare Node, and
// package − native is what the package costs a cold program over the
// same program on native Atomics.

const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const d = require('./driver');
const { v8Flags, callgrind } = require('./instructions');

const DIR = path.join(__dirname, '..', 'cold');
const DEFAULT_ROUNDS = 9;
const DEFAULT_REPS = 1;
const RUN_TIMEOUT_MS = 60000;

// A run: one program of benchmark/cold/ with its arguments; `threads`: it
// starts a worker (under valgrind: --fair-sched=yes, so the threads run in
// turn as on two cores, not whichever the kernel woke first).
// `fresh`: the staged package's code cache is removed before the run, which
// then loads the package as its first load after install does (compiling
// it, and writing the cache for the loads after).
const req = (entry, where, fresh) => ({ file: 'require.js', args: ['--entry', entry, '--where', where], threads: where !== 'main', fresh });
const prog = (file, impl) => ({ file: `${file}.js`, args: ['--impl', impl], threads: file === 'worker-notify' });
const runKey = (run) => [run.file, ...run.args].join(' ') + (run.fresh ? ' (no code cache yet)' : '');
const FRESH = true;

// Each group's runs are made back to back, in this order in even rounds
// and reversed in odd ones.
const ENTRIES = ['empty', 'package', 'polyfill', 'class', 'checkout', 'builtins', 'perf-hooks'];
const GROUPS = [
  ENTRIES.map((e) => req(e, 'main')).concat([req('package', 'main', FRESH)]),
  ENTRIES.map((e) => req(e, 'worker'))
    .concat([req('package', 'worker-after-main'), req('package', 'worker', FRESH)]),
  ['native', 'addon'].map((i) => prog('worker-notify', i)),
  ['native', 'addon'].map((i) => prog('wait-async', i)),
  ['native', 'addon'].map((i) => prog('first-calls', i)),
  ['native', 'addon'].map((i) => prog('lock', i)),
];

// The wall-clock rows: `native` is the native run or the floor, `package`
// the package's (null for a row that is Node's alone); `field` the JSON
// line's field, in ns.
const REQUIRE_WHAT = {
  empty: 'require of an empty file (Node\'s floor)',
  builtins: 'require(\'worker_threads\') + require(\'util\')',
  'perf-hooks': 'require(\'perf_hooks\')',
  package: 'require(\'<package>\') as published',
  polyfill: 'require(\'<package>/polyfill\') as published',
  class: 'require(\'<package>\').AsyncLock as published: the package and its first class',
  checkout: 'require(\'<repo>\'), the checkout\'s own files and local build',
};
const requireRows = (where, label) => [
  { id: `require-empty-${where}`, what: `${REQUIRE_WHAT.empty}, ${label}`, native: req('empty', where), package: null },
  { id: `require-builtins-${where}`, what: `${REQUIRE_WHAT.builtins}, ${label}`, native: req('builtins', where), package: null },
  { id: `require-perf-hooks-${where}`, what: `${REQUIRE_WHAT['perf-hooks']}, ${label}`, native: req('perf-hooks', where), package: null },
  { id: `require-package-${where}`, what: `${REQUIRE_WHAT.package}, ${label} (floor: the empty file)`, native: req('empty', where), package: req('package', where) },
  {
    id: `require-package-${where}-first`,
    what: `… its first load after install: no code cache yet (it compiles, and writes one), ${label}`,
    native: req('empty', where),
    package: req('package', where, FRESH),
  },
  { id: `require-polyfill-${where}`, what: `${REQUIRE_WHAT.polyfill}, ${label} (floor: the empty file)`, native: req('empty', where), package: req('polyfill', where) },
  { id: `require-class-${where}`, what: `${REQUIRE_WHAT.class}, ${label} (floor: the empty file)`, native: req('empty', where), package: req('class', where) },
  { id: `require-checkout-${where}`, what: `${REQUIRE_WHAT.checkout}, ${label} (floor: the empty file)`, native: req('empty', where), package: req('checkout', where) },
];
const ROWS = [
  ...requireRows('main', 'main thread'),
  ...requireRows('worker', 'in a fresh worker'),
  {
    id: 'require-package-worker-after-main',
    what: `${REQUIRE_WHAT.package}, in a fresh worker, the main thread having required it first`,
    native: req('empty', 'worker'),
    package: req('package', 'worker-after-main'),
  },
  { id: 'worker-notify-call', what: 'a fresh worker\'s first 1,000 notify, each waking a main-thread waiter: per call', native: prog('worker-notify', 'native'), package: prog('worker-notify', 'addon'), field: 'notifyNs' },
  { id: 'worker-notify-first', what: '… its first notify call alone', native: prog('worker-notify', 'native'), package: prog('worker-notify', 'addon'), field: 'firstNs' },
  { id: 'worker-notify-settled', what: '… from its first notify until main saw all 1,000 settle: per waiter', native: prog('worker-notify', 'native'), package: prog('worker-notify', 'addon'), field: 'settledNs' },
  { id: 'wait-async', what: 'main thread\'s first 1,000 waitAsync (pending), per call', native: prog('wait-async', 'native'), package: prog('wait-async', 'addon') },
  { id: 'wait-async-first', what: '… the first call alone', native: prog('wait-async', 'native'), package: prog('wait-async', 'addon'), field: 'firstNs' },
  { id: 'first-calls', what: 'main thread\'s first 1,000 waitAsync + notify, until all settled: per waiter', native: prog('first-calls', 'native'), package: prog('first-calls', 'addon') },
  { id: 'lock', what: 'first 1,000 uncontended await executeLocked(f), per call (native: the V8 post\'s lock)', native: prog('lock', 'native'), package: prog('lock', 'addon') },
];

// The instruction-count rows: the same programs, whole, each minus the
// empty program (BASE). Main-thread require rows, one worker require row,
// and the first-calls programs.
const BASE = req('none', 'main');
const INSTRUCTION_ROWS = [
  { id: 'require-empty-main', what: 'require of an empty file (Node\'s floor), main thread', native: req('empty', 'main'), package: null },
  { id: 'require-builtins-main', what: 'require(\'worker_threads\') + require(\'util\'), main thread', native: req('builtins', 'main'), package: null },
  { id: 'require-perf-hooks-main', what: 'require(\'perf_hooks\'), main thread', native: req('perf-hooks', 'main'), package: null },
  { id: 'require-package-main', what: 'require(\'<package>\') as published, main thread (floor: the empty file)', native: req('empty', 'main'), package: req('package', 'main') },
  { id: 'require-package-main-first', what: '… its first load after install: no code cache yet (it compiles, and writes one)', native: req('empty', 'main'), package: req('package', 'main', FRESH) },
  { id: 'require-polyfill-main', what: 'require(\'<package>/polyfill\') as published, main thread (floor: the empty file)', native: req('empty', 'main'), package: req('polyfill', 'main') },
  { id: 'require-class-main', what: `${REQUIRE_WHAT.class}, main thread (floor: the empty file)`, native: req('empty', 'main'), package: req('class', 'main') },
  { id: 'require-checkout-main', what: 'require(\'<repo>\'), the checkout\'s own files, main thread (floor: the empty file)', native: req('empty', 'main'), package: req('checkout', 'main') },
  { id: 'require-package-worker', what: 'start a worker that requires \'<package>\' (floor: one that requires the empty file)', native: req('empty', 'worker'), package: req('package', 'worker') },
  { id: 'require-package-worker-after-main', what: '… the main thread having required it first (both requires)', native: req('empty', 'worker'), package: req('package', 'worker-after-main') },
  { id: 'first-calls', lessRequire: 'require-package-main', what: 'require + first 1,000 waitAsync + notify + settle, main thread', native: prog('first-calls', 'native'), package: prog('first-calls', 'addon') },
  { id: 'wait-async', lessRequire: 'require-package-main', what: 'require + first 1,000 waitAsync (pending), main thread', native: prog('wait-async', 'native'), package: prog('wait-async', 'addon') },
  { id: 'lock', lessRequire: 'require-package-main', what: 'require + first 1,000 await executeLocked(f) (native: the V8 post\'s lock)', native: prog('lock', 'native'), package: prog('lock', 'addon') },
  { id: 'worker-notify', lessRequire: 'require-package-worker-after-main', what: 'main: require + 1,000 waitAsync; a fresh worker: require + 1,000 notify; all settled', native: prog('worker-notify', 'native'), package: prog('worker-notify', 'addon') },
];

function usage(message) {
  d.usageExit(
    'usage: node benchmark/run.js --cold [--rounds N] [--instructions [--reps N]] [--node PATH] [--no-write] [--json]\n' +
      `  --rounds N      rounds, each program in a fresh process each round (default ${DEFAULT_ROUNDS})\n` +
      '  --instructions  also count whole programs\' instructions under valgrind (a few minutes)\n' +
      `  --reps N        with --instructions: counts per program (default ${DEFAULT_REPS})\n` +
      '  --node PATH     run the programs under another Node binary (default: this one)\n' +
      '  --no-write      print the tables only, leave benchmark/results-cold.md alone\n' +
      '  --json          also write benchmark/results-cold.json',
    message
  );
}

function parseArgs(argv) {
  const options = { rounds: DEFAULT_ROUNDS, reps: DEFAULT_REPS, instructions: false, node: process.execPath, write: true, json: false };
  return d.parseArgs(argv, options, usage, {
    '--cold': () => {}, // (how run.js got here)
    '--rounds': (next) => (options.rounds = d.positiveInt(next(), '--rounds', usage)),
    '--reps': (next) => (options.reps = d.positiveInt(next(), '--reps', usage)),
    '--instructions': () => (options.instructions = true),
    '--json': () => (options.json = true),
  });
}

// The programs require the package from the folder this names (common.js).
const PACKAGE_VARIABLE = 'ATOMICS_WAITASYNC_COLD_PACKAGE';

/**
 * The package as a user installs it, in a temporary folder, removed at
 * exit: scripts/stage.js's copy of this checkout (index.bundle.js the load
 * path in one file, compiled by index.js with its code cache), with the checkout's build as the prebuilt binary of this
 * platform, so that its require finds this platform's folder as an
 * install's does (the libc read from /proc/self/exe on Linux included).
 */
function stagePackage() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atomics-waitasync-cold-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return require('../../scripts/stage').stageWithLocalBuild(dir);
}

/**
 * The staged package's first programs under `flags`, so that the runs
 * measured after find its code caches written, as every run after a
 * program's first does: the lock program on the main thread (the family's
 * cache, written after its first takes, holds what they compiled), then a
 * load and first class in a worker.
 */
function primeCodeCache(node, flags) {
  for (const args of [['lock.js', '--impl', 'addon'], ['require.js', '--entry', 'class', '--where', 'worker']]) {
    const run = spawnSync(node, [...flags, path.join(DIR, args[0]), ...args.slice(1)], {
      encoding: 'utf8',
      timeout: RUN_TIMEOUT_MS,
    });
    if (run.status !== 0) throw new Error(`priming the code cache (${args.join(' ')}) failed: ${run.stderr}`);
  }
}

/** Removes the staged package's code cache of index.bundle.js (scripts/stage.js); lib.bundle.js's stays. */
function removeCodeCache() {
  const dir = path.join(process.env[PACKAGE_VARIABLE], '.code-cache');
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    if (name.startsWith('index-')) fs.rmSync(path.join(dir, name), { force: true });
  }
}

/** One run in a fresh process: its JSON line. */
function runOnce(node, run) {
  if (run.fresh) removeCodeCache();
  const { child, result, why } = d.runJson(node, [path.join(DIR, run.file), ...run.args], { timeout: RUN_TIMEOUT_MS });
  if (child.status !== 0 || !result) throw new Error(`cold/${runKey(run)}: ${why}\n${child.stderr}`);
  if (child.stderr) process.stderr.write(child.stderr);
  return result;
}

/** Every round of every group; each row's values by round, medians, and the per-round ratios. */
function measureWall(node, rounds) {
  const byRound = []; // round -> Map(run key -> JSON line)
  for (let round = 0; round < rounds; round++) {
    const results = new Map();
    for (const group of GROUPS) {
      for (const run of round % 2 === 0 ? group : group.slice().reverse()) results.set(runKey(run), runOnce(node, run));
    }
    byRound.push(results);
    process.stderr.write(`  cold round ${round + 1}/${rounds}\n`);
  }
  return ROWS.map((row) => {
    const field = row.field || 'ns';
    const values = (run) => (run ? byRound.map((results) => results.get(runKey(run))[field]) : []);
    const native = values(row.native);
    const pkg = values(row.package);
    const ratios = row.package ? pkg.map((v, round) => v / native[round]) : [];
    const m = (list) => (list.length ? median(list) : null);
    const nativeMedian = m(native);
    const packageMedian = m(pkg);
    return {
      id: row.id,
      what: row.what,
      native: nativeMedian,
      package: packageMedian,
      ratio: packageMedian === null ? null : packageMedian / nativeMedian,
      ratioMin: ratios.length ? Math.min(...ratios) : null,
      ratioMax: ratios.length ? Math.max(...ratios) : null,
      nativeRounds: native,
      packageRounds: pkg,
    };
  });
}

/** Whole-program instruction counts: each run's total, `reps` times, and the rows (each minus BASE). */
function measureInstructions(node, reps) {
  const flags = v8Flags(node);
  if (!flags.includes('--single-threaded')) console.error('this Node has no --single-threaded: V8 threads are counted too');
  const runs = [BASE];
  for (const row of INSTRUCTION_ROWS) {
    for (const run of [row.native, row.package]) if (run && !runs.some((r) => runKey(r) === runKey(run))) runs.push(run);
  }
  // The package writes its code cache at its first load with these flags
  // (V8 takes a cache only under the flags it was made with): that load
  // is made here, uncounted, as the wall rounds' is in main().
  primeCodeCache(node, flags);
  const totals = new Map(runs.map((run) => [runKey(run), []]));
  for (let rep = 0; rep < reps; rep++) {
    for (const run of rep % 2 === 0 ? runs : runs.slice().reverse()) {
      if (run.fresh) removeCodeCache();
      const counted = callgrind(node, flags, path.join(DIR, run.file), run.args, { valgrind: run.threads ? ['--fair-sched=yes'] : [] });
      if (counted.failed) throw new Error(`cold/${runKey(run)} under callgrind: ${counted.failed}`);
      totals.get(runKey(run)).push(counted.instructions);
      process.stderr.write(`  callgrind ${runKey(run)} rep ${rep + 1}/${reps}: ${counted.instructions} (${counted.seconds.toFixed(0)} s)\n`);
    }
  }
  const mean = (list) => list.reduce((sum, v) => sum + v, 0) / list.length;
  const base = mean(totals.get(runKey(BASE)));
  const above = (run) => (run ? mean(totals.get(runKey(run))) - base : null);
  const rows = INSTRUCTION_ROWS.map((row) => {
    const native = above(row.native);
    const pkg = above(row.package);
    return { id: row.id, what: row.what, native, package: pkg, difference: pkg === null ? null : pkg - native, ratio: pkg === null ? null : pkg / native };
  });
  // The first calls apart from loading the package: a program's package −
  // native less that of the require row that loads it as the program does
  // (`lessRequire`).
  for (const row of rows) {
    const less = INSTRUCTION_ROWS.find((r) => r.id === row.id).lessRequire;
    row.beyondRequire = less ? row.difference - rows.find((r) => r.id === less).difference : null;
  }
  const each = runs.map((run) => ({ program: runKey(run), counts: totals.get(runKey(run)) }));
  return { flags, base, rows, totals: each };
}

const median = (values) => {
  const sorted = values.slice().sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** ns as ns, µs or ms, three significant digits. */
function fmtTime(ns) {
  if (ns === null) return '—';
  const [value, unit] = ns >= 1e6 ? [ns / 1e6, 'ms'] : ns >= 1e3 ? [ns / 1e3, 'µs'] : [ns, 'ns'];
  return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ${unit}`;
}

function fmtInstr(value) {
  return value === null ? '—' : (Math.round(value) || 0).toLocaleString('en-US');
}

const fmtRatio = (value) => (value === null ? '—' : value.toFixed(2));

function wallTables(rows) {
  const table = d.markdownTable(
    ['row', 'what', 'native or floor', 'package', 'ratio'],
    rows.map((r) => [r.id, r.what, fmtTime(r.native), fmtTime(r.package), fmtRatio(r.ratio)]),
    [false, false, true, true, true]
  );
  const range = (list) => (list.length ? `${fmtTime(Math.min(...list))}–${fmtTime(Math.max(...list))}` : '—');
  const spread = d.markdownTable(
    ['row', 'native or floor', 'package', 'ratio per round'],
    rows.map((r) => [r.id, range(r.nativeRounds), range(r.packageRounds),
      r.ratioMin === null ? '—' : `${fmtRatio(r.ratioMin)}–${fmtRatio(r.ratioMax)}`]),
    [false, true, true, true]
  );
  return { table, spread };
}

function instructionTables(counted) {
  const table = d.markdownTable(
    ['row', 'what', 'native or floor', 'package', 'package − native', 'less the require\'s', 'ratio'],
    counted.rows.map((r) => [r.id, r.what, fmtInstr(r.native), fmtInstr(r.package), fmtInstr(r.difference),
      fmtInstr(r.beyondRequire), fmtRatio(r.ratio)]),
    [false, false, true, true, true, true, true]
  );
  // Each program's totals, and spread = (max − min) / mean, where counted more than once.
  const spread = (list) => {
    if (list.length < 2) return '—';
    const m = list.reduce((sum, v) => sum + v, 0) / list.length;
    return `${(((Math.max(...list) - Math.min(...list)) / m) * 100).toFixed(3)} %`;
  };
  const each = d.markdownTable(
    ['program', 'total instructions, each count', 'spread'],
    counted.totals.map((t) => [`\`${t.program}\``, t.counts.map(fmtInstr).join(' / '), spread(t.counts)]),
    [false, true, true]
  );
  return { table, each };
}

function main(argv) {
  const options = parseArgs(argv);
  const runtime = d.runtimeInfo(options.node);
  const command = d.commandLine('benchmark/run.js');
  const machine = `${d.machine(runtime.arch)}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`;
  let valgrind = null;
  if (options.instructions) {
    const probe = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
    if (probe.status !== 0) throw new Error('valgrind not found (Debian: apt-get install valgrind)');
    valgrind = probe.stdout.trim();
  }
  console.error(`Node ${runtime.version} (${options.node}), cold, ${options.rounds} rounds` +
    (options.instructions ? `, then whole programs under ${valgrind}, ${options.reps} count(s) each` : ''));

  const staged = stagePackage();
  process.env[PACKAGE_VARIABLE] = staged;
  console.error(`the package as published: ${staged}`);

  primeCodeCache(options.node, []);
  const loadBefore = d.load();
  const started = Date.now();
  const rows = measureWall(options.node, options.rounds);
  const wallSeconds = Math.round((Date.now() - started) / 1000);
  const loadAfterWall = d.load();
  const counted = options.instructions ? measureInstructions(options.node, options.reps) : null;
  const seconds = Math.round((Date.now() - started) / 1000);
  const build = d.measuredBuild();

  const { table, spread } = wallTables(rows);
  const about =
    `Node ${runtime.version} (V8 ${runtime.v8}), ${machine}; ${build.text}; ${d.date()}. ` +
    `${options.rounds} rounds, no warm-up: each round runs every program once in a fresh process (a worker row in a ` +
    'fresh worker of it), each row\'s two runs back to back, their order reversed every other round; each value is ' +
    'the median over the rounds of the time the program measured; ratio = package / native (or floor), of the ' +
    `medians (lower is better). ${wallSeconds} s; 1-minute load average ${loadBefore} before, ${loadAfterWall} after.`;
  let md = `${about}\n\n${table}\n`;
  if (counted) {
    const text =
      `Whole programs under ${valgrind} (callgrind, \`--callgrind-out-file=/dev/null --dump-instr=no\`; the ` +
      `programs that start a worker with \`--fair-sched=yes\`), \`node ${counted.flags.join(' ')}\`, ` +
      `${options.reps === 1 ? 'one count' : `the mean of ${options.reps} counts`} each: instructions from start-up to exit, ` +
      `minus the empty program's (\`benchmark/cold/require.js --entry none\`: ${fmtInstr(counted.base)}), ` +
      'every thread; ratio = package / native (or floor). "Less the require\'s": a program\'s package − native ' +
      'less that of the require row that loads the package as it does (require-package-main; worker-notify: ' +
      'require-package-worker-after-main), what its first calls cost beyond native\'s apart from loading the package.';
    const { table: counts, each } = instructionTables(counted);
    md += `\n## Instruction counts (whole programs)\n\n${text}\n\n${counts}\n\n` +
      `Each program's total, each count:\n\n${each}\n`;
  }
  md += '\n## Spread over the rounds (min–max)\n\nRatio per round pairs the two runs of the same round (made back to ' +
    `back).\n\n${spread}\n`;
  console.log(`\n${md}\n(this run: ${seconds} s)`);

  if (options.write) {
    fs.writeFileSync(path.join(__dirname, '..', 'results-cold.md'),
      '# Cold: what a fresh thread pays\n\n' +
      'Made by `benchmark/run.js --cold`; see docs/performance.md ("Cold") for what each row measures.\n\n' +
      `Command: \`${command}\`\n\n${md}`);
    console.error('wrote benchmark/results-cold.md');
  }
  if (options.json) {
    const json = {
      kind: 'cold',
      command,
      date: d.date(),
      node: runtime.version,
      v8: runtime.v8,
      arch: runtime.arch,
      machine,
      core: build.core,
      rounds: options.rounds,
      rows,
      instructions: counted && { valgrind, flags: counted.flags, reps: options.reps, base: counted.base, rows: counted.rows, totals: counted.totals },
    };
    fs.writeFileSync(path.join(__dirname, '..', 'results-cold.json'), JSON.stringify(json, null, 2) + '\n');
    console.error('wrote benchmark/results-cold.json');
  }
}

module.exports = { main, ROWS, INSTRUCTION_ROWS };
