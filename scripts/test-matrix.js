#!/usr/bin/env node
'use strict';
// The runtime matrix (what `npm run test:matrix` runs, after the machine's
// Node has run the mocha suite in `npm run test:js`):
//
//   node14             the whole mocha suite on Node 14.21.3, which has no
//                      native Atomics.waitAsync (the runtime the polyfill is for)
//   <machine>+polyfill the whole mocha suite on this Node with the polyfill
//                      forced over the native functions (__test__/setup-polyfill.js)
//   <runtime> compat   the compatibility subset (__test__/compat/) on Node 12, 16,
//                      18, 22, 24 and Bun, with the package's functions, then
//                      through the global Atomics after install({ force: true })
//
// Every runtime loads the same addon, the one already built (N-API 8:
// `npm install` in a clone, or scripts/build.js); this script builds
// nothing. Runtimes come from scripts/runtimes.js (npm registry, cached
// outside the clone: scripts/lib/cache.js).
//
//   node scripts/test-matrix.js                 everything, one step at a time
//   node scripts/test-matrix.js --jobs 2        two steps at once (output printed per step)
//   node scripts/test-matrix.js --only node14,bun   steps whose name contains one of these

const { spawn } = require('child_process');
const path = require('path');
const runtimes = require('./runtimes');

const root = path.join(__dirname, '..');
const mocha = path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');
const setupPolyfill = path.join(root, '__test__', 'setup-polyfill.js');
const compat = path.join(root, '__test__', 'compat', 'run.js');

const COMPAT_RUNTIMES = ['node12', 'node16', 'node18', 'node22', 'node24', 'bun'];

function parseArgs(argv) {
  const options = { jobs: 1, only: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--jobs') options.jobs = Math.max(1, Number(argv[++i]) || 1);
    else if (argv[i] === '--only') options.only = argv[++i].split(',');
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return options;
}

/** The steps, each a command line; `runtime` names what must be installed first. */
function plan() {
  const steps = [
    { name: 'node14 mocha', runtime: 'node14', args: [mocha] },
    {
      name: `node${process.versions.node.split('.')[0]} mocha +polyfill`,
      binary: process.execPath,
      args: ['-r', setupPolyfill, mocha],
      env: { ATOMICS_WAITASYNC_TEST_POLYFILL: 'force' },
    },
  ];
  for (const runtime of COMPAT_RUNTIMES) {
    steps.push({ name: `${runtime} compat`, runtime, args: [compat, '--mode', 'ponyfill'] });
    steps.push({ name: `${runtime} compat +polyfill`, runtime, args: [compat, '--mode', 'polyfill'] });
  }
  return steps;
}

function run(step, live) {
  return new Promise((resolve) => {
    const started = Date.now();
    const env = Object.assign({}, process.env, step.env);
    // Nothing from the outer npm/node process may preload into the runtime.
    delete env.NODE_OPTIONS;
    if (!step.env || !step.env.ATOMICS_WAITASYNC_TEST_POLYFILL) delete env.ATOMICS_WAITASYNC_TEST_POLYFILL;
    const child = spawn(step.binary, step.args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (stream) => (chunk) => {
      if (live) stream.write(chunk);
      else output += chunk;
    };
    child.stdout.on('data', collect(process.stdout));
    child.stderr.on('data', collect(process.stderr));
    child.on('error', (error) => {
      output += `${error.stack}\n`;
    });
    child.on('close', (status, signal) => {
      resolve({ step, ok: status === 0, status: signal || status, ms: Date.now() - started, output });
    });
  });
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (!runtimes.supported()) {
    console.log(`test-matrix: skipped: the matrix runtimes are linux-x64 binaries; this is ${process.platform}-${process.arch}`);
    return;
  }
  let steps = plan();
  if (options.only) steps = steps.filter((s) => options.only.some((o) => s.name.includes(o)));

  const started = Date.now();
  for (const name of new Set(steps.map((s) => s.runtime).filter(Boolean))) {
    const t0 = Date.now();
    const r = runtimes.ensure(name);
    console.log(`# ${name} ${r.version}: ${r.cached ? 'cached' : `installed in ${Date.now() - t0} ms`}`);
  }
  for (const step of steps) {
    if (step.runtime) step.binary = runtimes.ensure(step.runtime).path;
  }
  const setupMs = Date.now() - started;

  const live = options.jobs === 1;
  const results = [];
  const queue = steps.slice();
  async function lane() {
    while (queue.length) {
      const step = queue.shift();
      console.log(`\n## ${step.name}: ${path.basename(step.binary)} ${step.args.map((a) => path.relative(root, a) || a).join(' ')}`);
      const result = await run(step, live);
      if (!live) process.stdout.write(result.output);
      console.log(`## ${step.name}: ${result.ok ? 'passed' : `FAILED (exit ${result.status})`} in ${(result.ms / 1000).toFixed(1)} s`);
      results.push(result);
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.jobs, steps.length) }, lane));

  console.log(`\n# matrix summary (runtimes ready in ${(setupMs / 1000).toFixed(1)} s)`);
  results.sort((a, b) => steps.indexOf(a.step) - steps.indexOf(b.step));
  for (const r of results) console.log(`#   ${r.ok ? 'pass' : 'FAIL'}  ${(r.ms / 1000).toFixed(1).padStart(6)} s  ${r.step.name}`);
  const failed = results.filter((r) => !r.ok).length;
  console.log(`# total ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`matrix: ${results.length - failed} passed, ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
