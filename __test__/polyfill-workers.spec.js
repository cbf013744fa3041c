'use strict';
// Once a thread has installed the polyfill, every worker it starts loads it
// first (lib/workers.js), also one started with its own execArgv: esbuild's
// worker (`execArgv: []`) notifies the main thread's Atomics.wait, and with
// the engine's notify it never reaches the package's waiter. Worker stays the
// same class for `instanceof`, subclasses and ESM imports.

const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');
const runtimes = require('../scripts/runtimes');
const { withPreload, FORCE_PRELOAD } = require('../lib/workers');

const fixture = path.join(__dirname, 'fixtures', 'workers-preload.js');

function run(binary, mode) {
  const env = Object.assign({}, process.env);
  delete env.NODE_OPTIONS;
  delete env.ATOMICS_WAITASYNC_TEST_POLYFILL;
  const child = spawnSync(binary, [fixture, mode], { encoding: 'utf8', env, timeout: 60000 });
  assert.strictEqual(child.status, 0, `exit ${child.status} ${child.signal}\n${child.stderr}`);
  return JSON.parse(child.stdout);
}

const LATER = ['execArgv []', 'default execArgv', 'no options', 'subclass', 'ESM import'];
const expected = (active, before, later, preload) => ({
  active,
  patched: active,
  esmSame: true,
  instanceOf: [true, true, true, true],
  workers: Object.assign(
    { before: { waitAsync: before, preloads: [] } },
    ...LATER.map((name) => ({ [name]: { waitAsync: later, preloads: preload ? [preload] : [] } }))
  ),
});

describe('workers started after install() load the polyfill', function () {
  this.timeout(120000);

  it('after a forced install: every later worker, whatever its execArgv', function () {
    if (typeof Atomics.waitAsync !== 'function') this.skip(); // the forced case needs a native one to replace
    assert.deepStrictEqual(run(process.execPath, 'force'), expected(true, 'engine', 'package', 'force-preload.js'));
  });

  it('where the plain polyfill changes nothing (native waitAsync), Worker is left alone', function () {
    if (typeof Atomics.waitAsync !== 'function') this.skip();
    assert.deepStrictEqual(run(process.execPath, 'plain'), expected(false, 'engine', 'engine', null));
  });

  it('on Node 14 (no native waitAsync), the plain polyfill reaches every later worker', function () {
    if (!runtimes.supported()) this.skip();
    this.timeout(600000);
    const node14 = runtimes.ensure('node14').path;
    assert.deepStrictEqual(run(node14, 'plain'), expected(true, 'none', 'package', 'polyfill.js'));
  });

  it('the preload comes after the worker\'s own flags, and never twice', function () {
    assert.deepStrictEqual(withPreload(['--no-warnings'], FORCE_PRELOAD), ['--no-warnings', '-r', FORCE_PRELOAD]);
    assert.deepStrictEqual(withPreload(['-r', FORCE_PRELOAD, '--no-warnings'], FORCE_PRELOAD), ['-r', FORCE_PRELOAD, '--no-warnings']);
    assert.deepStrictEqual(withPreload(['--require', FORCE_PRELOAD], FORCE_PRELOAD), ['--require', FORCE_PRELOAD]);
  });
});
