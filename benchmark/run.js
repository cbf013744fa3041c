#!/usr/bin/env node
'use strict';
// The benchmark harness: runs every case in benchmark/cases/ in a fresh
// child process, once with this Node's built-in Atomics (--impl native) and
// once with the package (--impl addon), alternating which goes first, for
// several rounds; prints one table of medians over the rounds, with the
// ratio addon/native (lower is better for every row: times and bytes), and
// writes it with the Node version and the command to benchmark/results.md.
//
//   node benchmark/run.js [--rounds N] [--case a,b] [--node PATH] [--no-write] [--json]
//   node benchmark/run.js --instructions [...]   instruction counts, lib/instructions.js
//   node benchmark/run.js --cold [...]           a fresh thread's first calls, no warm-up, lib/cold.js
//
// --json also writes the table as benchmark/results.json (read by
// benchmark/chart.js).
//
// Not part of `npm test`: timings are claims for this file, never limits in
// tests (the machine is shared and noisy).

const fs = require('fs');
const os = require('os');
const path = require('path');
const d = require('./lib/driver');
const { median } = require('./lib/harness');

const CASES = [
  'ping-pong',
  'wait-async-call',
  'memory',
  'fan-out',
  'timeouts',
  'terminate',
  'notify-no-waiters',
];
const IMPLS = ['native', 'addon'];
const DEFAULT_ROUNDS = 7;
const CASE_TIMEOUT_MS = 60000;

// Targets the core is checked against (Node 20, same run). `value` picks
// the figure from a row: its ratio, or the addon's own value.
const TARGETS = [
  { caseName: 'ping-pong', key: 'rt-p50', what: 'ping-pong round trip (median), ratio', value: 'ratio', max: 1.0 },
  { caseName: 'wait-async-call', key: 'pending', what: 'waitAsync call (pending), ratio', value: 'ratio', max: 0.8 },
  { caseName: 'memory', key: 'rss', what: 'bytes per pending waiter (RSS), ratio', value: 'ratio', max: 1.0 },
  { caseName: 'fan-out', key: 'last-settled', what: 'fan-out of 100,000, ratio', value: 'ratio', max: 1.0 },
  { caseName: 'timeouts', key: 'late-p99', what: '10,000 timeouts of 20 ms, addon p99 lateness (ms)', value: 'addon', max: 5, strict: true },
  // The same, counted from when the thread is free to run reactions (the
  // creation loop of a fresh process outlasts the 20 ms timeout on 2 cores,
  // ~20 ms of it the loop's own promise/closure/clock work), and warm.
  { caseName: 'timeouts', key: 'free-p99', what: '… p99 lateness from when the thread is free (ms)', value: 'addon', max: 5, strict: true },
  { caseName: 'timeouts', key: 'warm-p99', what: '… p99 lateness, second burst (ms)', value: 'addon', max: 5, strict: true },
  { caseName: 'terminate', key: 'median', what: 'terminate a worker blocked in wait, addon (ms)', value: 'addon', max: 50, strict: true },
];

function usage(message) {
  d.usageExit(
    'usage: node benchmark/run.js [--rounds N] [--case name[,name]] [--node PATH] [--no-write] [--json]\n' +
      `  --rounds N   rounds per implementation (default ${DEFAULT_ROUNDS})\n` +
      `  --case LIST  only these cases (${CASES.join(', ')}); does not write results.md\n` +
      '  --node PATH  run the cases under another Node binary (default: this one)\n' +
      '  --no-write   print the table only, leave benchmark/results.md alone\n' +
      '  --json       also write benchmark/results.json (for benchmark/chart.js)\n' +
      '  --instructions  count instructions under valgrind instead (--instructions --help)\n' +
      '  --cold       cold instead: require and first calls, no warm-up (--cold --help)',
    message
  );
}

