'use strict';
// The package as published (scripts/stage.js): its index.bundle.js holds
// the files a thread loads with the package, which its index.js compiles
// (with V8's code cache: code-cache.spec.js), where the checkout has a
// thread compile six; its lib.bundle.js, the files of the family, which
// index.js compiles at a thread's first class. The polyfill's files, which
// load from their own, find the bundled modules in require.cache, so that
// no module runs twice. Each case
// requires a staged copy in a fresh process, whose binary is this
// checkout's build in prebuilds/, where an install has it.

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { runNode, copyPackage } = require('../helpers');
const { stageWithLocalBuild, LOAD_PATH, LATER } = require('../../scripts/stage');

const root = path.join(__dirname, '..', '..');

// Records each JS file the process compiles (`compiled`, paths relative to
// `staged`), before anything of the package loads.
const RECORD = `
  const path = require('path');
  const compiled = [];
  const Module = require('module');
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    if (filename.startsWith(staged + path.sep)) compiled.push(path.relative(staged, filename).split(path.sep).join('/'));
    return compile.apply(this, arguments);
  };
`;

describe('the published index.js bundles the load path', function () {
  this.timeout(120000);
  let staged;

  /** Runs `body` in a fresh Node with `staged` set (to `root`); returns the JSON its last expression resolves to. */
  function inFreshNode(body, root = staged) {
    const code = `const staged = ${JSON.stringify(root)}; ${RECORD}
      Promise.resolve((async () => { ${body} })()).then((value) => {
        console.log(JSON.stringify(value));
        process.exit(0);
      }, (error) => {
        console.error(error && error.stack);
        process.exit(1);
      });`;
    const result = runNode(['-e', code], { cwd: os.tmpdir() });
    assert.strictEqual(result.status, 0, result.stderr);
    return JSON.parse(result.stdout.trim().split('\n').pop());
  }

  before(function () {
    staged = stageWithLocalBuild(fs.mkdtempSync(path.join(os.tmpdir(), 'atomics-waitasync-staged-')));
  });

  after(function () {
    if (staged) fs.rmSync(staged, { recursive: true, force: true });
  });

  it('holds every file of the load path, and the other files as they are', function () {
    const index = fs.readFileSync(path.join(staged, 'index.bundle.js'), 'utf8');
    for (const name of LOAD_PATH) assert.ok(index.includes(`sources[${JSON.stringify(name)}] = (function`), `${name} is not in it`);
    const later = fs.readFileSync(path.join(staged, 'lib.bundle.js'), 'utf8');
    for (const name of LATER) assert.ok(later.includes(`later[${JSON.stringify(name)}] = (function`), `${name} is not in lib.bundle.js`);
    for (const name of ['binding.js', 'lib/atomics.js', 'lib/core.js', 'polyfill.js']) {
      assert.strictEqual(fs.readFileSync(path.join(staged, name), 'utf8'), fs.readFileSync(path.join(root, name), 'utf8'), name);
    }
    // Each file's own comments are gone (the loader keeps its own).
    for (const name of LOAD_PATH.concat(LATER)) {
      const comment = fs.readFileSync(path.join(root, name), 'utf8').split('\n')[1];
      assert.ok(comment.startsWith('//') && !index.includes(comment) && !later.includes(comment), `${name}: ${comment}`);
    }
  });

  it('a main thread compiles index.js alone, and waitAsync, wait and notify work', function () {
    const result = inFreshNode(`
      const api = require(staged);
      const i32a = new Int32Array(new SharedArrayBuffer(8));
      const pending = api.waitAsync(i32a, 0, 0);
      const woken = api.notify(i32a, 0);
      return { compiled, woken, value: await pending.value, timedOut: api.wait(i32a, 1, 0, 1) };
    `);
    assert.deepStrictEqual(result, { compiled: ['index.js'], woken: 1, value: 'ok', timedOut: 'timed-out' });
  });

  it('a worker compiles index.js alone (lib/pending.js with it), and wakes the main thread', function () {
    const result = inFreshNode(`
      const { Worker } = require('worker_threads');
      const api = require(staged);
      const i32a = new Int32Array(new SharedArrayBuffer(8));
      const pending = api.waitAsync(i32a, 0, 0);
      const worker = new Worker(\`
        const staged = \${JSON.stringify(staged)};
        \${${JSON.stringify(RECORD)}}
        const { parentPort, workerData } = require('worker_threads');
        const api = require(staged);
        const woken = api.notify(workerData, 0);
        api.waitAsync(workerData, 1, 0).value.then((value) => parentPort.postMessage({ compiled, woken, value }));
        api.notify(workerData, 1);
      \`, { eval: true, workerData: i32a });
      const inWorker = await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
      await worker.terminate();
      return { inWorker, value: await pending.value };
    `);
    assert.deepStrictEqual(result, { inWorker: { compiled: ['index.js'], woken: 1, value: 'ok' }, value: 'ok' });
  });

  it('the family loads from lib.bundle.js, and the polyfill\'s files find the bundled modules: none compiles twice', function () {
    const result = inFreshNode(`
      const api = require(staged);
      const sab = new SharedArrayBuffer(64);
      const lock = new api.AsyncLock(sab);
      const condition = new api.Condition(sab, 8);
      await lock.executeLocked(() => {});
      const semaphore = new api.Semaphore(1);
      await semaphore.acquire();
      semaphore.release();
      new api.RwLock();
      new api.Barrier(1);
      new api.Latch(1);
      new api.SignalSemaphore();
      api.query();
      const afterFamily = compiled.slice();
      const installed = api.install({ force: true }).installed;
      const module = (name) => require.cache[path.join(staged, ...name.split('/'))];
      return {
        afterFamily,
        polyfill: compiled.filter((file) => !afterFamily.includes(file)).sort(),
        loaded: ${JSON.stringify(LATER)}.concat(${JSON.stringify(LOAD_PATH)}).filter((name) => !(module(name) && module(name).loaded)),
        describeUsed: typeof module('lib/describe.js').exports.describe === 'function',
        installed: installed.includes('waitAsync'),
        condition: typeof condition.wait === 'function',
      };
    `);
    assert.deepStrictEqual(result, {
      // Nothing of the family compiled from its own file...
      afterFamily: ['index.js'],
      // ...and the polyfill's machinery, which is not bundled, alone.
      polyfill: ['lib/node-loader.js', 'lib/polyfill.js', 'lib/workers.js'],
      // Each bundled module a module of require.cache, loaded, under its own name.
      loaded: [],
      describeUsed: true,
      installed: true,
      condition: true,
    });
  });

  it('a copy of the package without lib.bundle.js loads the family from its files', function () {
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'atomics-waitasync-partial-'));
    try {
      copyPackage(staged, copy, path.join(root, 'atomics-waitasync.node')); // (fs.cpSync: Node 16.7)
      fs.rmSync(path.join(copy, 'lib.bundle.js'));
      const result = inFreshNode(`
        const api = require(staged);
        const lock = new api.AsyncLock();
        let ran = false;
        await lock.executeLocked(() => (ran = true));
        return { compiled: compiled.sort(), ran };
      `, copy);
      assert.deepStrictEqual(result, {
        compiled: ['index.js', 'lib/async-lock.js', 'lib/core.js', 'lib/diagnostics.js', 'lib/line.js', 'lib/owned-word.js', 'lib/pending.js', 'lib/tracking.js'],
        ran: true,
      });
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });

  it('where require.cache is not Node\'s (a test runner\'s registry), it requires the files themselves', function () {
    // A registry as jest's: it compiles each file of the package itself, in
    // modules of its own, and hands Node's require only builtins and binaries.
    const result = inFreshNode(`
      const vm = require('vm');
      const asked = [];
      const registry = {};
      function registryRequire(dir) {
        const require_ = (specifier) => {
          if (!specifier.startsWith('.') && !path.isAbsolute(specifier)) return require(specifier);
          const file = path.resolve(dir, specifier);
          if (file.endsWith('.node')) return require(file);
          asked.push(path.relative(staged, file).split(path.sep).join('/'));
          if (registry[file]) return registry[file].exports;
          const module = (registry[file] = { exports: {} });
          const wrapper = vm.compileFunction(require('fs').readFileSync(file, 'utf8'),
            ['exports', 'require', 'module', '__filename', '__dirname'], { filename: file });
          wrapper.call(module.exports, module.exports, registryRequire(path.dirname(file)), module, file, path.dirname(file));
          return module.exports;
        };
        require_.cache = {};
        return require_;
      }
      const api = registryRequire(staged)('./index.js');
      const i32a = new Int32Array(new SharedArrayBuffer(4));
      const pending = api.waitAsync(i32a, 0, 0);
      api.notify(i32a, 0);
      return { asked: asked.slice(0, 4), value: await pending.value };
    `);
    assert.deepStrictEqual(result, {
      asked: ['index.js', 'index.bundle.js', 'binding.js', 'lib/platform.js'],
      value: 'ok',
    });
  });

  it('runs where its own file name is another (a bundler\'s output file): the same exports, working', function () {
    const result = inFreshNode(`
      const vm = require('vm');
      const file = path.join(staged, 'index.js');
      const module = { exports: {} };
      const wrapper = vm.compileFunction(require('fs').readFileSync(file, 'utf8'), ['exports', 'require', 'module', '__filename', '__dirname'], { filename: file });
      // A bundler's output file names itself, with the package's folder kept as __dirname.
      wrapper.call(module.exports, module.exports, Module.createRequire(file), module, path.join(staged, 'out.js'), staged);
      const api = module.exports;
      const i32a = new Int32Array(new SharedArrayBuffer(4));
      const pending = api.waitAsync(i32a, 0, 0);
      return { woken: api.notify(i32a, 0), value: await pending.value };
    `);
    assert.deepStrictEqual(result, { woken: 1, value: 'ok' });
  });

  it('a module of the bundle that throws as it loads leaves no entry in require.cache, as Node would', function () {
    const result = inFreshNode(`
      process.env.ATOMICS_WAITASYNC_BINARY = path.join(staged, 'no-such.node');
      let code = null;
      try {
        require(staged);
      } catch (error) {
        code = error.code;
      }
      const cached = (name) => require.cache[path.join(staged, name)] !== undefined;
      return { code, binding: cached('binding.js'), index: cached('index.js'), platform: cached('lib/platform.js') };
    `);
    assert.deepStrictEqual(result, { code: 'ERR_ATOMICS_WAITASYNC_NO_BINARY', binding: false, index: false, platform: true });
  });

  it('throws what the checkout throws, for the same bad argument', function () {
    const message = (from) => inFreshNode(`
      const api = require(${JSON.stringify(from)});
      try {
        api.waitAsync(new Int32Array(4), 0, 0);
      } catch (error) {
        return [error.constructor.name, error.code, error.message];
      }
      return null;
    `);
    const published = message(staged);
    assert.ok(published !== null && published[0] === 'TypeError', JSON.stringify(published));
    assert.deepStrictEqual(published, message(root));
  });
});
