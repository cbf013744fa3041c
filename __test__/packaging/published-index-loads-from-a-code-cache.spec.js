'use strict';
// The published index.js compiles index.bundle.js with V8's code cache,
// kept in the package's .code-cache/ folder (scripts/stage.js), and at a
// thread's first class, lib.bundle.js with one of its own. What a user
// relies on: the package loads and works whatever state the cache is in;
// a load that finds a good cache takes it (and so leaves it as it is: a
// cache V8 refused, or one made from other code, is written anew); code
// edited in place runs as edited; nothing is left half-written, even when
// many threads load at once; and the cache can be turned off. Each case
// runs fresh processes on one staged copy whose binary is this checkout's
// build, its .code-cache/ removed first.

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { runNode } = require('../helpers');
const { stageWithLocalBuild } = require('../../scripts/stage');


// Loads the staged package, makes one waitAsync settle through notify, and
// prints what it saw.
const USE = `
  const api = require(process.env.STAGED);
  const i32a = new Int32Array(new SharedArrayBuffer(4));
  const pending = api.waitAsync(i32a, 0, 0);
  const woken = api.notify(i32a, 0);
  pending.value.then((value) => console.log(JSON.stringify({ woken, value, edited: global.editedBundle === 7 })));
`;

describe('the published index.js loads from a code cache', function () {
  this.timeout(120000);
  let staged;
  let cacheDir;
  let bundleFile;
  let bundle;
  let laterBundle;

  /** Runs USE (or `code`) in a fresh Node; returns what it printed, parsed. */
  function load(options = {}) {
    const result = runNode([...(options.flags || []), '-e', options.code || USE], {
      cwd: os.tmpdir(),
      env: { ...process.env, STAGED: staged, ATOMICS_WAITASYNC_CODE_CACHE: '', ...(options.env || {}) },
    });
    assert.strictEqual(result.status, 0, result.stderr);
    return JSON.parse(result.stdout.trim().split('\n').pop());
  }

  /** The cache files, by name: { inode, size, startsWithBundle, twice } (index-*: index.bundle.js's; lib-*: lib.bundle.js's). */
  function caches() {
    if (!fs.existsSync(cacheDir) || !fs.statSync(cacheDir).isDirectory()) return {};
    const found = {};
    for (const name of fs.readdirSync(cacheDir)) {
      const source = name.startsWith('lib-') ? laterBundle : bundle;
      const file = path.join(cacheDir, name);
      const bytes = fs.readFileSync(file);
      const half = (bytes.length - source.length) / 2;
      found[name] = {
        inode: fs.statSync(file).ino,
        size: bytes.length,
        startsWithBundle: bytes.length > source.length && bytes.subarray(0, source.length).equals(source),
        // V8's data follows twice, the copies alike.
        twice: half > 0 && bytes.subarray(source.length, source.length + half).equals(bytes.subarray(source.length + half)),
      };
    }
    return found;
  }

  /**
   * What V8 compiles of `bundles` (file names in the package) in a run of
   * `code` (which prints `works`) that finds the caches the run before it
   * wrote under the same flags: V8's log of what it compiles
   * (--log-function-events), on a main thread, and in a worker of a main
   * thread that does not load the package. { main, worker }: the functions'
   * names, each after its bundle's.
   */
  function compiledOnSecondRun(code, works, bundles) {
    const log = path.join(staged, 'functions.log');
    const flags = ['--log-function-events', `--logfile=${log}`, '--no-logfile-per-isolate'];
    const inWorker = `
      const { Worker } = require('worker_threads');
      const code = ${JSON.stringify(code.replace('console.log(', 'require("worker_threads").parentPort.postMessage('))};
      new Worker(code, { eval: true }).once('message', (line) => console.log(line));
    `;
    const compiled = {};
    for (const [where, program] of [['main', code], ['worker', inWorker]]) {
      fs.rmSync(cacheDir, { recursive: true, force: true });
      load({ flags, code: program });
      assert.deepStrictEqual(load({ flags, code: program }), works);
      // script-details,<id>,<file>,...; function,<event>,<script id>,<start>,<end>,<time>,<timestamp>,<name>
      const lines = fs.readFileSync(log, 'utf8').split('\n').map((line) => line.split(','));
      fs.rmSync(log);
      const files = bundles.map((name) => path.join(staged, name));
      const scripts = new Map(lines.filter((f) => f[0] === 'script-details' && files.includes(f[2])).map((f) => [f[1], path.basename(f[2])]));
      assert.deepStrictEqual([...new Set(scripts.values())].sort(), bundles.slice().sort(), `${where}: each bundle ran`);
      compiled[where] = lines
        .filter((f) => f[0] === 'function' && f[1] === 'interpreter' && scripts.has(f[2]))
        .map((f) => `${scripts.get(f[2])}: ${f[7] || `@${f[3]}`}`);
    }
    return compiled;
  }

  const WORKS = { woken: 1, value: 'ok', edited: false };

// Loads the staged package, takes an AsyncLock, and prints what it saw.
const USE_LOCK = `
  const api = require(process.env.STAGED);
  const lock = new api.AsyncLock();
  let ran = 0;
  lock.executeLocked(() => ran++).then(() => console.log(JSON.stringify({ ran, held: lock.tryLock() })));
`;
const LOCK_WORKS = { ran: 1, held: true };

  before(function () {
    staged = stageWithLocalBuild(fs.mkdtempSync(path.join(os.tmpdir(), 'atomics-waitasync-code-cache-')));
    cacheDir = path.join(staged, '.code-cache');
    bundleFile = path.join(staged, 'index.bundle.js');
    bundle = fs.readFileSync(bundleFile);
    laterBundle = fs.readFileSync(path.join(staged, 'lib.bundle.js'));
  });

  beforeEach(function () {
    fs.rmSync(cacheDir, { recursive: true, force: true });
    fs.writeFileSync(bundleFile, bundle);
  });

  after(function () {
    if (staged) fs.rmSync(staged, { recursive: true, force: true });
  });

  it('the first load writes a cache that holds the bundle; the next takes it as it is, on a main thread or a worker', function () {
    assert.deepStrictEqual(load(), WORKS);
    const written = caches();
    const names = Object.keys(written);
    assert.strictEqual(names.length, 1, JSON.stringify(written));
    assert.ok(written[names[0]].startsWithBundle, 'the cache starts with the bundle it was made from');
    assert.ok(written[names[0]].twice, 'then holds V8\'s data twice');
    assert.ok(written[names[0]].size > bundle.length + 1024, 'and holds compiled code after it');
    // Taken, not refused: a refused cache is written anew (renamed over: another inode).
    assert.deepStrictEqual(load(), WORKS);
    const inWorker = load({
      code: `
        const { Worker } = require('worker_threads');
        new Worker(${JSON.stringify(USE)}, { eval: true }).on('error', (error) => { console.error(error); process.exit(1); });
      `,
    });
    assert.deepStrictEqual(inWorker, WORKS);
    assert.deepStrictEqual(caches(), written);
  });

  it('a thread that loads from the cache compiles none of the package\'s code, nor at its first waitAsync and notify', function () {
    assert.deepStrictEqual(compiledOnSecondRun(USE, WORKS, ['index.bundle.js']), { main: [], worker: [] });
  });

  it('a thread\'s first class compiles lib.bundle.js with a cache of its own, written once its first take ran', function () {
    assert.deepStrictEqual(load({ code: USE_LOCK }), LOCK_WORKS);
    const written = caches();
    const names = Object.keys(written).sort();
    assert.deepStrictEqual(names.map((name) => name.split('-')[0]), ['index', 'lib']);
    const lib = written[names[1]];
    assert.ok(lib.startsWithBundle && lib.twice && lib.size > laterBundle.length + 1024, JSON.stringify(lib));
    // Taken as it is, on a main thread and in a worker; a thread that uses
    // no class leaves it as it is too.
    assert.deepStrictEqual(load({ code: USE_LOCK }), LOCK_WORKS);
    const inWorker = load({
      code: `
        const { Worker } = require('worker_threads');
        new Worker(${JSON.stringify(USE_LOCK)}, { eval: true }).on('error', (error) => { console.error(error); process.exit(1); });
      `,
    });
    assert.deepStrictEqual(inWorker, LOCK_WORKS);
    assert.deepStrictEqual(load(), WORKS);
    assert.deepStrictEqual(caches(), written);
  });

  it('the family\'s cache is written on Node\'s own timers: fake ones installed after the require do not hold it back', function () {
    const faked = `
      const api = require(process.env.STAGED);
      const queued = [];
      globalThis.setImmediate = (f) => queued.push(f); // what fake timers do, left unticked
      const lock = new api.AsyncLock();
      let ran = 0;
      lock.executeLocked(() => ran++).then(() => console.log(JSON.stringify({ ran, held: lock.tryLock(), queued: queued.length })));
    `;
    assert.deepStrictEqual(load({ code: faked }), { ...LOCK_WORKS, queued: 0 });
    assert.deepStrictEqual(Object.keys(caches()).map((name) => name.split('-')[0]).sort(), ['index', 'lib']);
  });

  it('from the caches, a thread\'s first class and first take compile none of the package\'s code', function () {
    assert.deepStrictEqual(compiledOnSecondRun(USE_LOCK, LOCK_WORKS, ['index.bundle.js', 'lib.bundle.js']), { main: [], worker: [] });
  });

  it('a lib.bundle.js cache that is not one (garbage, a changed bit in V8\'s data) is replaced, and the class works', function () {
    load({ code: USE_LOCK });
    const name = Object.keys(caches()).find((n) => n.startsWith('lib-'));
    const file = path.join(cacheDir, name);
    const good = fs.readFileSync(file);
    const flipped = Buffer.from(good);
    flipped[laterBundle.length + 300] ^= 0x10;
    for (const bad of [Buffer.alloc(4096, 0x5a), flipped]) {
      fs.writeFileSync(file, bad);
      assert.deepStrictEqual(load({ code: USE_LOCK }), LOCK_WORKS);
      const now = caches()[name];
      assert.ok(now.startsWithBundle && now.twice && now.size > laterBundle.length + 1024, JSON.stringify(now));
    }
  });

  it('a bundle edited in place runs as edited, though the edit keeps its length', function () {
    load();
    const before = caches();
    const text = bundle.toString('latin1');
    const line = "'use strict';\n";
    // Of the same length as the line it replaces: V8 itself would take the old cache.
    const replacement = 'global.eB=7; \n';
    assert.ok(text.startsWith(line) && replacement.length === line.length);
    fs.writeFileSync(bundleFile, replacement + text.slice(line.length), 'latin1');
    assert.strictEqual(fs.statSync(bundleFile).size, bundle.length);
    const result = load({ code: USE.replace('global.editedBundle === 7', 'global.eB === 7') });
    assert.deepStrictEqual(result, { ...WORKS, edited: true });
    const after = caches();
    const name = Object.keys(before)[0];
    assert.notStrictEqual(after[name].inode, before[name].inode, 'the cache is made anew from the edited bundle');
  });

  it('a cache file that is not one (cut short, garbage, a changed bit in V8\'s data) is replaced, and the package loads', function () {
    load();
    const name = Object.keys(caches())[0];
    const file = path.join(cacheDir, name);
    const good = fs.readFileSync(file);
    const flipped = Buffer.from(good);
    // V8 checks its data's header, not what follows: a bit changed there
    // could crash the load, or run other code.
    flipped[bundle.length + 300] ^= 0x10;
    for (const bad of [good.subarray(0, bundle.length + 100), Buffer.alloc(4096, 0x5a), flipped]) {
      fs.writeFileSync(file, bad);
      assert.deepStrictEqual(load(), WORKS);
      const now = caches()[name];
      assert.ok(now.startsWithBundle && now.twice && now.size > bundle.length + 1024, JSON.stringify(now));
      assert.ok(!fs.readFileSync(file).equals(bad), 'made anew');
    }
  });

  it('the cache is readable by all and written by its owner only, whatever the umask', function () {
    const result = load({ code: `process.umask(0); ${USE}` });
    assert.deepStrictEqual(result, WORKS);
    const name = Object.keys(caches())[0];
    assert.strictEqual((fs.statSync(cacheDir).mode & 0o777).toString(8), '755');
    assert.strictEqual((fs.statSync(path.join(cacheDir, name)).mode & 0o777).toString(8), '644');
  });

  it('a cache V8 refuses for flags its name does not tell is left as it is while new, and made anew once old', function () {
    load();
    const name = Object.keys(caches())[0];
    const file = path.join(cacheDir, name);
    const before = caches()[name];
    // Flags set as the program runs: the cache's name is the plain one.
    const otherFlags = `require('v8').setFlagsFromString('--stack-size=900'); ${USE}`;
    assert.deepStrictEqual(load({ code: otherFlags }), WORKS);
    assert.deepStrictEqual(caches()[name], before, 'not made anew: it is new');
    assert.deepStrictEqual(load(), WORKS);
    assert.deepStrictEqual(caches()[name], before, 'and still taken by the plain process');
    const old = new Date(Date.now() - 20 * 60 * 1000);
    fs.utimesSync(file, old, old);
    assert.deepStrictEqual(load({ code: otherFlags }), WORKS);
    const remade = caches()[name];
    assert.notStrictEqual(remade.inode, before.inode, 'made anew once old');
    // A time of change ahead of the clock (a copy, another machine's clock) counts as old.
    fs.utimesSync(file, old, old);
    load(); // the plain process's cache again
    assert.notStrictEqual(caches()[name].inode, remade.inode);
    const ahead = new Date(Date.now() + 60 * 60 * 1000);
    fs.utimesSync(file, ahead, ahead);
    const aheadInode = caches()[name].inode;
    assert.deepStrictEqual(load({ code: otherFlags }), WORKS);
    assert.notStrictEqual(caches()[name].inode, aheadInode, 'made anew though its time is ahead');
  });

  it('where the cache cannot be written, the package loads as without it, and leaves nothing', function () {
    // A file where the folder would be: mkdir fails as on a read-only install.
    fs.writeFileSync(cacheDir, 'not a folder');
    assert.deepStrictEqual(load(), WORKS);
    assert.deepStrictEqual(load(), WORKS);
    assert.strictEqual(fs.readFileSync(cacheDir, 'utf8'), 'not a folder');
    assert.deepStrictEqual(fs.readdirSync(staged).filter((name) => name.endsWith('.tmp')), []);
    fs.rmSync(cacheDir);
  });

  it('ATOMICS_WAITASYNC_CODE_CACHE=0 neither reads nor writes one', function () {
    assert.deepStrictEqual(load({ env: { ATOMICS_WAITASYNC_CODE_CACHE: '0' } }), WORKS);
    assert.deepStrictEqual(load({ code: USE_LOCK, env: { ATOMICS_WAITASYNC_CODE_CACHE: '0' } }), LOCK_WORKS);
    assert.strictEqual(fs.existsSync(cacheDir), false);
    load();
    const written = caches();
    const name = Object.keys(written)[0];
    fs.writeFileSync(path.join(cacheDir, name), Buffer.alloc(64, 1));
    assert.deepStrictEqual(load({ env: { ATOMICS_WAITASYNC_CODE_CACHE: '0' } }), WORKS);
    assert.strictEqual(caches()[name].size, 64, 'not read (nor replaced)');
  });

  it('processes run with other V8 flags keep a cache of their own, each taken as it is', function () {
    load();
    load({ flags: ['--stack-size=900'] });
    const both = caches();
    assert.strictEqual(Object.keys(both).length, 2, JSON.stringify(both));
    load();
    load({ flags: ['--stack-size=900'] });
    assert.deepStrictEqual(caches(), both);
  });

  it('eight workers loading at once and taking a lock, with no cache yet, all work, and leave one whole cache of each bundle and no temporary file', function () {
    const result = load({
      code: `
        const { Worker } = require('worker_threads');
        const start = new Int32Array(new SharedArrayBuffer(4));
        const code = 'const { workerData, parentPort } = require("worker_threads");' +
          'Atomics.wait(workerData, 0, 0);' +
          'const api = require(process.env.STAGED);' +
          'const lock = new api.AsyncLock();' +
          'lock.executeLocked(() => typeof api.waitAsync).then((type) => parentPort.postMessage(type));';
        const workers = [];
        for (let i = 0; i < 8; i++) workers.push(new Worker(code, { eval: true, workerData: start }));
        // Each worker ends by itself (one ended from outside as it writes
        // would leave its temporary file: docs/api.md).
        const types = [];
        Promise.all(workers.map((worker) => new Promise((resolve, reject) =>
          worker.once('message', (type) => types.push(type)).once('error', reject).once('exit', resolve))))
          .then(() => console.log(JSON.stringify(types)));
        Promise.all(workers.map((worker) => new Promise((resolve) => worker.once('online', resolve)))).then(() => {
          Atomics.store(start, 0, 1);
          Atomics.notify(start, 0);
        });
      `,
    });
    assert.deepStrictEqual(result, new Array(8).fill('function'));
    // One of each bundle: each whole.
    const names = fs.readdirSync(cacheDir).sort();
    assert.deepStrictEqual(names.map((name) => name.split('-')[0]), ['index', 'lib']);
    const both = caches();
    for (const name of names) {
      const source = name.startsWith('lib-') ? laterBundle : bundle;
      assert.ok(both[name].startsWithBundle && both[name].twice && both[name].size > source.length + 1024, JSON.stringify(both[name]));
    }
    assert.deepStrictEqual(load({ code: USE_LOCK }), LOCK_WORKS);
    assert.deepStrictEqual(caches(), both);
  });

  it('loaded through a registry that is not Node\'s (a test runner), it neither reads nor writes one', function () {
    const result = load({
      code: `
        const vm = require('vm');
        const path = require('path');
        const file = path.join(process.env.STAGED, 'index.js');
        const module = { exports: {} };
        const wrapper = vm.compileFunction(require('fs').readFileSync(file, 'utf8'), ['exports', 'require', 'module', '__filename', '__dirname'], { filename: file });
        wrapper.call(module.exports, module.exports, require('module').createRequire(file), module, file, process.env.STAGED);
        console.log(JSON.stringify(typeof module.exports.waitAsync));
      `,
    });
    assert.strictEqual(result, 'function');
    assert.strictEqual(fs.existsSync(cacheDir), false);
  });
});