function parseArgs(argv) {
  const options = { rounds: DEFAULT_ROUNDS, cases: CASES, node: process.execPath, write: true, json: false };
  return d.parseArgs(argv, options, usage, {
    '--rounds': (next) => (options.rounds = d.positiveInt(next(), '--rounds', usage)),
    '--case': (next) => {
      options.cases = next().split(',');
      const unknown = options.cases.filter((c) => !CASES.includes(c));
      if (unknown.length) usage(`unknown case: ${unknown.join(', ')}`);
      options.write = false;
    },
    '--json': () => (options.json = true),
  });
}

/** Runs one case under one implementation in a fresh process. */
function runCase(node, caseName, impl) {
  const file = path.join(__dirname, 'cases', caseName + '.js');
  const { child, result, why } = d.runJson(node, ['--expose-gc', file, '--impl', impl], { timeout: CASE_TIMEOUT_MS });
  if (child.status !== 0 || !result) return { error: `${caseName} --impl ${impl}: ${why}\n${child.stderr}` };
  if (child.stderr) process.stderr.write(child.stderr);
  return result;
}

/** Runs every round of one case; returns its rows in first-seen order. */
function measure(node, caseName, rounds, errors) {
  const rows = new Map(); // key -> { label, unit, ..., native: [by round], addon: [by round] }
  const unsupported = {};
  for (let round = 0; round < rounds; round++) {
    // Alternate which implementation goes first, so drifts in machine load
    // hit both alike.
    const order = round % 2 === 0 ? IMPLS : IMPLS.slice().reverse();
    for (const impl of order) {
      process.stderr.write(`  ${caseName} round ${round + 1}/${rounds} ${impl}\n`);
      const result = runCase(node, caseName, impl);
      if (result.error) {
        errors.push(result.error);
        continue;
      }
      if (result.unsupported) {
        unsupported[impl] = result.unsupported;
        continue;
      }
      for (const m of result.metrics) {
        if (!rows.has(m.key)) {
          rows.set(m.key, {
            key: m.key,
            label: m.label,
            unit: m.unit,
            binding: !!m.binding,
            noRatio: !!m.noRatio,
            native: [],
            addon: [],
          });
        }
        rows.get(m.key)[impl][round] = m.value;
      }
    }
  }
  const present = (values) => values.filter((v) => v !== undefined);
  return Array.from(rows.values()).map((row) => {
    const native = present(row.native).length ? median(present(row.native)) : null;
    const addon = present(row.addon).length ? median(present(row.addon)) : null;
    const comparable = !row.noRatio && native !== null && addon !== null && Math.abs(native) > 0.01;
    const ratio = comparable ? addon / native : null;
    return Object.assign(row, {
      caseName,
      medianNative: native,
      medianAddon: addon,
      ratio,
      nativeNote: row.binding ? '—' : unsupported.native ? 'n/a' : null,
    });
  });
}

function fmt(value) {
  if (value === null || value === undefined) return '—';
  const abs = Math.abs(value);
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 0.01 || abs === 0) return value.toFixed(2);
  return value.toExponential(1);
}

function cells(row) {
  return [
    row.caseName,
    `${row.label} (${row.unit})`,
    row.medianNative === null ? row.nativeNote || 'error' : fmt(row.medianNative),
    row.medianAddon === null ? 'error' : fmt(row.medianAddon),
    row.ratio === null ? '—' : row.ratio.toFixed(2),
  ];
}

/** Round-to-round spread: min–max per implementation, and of the per-round ratio. */
function spreadCells(row) {
  const range = (values) => {
    const v = values.filter((x) => x !== undefined);
    return v.length ? `${fmt(Math.min(...v))}–${fmt(Math.max(...v))}` : '—';
  };
  const ratios = [];
  if (!row.noRatio) {
    row.addon.forEach((addon, round) => {
      const native = row.native[round];
      if (addon !== undefined && native !== undefined && Math.abs(native) > 0.01) ratios.push(addon / native);
    });
  }
  const ratioRange = ratios.length
    ? `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`
    : '—';
  return [row.caseName, `${row.label} (${row.unit})`, range(row.native), range(row.addon), ratioRange];
}

