'use strict';
// Once a thread has installed the polyfill, a worker it starts with its own
// execArgv loads it too (lib/workers.js): esbuild's worker (`execArgv: []`)
// notifies the main thread's Atomics.wait, and with the engine's notify it
// never reaches the package's waiter. A worker that inherits execArgv is left
// alone. Worker stays the same class for `instanceof`, subclasses and ESM
// imports taken before the install; options built with getters and
// prototypes keep working.

const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');
const runtimes = require('../../scripts/runtimes');
const { withPreload, FORCE_PRELOAD } = require('../../lib/workers');
const { cleanEnv } = require('../compat/context');

const fixture = path.join(__dirname, '..', 'fixtures', 'workers-preload.js');

function run(binary, mode) {
  const env = cleanEnv();
  // A V8 flag in process.execArgv: Node refuses it in a worker's given
  // execArgv but takes it when inherited, so inheriting workers must be left alone.
  const child = spawnSync(binary, ['--max-old-space-size=256', fixture, mode], { encoding: 'utf8', env, timeout: 60000 });
  assert.strictEqual(child.status, 0, `exit ${child.status} ${child.signal}\n${child.stderr}`);
  return JSON.parse(child.stdout);
}

const GIVEN = ['execArgv []', 'subclass', 'ESM import', 'options with a prototype'];
const INHERITING = ['default execArgv', 'no options'];
const expected = (active, engine, preload) => {
  const given = { waitAsync: active ? 'package' : engine, preloads: active ? [preload] : [] };
  const workers = { before: { waitAsync: engine, preloads: [] } };
  for (const name of GIVEN.slice(0, 3)) workers[name] = given;
  for (const name of INHERITING) workers[name] = { waitAsync: engine, preloads: [] };
  workers['options with a prototype'] = Object.assign({ workerData: 'prototype options' }, given);
  return { active, patched: active, esmSame: true, instanceOf: [true, true, true, true], workers };
};

describe('workers started after install() load the polyfill', function () {
  this.timeout(120000);

  it('after a forced install: every later worker given its own execArgv; inheriting ones are left alone', function () {
    if (typeof Atomics.waitAsync !== 'function') this.skip(); // the forced case needs a native one to replace
    assert.deepStrictEqual(run(process.execPath, 'force'), expected(true, 'engine', 'force-preload.js'));
  });

  it('where the plain polyfill changes nothing (native waitAsync), Worker is left alone', function () {
    if (typeof Atomics.waitAsync !== 'function') this.skip();
    assert.deepStrictEqual(run(process.execPath, 'plain'), expected(false, 'engine', null));
  });

  it('on Node 14 (no native waitAsync), the plain polyfill reaches every later worker given its own execArgv', function () {
    if (!runtimes.supported()) this.skip();
    this.timeout(600000);
    const node14 = runtimes.ensure('node14').path;
    assert.deepStrictEqual(run(node14, 'plain'), expected(true, 'none', 'polyfill.js'));
  });

  it('the preload comes after the worker\'s own flags, and never twice', function () {
    assert.deepStrictEqual(withPreload(['--no-warnings'], FORCE_PRELOAD), ['--no-warnings', '-r', FORCE_PRELOAD]);
    assert.deepStrictEqual(withPreload(['-r', FORCE_PRELOAD, '--no-warnings'], FORCE_PRELOAD), ['-r', FORCE_PRELOAD, '--no-warnings']);
    assert.deepStrictEqual(withPreload([`--require=${FORCE_PRELOAD}`], FORCE_PRELOAD), [`--require=${FORCE_PRELOAD}`]);
    assert.deepStrictEqual(withPreload(['--require', FORCE_PRELOAD], FORCE_PRELOAD), ['--require', FORCE_PRELOAD]);
  });
});
