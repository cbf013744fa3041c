#!/usr/bin/env node
'use strict';
// The package under the test runners users test their own code with. For
// each runner below: copy the fixture project (__test__/runners/fixture/: a
// user's tests of code that waits and notifies across worker_threads, takes
// an AsyncLock from a worker and from the test's thread, uses the polyfill,
// and leaves waits pending when a file ends) into a fresh temp folder,
// install the runner from the npm registry and the package from a packed
// tarball, run the runner as a user would, and pass it only when it exits 0
// AND reports exactly the expected number of passed tests and no failure.
//
//   ava 6     Node on PATH (20 here): default settings, so every file runs
//             in a worker thread, several files at once
//   ava 5     Node 14.21.3 (scripts/runtimes.js), no native waitAsync
//   mocha 11  Node on PATH, --parallel with 3 jobs (.mocharc.json of the fixture)
//
//   node scripts/test-runners.js <tarball> [name...]   all runners, or those named
//
// npm's cache for the installs lives outside the clone (scripts/lib/cache.js:
// ~/.cache/atomics-waitasync/runners/npm); installs use --prefer-offline, so
// a warm cache installs without asking the registry for what it has. Each
// test run is killed (its whole process group) after RUN_TIMEOUT_MS and
// reported as a hang. ATOMICS_WAITASYNC_KEEP_RUNNERS=1 keeps the temp
// projects.
//
// Exports run({ tarball, log, only }) → [{ name, ok, ms, output, ... }].

const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { cacheDir } = require('./lib/cache');

const FIXTURE = path.join(__dirname, '..', '__test__', 'runners', 'fixture');
const INSTALL_TIMEOUT_MS = 5 * 60 * 1000;
const RUN_TIMEOUT_MS = Number(process.env.ATOMICS_WAITASYNC_RUNNERS_TIMEOUT_MS) || 120 * 1000;

/**
 * The runners, versions pinned. `tests` is how many tests of the fixture the
 * runner must report passed: ava runs test/ (12 tests in 6 files), mocha
 * runs mocha/ (11 tests in 5 files). Change it with the fixture.
 */
const HOST = `node${process.versions.node.split('.')[0]}`;
const RUNNERS = [
  { name: `ava@6.4.1/${HOST}`, id: 'ava6', package: 'ava', version: '6.4.1', runtime: null, tests: 12 },
  { name: 'ava@5.3.1/node14', id: 'ava5', package: 'ava', version: '5.3.1', runtime: 'node14', tests: 12 },
  { name: `mocha@11.8.0--parallel/${HOST}`, id: 'mocha11', package: 'mocha', version: '11.8.0', runtime: null, tests: 11 },
];

const stripAnsi = (text) => text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');

/**
 * Runs a command to its end, or kills its process group after `timeout` ms.
 * Resolves { code, signal, output, ms, timedOut }; output is stdout and
 * stderr interleaved as they came.
 */
function exec(command, args, { cwd, env, timeout }) {
  return new Promise((resolve) => {
    const started = Date.now();
    let output = '';
    let timedOut = false;
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL'); // the runner and whatever it started
      } catch (_) {
        // gone already
      }
    }, timeout);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, output: `${output}\n${error.stack}`, ms: Date.now() - started, timedOut });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output, ms: Date.now() - started, timedOut });
    });
  });
}

/** What the runner's summary says: { passed, failed } (null when it says nothing). */
function summary(packageName, text) {
  const plain = stripAnsi(text);
  const count = (re) => {
    const match = plain.match(re);
    return match ? Number(match[1]) : 0;
  };
  if (packageName === 'ava') {
    const passed = plain.match(/^\s*(\d+) tests? passed/m);
    const failed =
      count(/^\s*(\d+) tests? failed/m) +
      count(/^\s*(\d+) known failures?/m) +
      count(/^\s*(\d+) uncaught exceptions?/m) +
      count(/^\s*(\d+) unhandled rejections?/m) +
      count(/^\s*(\d+) tests? remained pending/m) +
      (/Timed out while running tests|Failed to exit/.test(plain) ? 1 : 0);
    return { passed: passed ? Number(passed[1]) : null, failed, skipped: count(/^\s*(\d+) tests? skipped/m) + count(/^\s*(\d+) tests? todo/m) };
  }
  const passed = plain.match(/^\s*(\d+) passing/m);
  return { passed: passed ? Number(passed[1]) : null, failed: count(/^\s*(\d+) failing/m), skipped: count(/^\s*(\d+) pending/m) };
}

/** The environment the runner gets: the user's, less what would steer the package or Node. */
function testEnv() {
  const env = Object.assign({}, process.env, { NO_COLOR: '1', FORCE_COLOR: '0' });
  for (const name of Object.keys(env)) {
    if (name === 'NODE_OPTIONS' || name.startsWith('ATOMICS_WAITASYNC_') || name.startsWith('npm_') || name === 'MOCHA_COLORS') {
      delete env[name];
    }
  }
  return env;
}