function targetRows(rows, cases) {
  return TARGETS.filter((t) => cases.includes(t.caseName)).map((t) => {
    const row = rows.find((r) => r.caseName === t.caseName && r.key === t.key);
    const value = row ? (t.value === 'ratio' ? row.ratio : row.medianAddon) : null;
    const met = value === null ? null : t.strict ? value < t.max : value <= t.max;
    const shown = value === null ? '—' : t.value === 'ratio' ? value.toFixed(2) : fmt(value);
    return [t.what, `${t.strict ? '<' : '≤'} ${t.max}`, shown, met === null ? 'not measured' : met ? 'met' : 'MISSED'];
  });
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const runtime = d.runtimeInfo(options.node);
  const command = d.commandLine('benchmark/run.js');
  const machine = `${d.machine(runtime.arch)}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`;
  console.error(`Node ${runtime.version} (${options.node}), ${options.rounds} rounds per implementation`);

  const loadBefore = d.load(1);
  const started = Date.now();
  const errors = [];
  const rows = [];
  for (const caseName of options.cases) rows.push(...measure(options.node, caseName, options.rounds, errors));
  const seconds = ((Date.now() - started) / 1000).toFixed(0);

  const header = ['case', 'metric', 'native', 'addon', 'ratio'];
  const table = d.markdownTable(header, rows.map(cells), [false, false, true, true, true]);
  const spread = d.markdownTable(
    ['case', 'metric', 'native', 'addon', 'ratio per round'],
    rows.map(spreadCells),
    [false, false, true, true, true]
  );
  const targets = d.markdownTable(['target', 'limit', 'measured', ''], targetRows(rows, options.cases), [false, false, true, false]);
  const build = d.measuredBuild();
  const about =
    `Node ${runtime.version} (V8 ${runtime.v8}), ${machine}; ${build.text}; ` +
    `${options.rounds} rounds per implementation, each in a fresh process, alternating; ` +
    `each value is the median over the rounds; ratio = addon / native (lower is better). ` +
    `Whole run: ${seconds} s; 1-minute load average ${loadBefore} before, ${d.load(1)} after.`;

  console.log(`\n${about}\n\n${table}\n\n${targets}\n`);
  for (const error of errors) console.error(error);

  if (options.write) {
    const md =
      '# Benchmark results\n\n' +
      'Made by `benchmark/run.js`; see docs/performance.md for what each row measures.\n\n' +
      `Command: \`${command}\`\n\n${about}\n\n${table}\n\n## Targets\n\n${targets}\n\n` +
      '## Spread over the rounds (min–max)\n\n' +
      'Ratio per round pairs the two processes of the same round (run back to back).\n\n' +
      `${spread}\n`;
    fs.writeFileSync(path.join(__dirname, 'results.md'), md);
    console.error('wrote benchmark/results.md');
  }
  if (options.json) {
    const json = {
      kind: 'wall-clock',
      command,
      date: d.date(),
      node: runtime.version,
      v8: runtime.v8,
      arch: runtime.arch,
      machine,
      core: build.core,
      rounds: options.rounds,
      rows: rows.map((r) => ({
        caseName: r.caseName,
        key: r.key,
        label: r.label,
        unit: r.unit,
        binding: r.binding,
        native: r.medianNative,
        addon: r.medianAddon,
        ratio: r.ratio,
        nativeRounds: r.native,
        addonRounds: r.addon,
      })),
    };
    fs.writeFileSync(path.join(__dirname, 'results.json'), JSON.stringify(json, null, 2) + '\n');
    console.error('wrote benchmark/results.json');
  }
  if (errors.length) process.exitCode = 1;
}

try {
  if (process.argv.includes('--cold')) require('./lib/cold').main(process.argv.slice(2));
  else if (process.argv.includes('--instructions')) require('./lib/instructions').main(process.argv.slice(2));
  else main();
} catch (error) {
  console.error(error.message);
  process.exitCode = 2;
}
