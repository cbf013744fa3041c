'use strict';
// What the scripts that drive the benchmarks share (benchmark/run.js,
// lib/instructions.js, lock-family.js and family/report.js,
// async-fairness.js, lock-contention.js): reading the command line, running
// a program in a fresh `node` and reading the JSON line it ends with, the
// machine and runtime measured, which build of the package was measured,
// and markdown tables. The measured programs themselves share
// lib/harness.js (and, counted by callgrind, lib/ops.js); nothing here
// runs inside a measurement. Not a script: required by those above.

const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

// The package's root: the cwd of every measured program, and of git.
const ROOT = path.join(__dirname, '..', '..');

// The core's sources: a change to any of them is a change to what was measured.
const CORE_SOURCES = ['src', 'lib', 'index.js', 'binding.js', 'Cargo.toml'];

/** The value of `--name V` on this process's command line, or `fallback`. */
function arg(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
}

/** Whether `--name` (or one of `names`) is on this process's command line. */
function flag(...names) {
  return names.some((name) => process.argv.indexOf(name) !== -1);
}

/**
 * Reads `argv` into `options` for a script with its own parser. The
 * arguments every such script takes are read here: `--node PATH` (into
 * options.node: a path with a slash resolved, else looked up in PATH),
 * `--no-write` (options.write = false) and `--help`/`-h` (usage()). The
 * others are the script's `handlers`: `'--name': (next) => …`, where
 * `next()` reads the argument's value. `usage(message)` is called, and
 * must not return, for an unknown argument and a missing value.
 */
