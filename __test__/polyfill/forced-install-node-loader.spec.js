'use strict';
// A forced install must never break the runtime's own use of Atomics, nor a
// loader's. On Node 18.19+ and 20, Node's module loader takes
// Atomics.wait/waitAsync from the global when its customization hooks first
// load, after -r preloads, and its hooks thread wakes them with the
// engine's notify (lib/node-loader.js); esbuild (under tsx) blocks the main
// thread in Atomics.wait until a worker it starts with `execArgv: []`
// notifies it, on every Node (lib/workers.js). Left to the package's
// functions, the first two hang at start-up on Node 18 and 20, and tsx
// hangs on every Node.
//
// Each case runs `node -r force.cjs <loader> app.mjs` on Node 18.20, 20, 22
// and 24 (from scripts/runtimes.js) and checks that the program ran to the
// end with the package's functions on Atomics, waking across threads.

const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');
const { pathToFileURL } = require('url');
const vm = require('vm');
const runtimes = require('../../scripts/runtimes');
const { ensureTool } = require('../../scripts/lib/tools');
const { createLoaderRoute } = require('../../lib/node-loader');
const { cleanEnv: contextCleanEnv } = require('../compat/context');

const fixture = path.join(__dirname, '..', 'fixtures', 'node-loader');
const RUNTIMES = ['node18', 'node20', 'node22', 'node24'];
// A hang shows as a timeout; a run takes well under a second.
const HANG_MS = 60000;

const CASES = [
  { name: 'module.register() from an --import file', args: () => ['--import', './register.mjs', 'app.mjs'] },
  { name: '--loader', args: () => ['--no-warnings', '--loader', './hooks.mjs', 'app.mjs'] },
  { name: 'tsx (--import tsx, esbuild\'s transformSync)', args: (tsx) => ['--import', tsx, 'tsx-app.mts'] },
];

const EXPECTED = { answer: 42, resolved: true, packageFunctions: true, mainOutcome: 'ok', workerOutcome: 'ok' };

/** A child's environment: no preloads, and tsx compiling every run afresh. */
function cleanEnv() {
  return Object.assign(contextCleanEnv(), { TSX_DISABLE_CACHE: '1' });
}

describe('a forced install under module customization hooks', function () {
  const binaries = {};
  let tsx;

  before(function () {
    if (!runtimes.supported()) this.skip();
    // Cold cache: four Node releases and tsx come from the npm registry.
    this.timeout(15 * 60 * 1000);
    for (const name of RUNTIMES) binaries[name] = runtimes.ensure(name).path;
    const { packageDir } = ensureTool('tsx', cleanEnv());
    tsx = pathToFileURL(path.join(packageDir, 'dist', 'loader.mjs')).href;
  });

  for (const name of RUNTIMES) {
    for (const c of CASES) {
      it(`${name}: ${c.name}`, function () {
        this.timeout(HANG_MS + 10000);
        const run = spawnSync(binaries[name], ['-r', './force.cjs'].concat(c.args(tsx)), {
          cwd: fixture,
          env: cleanEnv(),
          encoding: 'utf8',
          timeout: HANG_MS,
          killSignal: 'SIGKILL',
        });
        const what = `${name} ${c.name}: exit ${run.status}, signal ${run.signal}\n${run.stderr}`;
        assert.strictEqual(run.signal, null, `hung (killed after ${HANG_MS} ms): ${what}`);
        assert.strictEqual(run.status, 0, what);
        assert.deepStrictEqual(JSON.parse(run.stdout.trim().split('\n').pop()), EXPECTED, what);
      });
    }
  }
});

describe('a forced install and synchronous RPC to a worker started with execArgv: []', function () {
  // esbuild's and synckit's pattern, without tsx: the main thread blocks in
  // the installed Atomics.wait until a worker started with `execArgv: []`
  // notifies it. That worker loads the polyfill too (lib/workers.js). Hung on
  // every Node before the fix.
  for (const name of ['node14'].concat(RUNTIMES)) {
    it(`${name}: the worker has the package's notify, and wakes the main thread's Atomics.wait`, function () {
      if (!runtimes.supported()) this.skip();
      this.timeout(HANG_MS + 600000);
      const binary = runtimes.ensure(name).path;
      const run = spawnSync(binary, ['-r', './force.cjs', 'sync-rpc.cjs'], {
        cwd: fixture,
        env: cleanEnv(),
        encoding: 'utf8',
        timeout: HANG_MS,
        killSignal: 'SIGKILL',
      });
      const what = `${name}: exit ${run.status}, signal ${run.signal}\n${run.stderr}`;
      assert.strictEqual(run.signal, null, `hung (killed after ${HANG_MS} ms): ${what}`);
      assert.strictEqual(run.status, 0, what);
      assert.deepStrictEqual(
        JSON.parse(run.stdout.trim().split('\n').pop()),
        { outcome: 'ok', workerNotify: 'package', mainWait: 'package' },
        what
      );
    });
  }
});