/** A fresh project from the fixture, with the runner and the package installed. */
async function prepare(runner, tarball, log) {
  const started = Date.now();
  const project = fs.mkdtempSync(path.join(os.tmpdir(), `atomics-waitasync-runner-${runner.id}-`));
  const result = { name: runner.name, ok: false, ms: 0, output: '', installMs: 0, testMs: 0, project };
  try {
    fs.cpSync(FIXTURE, project, { recursive: true });
    log(`${runner.name}: npm install ${runner.package}@${runner.version} ${path.basename(tarball)}`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const install = await exec(
      npm,
      ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefer-offline', '--ignore-scripts', '--save-exact',
        '--cache', cacheDir('runners', 'npm'), `${runner.package}@${runner.version}`, tarball],
      { cwd: project, env: Object.assign({}, process.env), timeout: INSTALL_TIMEOUT_MS }
    );
    result.installMs = install.ms;
    if (install.code !== 0) {
      result.output = `npm install failed (exit ${install.code}${install.timedOut ? ', timed out' : ''}):\n${install.output}`;
      result.installFailed = true;
    }
  } catch (error) {
    result.output += `\n${error.stack}`;
    result.installFailed = true;
  }
  result.ms = Date.now() - started;
  return result;
}

/** Runs the runner in its prepared project; fills in ok, output and timings. */
async function test(runner, result, log) {
  const started = Date.now();
  const { project } = result;
  try {
    if (result.installFailed) return result;
    // Node 14 may have to be installed first (scripts/runtimes.js caches it).
    const binary = runner.runtime ? require('./runtimes').ensure(runner.runtime).path : process.execPath;
    const runnerPackage = path.join(project, 'node_modules', runner.package);
    const manifest = JSON.parse(fs.readFileSync(path.join(runnerPackage, 'package.json'), 'utf8'));
    if (manifest.version !== runner.version) {
      result.output = `installed ${runner.package}@${manifest.version}, expected ${runner.version}`;
      return result;
    }
    const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin[runner.package];
    const version = (await exec(binary, ['--version'], { cwd: project, env: testEnv(), timeout: 30000 })).output.trim();
    log(`${runner.name}: ${runner.package} on node ${version}`);
    const run = await exec(binary, [path.join(runnerPackage, bin)], { cwd: project, env: testEnv(), timeout: RUN_TIMEOUT_MS });
    result.testMs = run.ms;
    const seen = summary(runner.package, run.output);
    Object.assign(result, { passed: seen.passed, failed: seen.failed, expected: runner.tests, node: version });
    const problems = [];
    if (run.timedOut) problems.push(`hung: killed after ${RUN_TIMEOUT_MS / 1000} s`);
    else if (run.code !== 0) problems.push(`exit ${run.code}${run.signal ? ` (${run.signal})` : ''}`);
    if (seen.passed !== runner.tests) problems.push(`${seen.passed === null ? 'no' : seen.passed} tests passed, expected ${runner.tests}`);
    if (seen.failed) problems.push(`${seen.failed} failures reported`);
    if (seen.skipped) problems.push(`${seen.skipped} tests skipped or pending`);
    result.ok = problems.length === 0;
    result.output = `${problems.length ? `${problems.join('; ')}\n` : ''}$ node ${version} ${runner.package} (in ${project})\n${run.output}`;
    return result;
  } catch (error) {
    result.output += `\n${error.stack}`;
    return result;
  } finally {
    result.ms += Date.now() - started;
    if (!process.env.ATOMICS_WAITASYNC_KEEP_RUNNERS) fs.rmSync(project, { recursive: true, force: true });
  }
}

/**
 * Runs every runner (or those whose id or name contains one of `only`)
 * against the tarball. Each result: { name, ok, ms (install + test),
 * output, installMs, testMs, passed, failed, expected, node }.
 */
async function run({ tarball, log = () => {}, only = null } = {}) {
  if (!tarball) throw new Error('run({ tarball }): the path of a packed atomics-waitasync tarball is required');
  const file = path.resolve(tarball);
  if (!fs.existsSync(file)) throw new Error(`no tarball at ${file}`);
  const chosen = RUNNERS.filter((r) => !only || !only.length || only.some((o) => r.id === o || r.name.includes(o)));
  // Installs at once (mostly waiting on npm), test runs one at a time (so
  // that their timings are their own).
  const prepared = await Promise.all(chosen.map((runner) => prepare(runner, file, log)));
  const results = [];
  for (let i = 0; i < chosen.length; i++) results.push(await test(chosen[i], prepared[i], log));
  return results.map((r) => {
    delete r.project;
    delete r.installFailed;
    return r;
  });
}

module.exports = { run, RUNNERS, summary };

if (require.main === module) {
  const [tarball, ...only] = process.argv.slice(2);
  if (!tarball) {
    console.error('usage: node scripts/test-runners.js <tarball> [ava6|ava5|mocha11 ...]');
    process.exit(2);
  }
  run({ tarball, only, log: (line) => console.log(`# ${line}`) }).then(
    (results) => {
      let failed = 0;
      for (const r of results) {
        const s = (ms) => (ms / 1000).toFixed(1);
        if (r.ok) {
          console.log(`ok ${r.name} (${s(r.ms)} s)`);
        } else {
          failed++;
          console.log(`FAIL ${r.name} (${s(r.ms)} s)`);
          console.log(r.output.replace(/^/gm, '    '));
        }
        console.log(`#   install ${s(r.installMs)} s, tests ${s(r.testMs)} s`);
      }
      console.log(`runners: ${results.length - failed} passed, ${failed} failed`);
      process.exitCode = failed ? 1 : 0;
    },
    (error) => {
      console.error(error.stack);
      process.exitCode = 1;
    }
  );
}