function parseArgs(argv, options, usage, handlers) {
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${name} needs a value`);
      return argv[++i];
    };
    if (name === '--node') {
      const node = next();
      options.node = node.includes('/') ? path.resolve(node) : node;
    } else if (name === '--no-write') {
      options.write = false;
    } else if (name === '--help' || name === '-h') {
      usage();
    } else if (Object.prototype.hasOwnProperty.call(handlers, name)) {
      handlers[name](next);
    } else {
      usage(`unknown argument: ${name}`);
    }
  }
  return options;
}

/** `value` as an integer >= 1, or `usage` says that `name` must be one. */
function positiveInt(value, name, usage) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) usage(`${name} must be a positive integer`);
  return n;
}

/** Prints `text` (after `message`, if any) to stderr and exits: 2 with a message, else 0. */
function usageExit(text, message) {
  if (message) console.error(message + '\n');
  console.error(text);
  process.exit(message ? 2 : 0);
}

/** The JSON value on the last line of `stdout`, or null if there is none. */
function lastJsonLine(stdout) {
  const lines = (stdout || '').trim().split('\n');
  try {
    return JSON.parse(lines[lines.length - 1]);
  } catch (_) {
    return null;
  }
}

/**
 * Runs `command args` (spawnSync, in the package's root unless `options`
 * says otherwise) and reads its last line of stdout as JSON: `result`
 * (null if missing), the spawnSync `child`, and `why` it failed, for the
 * caller's error message (the spawn error, or the exit status and signal).
 */
function runJson(command, args, options) {
  const child = spawnSync(command, args, Object.assign({ cwd: ROOT, encoding: 'utf8' }, options));
  const why = child.error ? child.error.message : `exit ${child.status}, signal ${child.signal}`;
  return { child, result: lastJsonLine(child.stdout), why };
}

/** A Node binary's version, V8, arch and major version (it is run once to ask). */
function runtimeInfo(node) {
  const probe = spawnSync(node, ['-p', 'JSON.stringify([process.version, process.versions.v8, process.arch])'], {
    encoding: 'utf8',
  });
  if (probe.status !== 0) throw new Error(`cannot run ${node}: ${probe.stderr || probe.error}`);
  const [version, v8, arch] = JSON.parse(probe.stdout);
  return { version, v8, arch, major: Number(version.slice(1).split('.')[0]) };
}

/** This machine, for the results: `linux x64, 2 cores (model)`; `arch` defaults to this Node's. */
function machine(arch) {
  const cpus = os.cpus();
  return `${os.platform()} ${arch || os.arch()}, ${cpus.length} cores (${cpus[0].model.trim()})`;
}

/** The 1-minute load average, with `digits` decimals (2 by default). */
function load(digits) {
  return os.loadavg()[0].toFixed(digits === undefined ? 2 : digits);
}

/** The command as the results show it: `node <script> <this process's arguments>`. */
function commandLine(script) {
  return ['node', script].concat(process.argv.slice(2)).join(' ');
}

/** Now, as the results' `date`: ISO 8601 to the second. */
function date() {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The package's version in the working tree's package.json. */
function packageVersion() {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
}

/**
 * Which build of the package was measured, in the forms the results take:
 *   text    for the .md: `atomics-waitasync <version>`, and `, with
 *           uncommitted changes` when the core's sources differ from HEAD
 *           (the markdown names no commit: it is read beside the code,
 *           where a hash says nothing)
 *   commit  for the .json, which is data: `<short hash>`, and ` with
 *           uncommitted changes (<paths>)` when they differ; null outside
 *           a git checkout
 *   core    the .json's `core` field (results.json, results-family.json,
 *           results-fairness.json): `core: commit <commit>`, so with the
 *           changed paths when the tree is dirty (only results-fairness.json
 *           listed them before this helper)
 */
function measuredBuild() {
  const git = (args) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  const head = git(['rev-parse', '--short', 'HEAD']);
  // Porcelain lines are 'XY path': the first's leading blank is part of XY.
  const dirty = head.status !== 0 ? [] : git(['status', '--porcelain', '--'].concat(CORE_SOURCES)).stdout
    .split('\n').filter((line) => line.trim()).map((line) => line.slice(3));
  const commit = head.status !== 0 ? null
    : `${head.stdout.trim()}${dirty.length ? ` with uncommitted changes (${dirty.join(', ')})` : ''}`;
  return {
    text: `atomics-waitasync ${packageVersion()}${dirty.length ? ', with uncommitted changes' : ''}`,
    commit,
    core: commit === null ? 'core: not a git checkout' : `core: commit ${commit}`,
  };
}

/**
 * The .md text of a build recorded by its commit alone (`measuredBuild().commit`,
 * as the rows of results-instructions.json and results-wall.json keep it):
 * the version in that commit's package.json.
 */
function buildTextAt(commit) {
  const hash = /^[0-9a-f]+/.exec(commit || '');
  const shown = hash && spawnSync('git', ['show', `${hash[0]}:package.json`], { cwd: ROOT, encoding: 'utf8' });
  if (!shown || shown.status !== 0) return 'atomics-waitasync (version not recorded)';
  const changes = / with uncommitted changes/.test(commit) ? ', with uncommitted changes' : '';
  return `atomics-waitasync ${JSON.parse(shown.stdout).version}${changes}`;
}

/**
 * A markdown table whose columns line up in a terminal too: `header` and
 * each of `rows` are arrays of strings; `rightAligned[c]` for numbers.
 */
function markdownTable(header, rows, rightAligned) {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (r) => '| ' + r.map((cell, c) => (rightAligned[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join(' | ') + ' |';
  const rule = '|' + widths.map((w, c) => (rightAligned[c] ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|') + '|';
  return [line(header), rule].concat(rows.map(line)).join('\n');
}

/** Writes `benchmark/<name>.md` and `.json` (the value, indented) and says so on stderr. */
function writeResults(name, md, json) {
  fs.writeFileSync(path.join(__dirname, '..', `${name}.md`), md);
  fs.writeFileSync(path.join(__dirname, '..', `${name}.json`), JSON.stringify(json, null, 2) + '\n');
  console.error(`wrote benchmark/${name}.md and benchmark/${name}.json`);
}

module.exports = {
  ROOT,
  arg,
  flag,
  parseArgs,
  positiveInt,
  usageExit,
  lastJsonLine,
  runJson,
  runtimeInfo,
  machine,
  load,
  commandLine,
  date,
  measuredBuild,
  buildTextAt,
  markdownTable,
  writeResults,
};