describe('lib/node-loader: which buffers go to the engine\'s functions', function () {
  const at = (filename, fn) => vm.runInThisContext('(fn) => (ta) => fn(ta)', { filename })(fn);

  it('on Node 18.19+ and 20 only', function () {
    const route = (node, extra) => createLoaderRoute(Object.assign({ node }, extra), {}) !== null;
    assert.deepStrictEqual(
      ['18.18.2', '18.19.0', '18.20.8', '20.0.0', '20.20.2', '21.0.0', '22.23.3', '24.21.0'].map((v) => route(v)),
      [false, true, true, true, true, false, false, false]
    );
    assert.strictEqual(route('20.20.2', { bun: '1.4.5' }), false, 'Bun runs no JS of Node\'s');
    assert.strictEqual(route('20.20.2', { deno: '2.9.6' }), false, 'nor does Deno');
  });

  it('a small Int32Array that Node\'s own code waits on, and no other', function () {
    const isNodeLock = createLoaderRoute({ node: '20.20.2' }, {});
    function installed(ta) {
      return isNodeLock(ta, installed);
    }
    const fromLoader = at('node:internal/modules/esm/hooks', installed);
    const fromMessaging = at('node:internal/worker/messaging', installed);
    const fromOtherInternals = at('node:internal/modules/esm/module_job', installed);
    const fromUser = at(path.join(__dirname, 'user-code.js'), installed);
    const lock = new Int32Array(new SharedArrayBuffer(4));
    const status = new Int32Array(new SharedArrayBuffer(8));
    const mine = new Int32Array(new SharedArrayBuffer(4));
    assert.strictEqual(fromLoader(lock), true, 'the loader\'s lock');
    assert.strictEqual(fromUser(lock), true, 'the same buffer stays Node\'s, whoever calls');
    assert.strictEqual(fromMessaging(status), true, 'postMessageToThread\'s status array');
    assert.strictEqual(fromUser(mine), false, 'a user\'s one-element array');
    assert.strictEqual(fromLoader(mine), false, 'the answer for a buffer is remembered');
    assert.strictEqual(fromOtherInternals(new Int32Array(new SharedArrayBuffer(4))), false, 'user code run by Node\'s loader');
    assert.strictEqual(fromLoader(new Int32Array(new SharedArrayBuffer(12))), false, 'not the shape of Node\'s locks');
    assert.strictEqual(fromLoader(new Uint32Array(new SharedArrayBuffer(4))), false, 'not an Int32Array');
  });

  it('neither a program\'s Error settings nor a frozen Error change the answer or throw', function () {
    const isNodeLock = createLoaderRoute({ node: '20.20.2' }, {});
    function installed(ta) {
      return isNodeLock(ta, installed);
    }
    const fromLoader = at('node:internal/modules/esm/hooks', installed);
    const saved = Object.getOwnPropertyDescriptors(Error);
    let reads = 0;
    try {
      Object.defineProperty(Error, 'prepareStackTrace', { get: () => { reads++; return () => 'user'; }, set() {}, configurable: true });
      Object.defineProperty(Error, 'stackTraceLimit', { value: 0, writable: false, configurable: true });
      assert.strictEqual(fromLoader(new Int32Array(new SharedArrayBuffer(4))), true);
      assert.strictEqual(reads, 0, 'the program\'s Error.prepareStackTrace is never read');
    } finally {
      for (const name of ['prepareStackTrace', 'stackTraceLimit']) {
        if (saved[name]) Object.defineProperty(Error, name, saved[name]);
        else delete Error[name];
      }
    }
  });

  it('a second copy installed over the first still hands Node\'s lock on', function () {
    const realm = {};
    const first = createLoaderRoute({ node: '20.20.2' }, realm);
    const second = createLoaderRoute({ node: '20.20.2' }, realm);
    // The second copy's installed function calls the first's, as it would
    // after a forced install on top of the first (its "original").
    function firstInstalled(ta) {
      return first(ta, firstInstalled);
    }
    const secondInstalled = vm.runInThisContext('(route, next) => function installed(ta) { route(ta, installed); return next(ta); }', {
      filename: require.resolve('../../lib/polyfill.js'),
    })(second, firstInstalled);
    const fromLoader = at('node:internal/modules/esm/hooks', secondInstalled);
    assert.strictEqual(fromLoader(new Int32Array(new SharedArrayBuffer(4))), true);
  });
});
