'use strict';
// What loading the package costs a thread: only what waitAsync, wait and
// notify need. The family's classes, query(), the deadlock switches and
// the polyfill's machinery load at their first use, as does, on the main
// thread, worker_threads; perf_hooks never loads. Each case runs in a fresh process:
// this one has loaded everything already.

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { runNode } = require('../helpers');

const root = path.join(__dirname, '..', '..');

/** Runs `body` in a fresh Node (its last expression printed as JSON) and returns what it printed. */
function inFreshNode(body) {
  const result = runNode(['-e', `const root = ${JSON.stringify(root)}; console.log(JSON.stringify((() => { ${body} })())); process.exit(0);`]);
  assert.strictEqual(result.status, 0, result.stderr);
  return JSON.parse(result.stdout.trim().split('\n').pop());
}

// The package's JS files a thread has loaded, and the builtins loaded since `before`.
const LOADED = `
  function loaded(before) {
    const ours = Object.keys(require.cache)
      .filter((file) => file.startsWith(root) && file.endsWith('.js'))
      .map((file) => require('path').relative(root, file).split(require('path').sep).join('/'))
      .sort();
    const builtins = process.moduleLoadList.filter((m) => !before.has(m) && m.startsWith('NativeModule '));
    return { ours, builtins: builtins.map((m) => m.slice('NativeModule '.length)) };
  }
`;

const AT_LOAD = ['binding.js', 'index.js', 'lib/atomics.js', 'lib/describe.js', 'lib/platform.js'];
const NOT_AT_LOAD = ['perf_hooks', 'worker_threads', 'diagnostics_channel', 'vm', 'async_hooks'];

describe('what a thread loads with the package', function () {
  it('the main thread: the waitAsync, wait and notify files only; no perf_hooks or worker_threads', function () {
    const { ours, builtins } = inFreshNode(`${LOADED}
      const before = new Set(process.moduleLoadList);
      const api = require(root);
      // Using the triple loads nothing more.
      const i32a = new Int32Array(new SharedArrayBuffer(4));
      api.waitAsync(i32a, 0, 0, 0);
      api.notify(i32a, 0);
      return loaded(before);
    `);
    assert.deepStrictEqual(ours, AT_LOAD);
    for (const name of NOT_AT_LOAD) assert.ok(!builtins.includes(name), `${name} loaded: ${builtins.join(', ')}`);
  });

  it('a worker: the same, and lib/pending.js (where a worker keeps its promises)', function () {
    const { ours, builtins } = inFreshNode(`${LOADED}
      const { Worker, receiveMessageOnPort, MessageChannel } = require('worker_threads');
      const { port1, port2 } = new MessageChannel();
      const shared = new Int32Array(new SharedArrayBuffer(4));
      new Worker(\`
        const root = \${JSON.stringify(root)};
        \${${JSON.stringify(LOADED)}}
        const { workerData } = require('worker_threads');
        const before = new Set(process.moduleLoadList);
        require(root);
        workerData.port.postMessage(loaded(before));
        Atomics.store(workerData.shared, 0, 1);
        Atomics.notify(workerData.shared, 0);
      \`, { eval: true, workerData: { port: port2, shared }, transferList: [port2] }).unref();
      Atomics.wait(shared, 0, 0, 30000);
      return receiveMessageOnPort(port1).message;
    `);
    assert.deepStrictEqual(ours, AT_LOAD.concat('lib/pending.js').sort());
    for (const name of NOT_AT_LOAD.filter((n) => n !== 'worker_threads')) {
      assert.ok(!builtins.includes(name), `${name} loaded: ${builtins.join(', ')}`);
    }
  });

  it('a class loads at its first read, works, and shows its state in util.inspect; its timed waits load no perf_hooks', function () {
    const seen = inFreshNode(`${LOADED}
      const api = require(root);
      const before = loaded(new Set()).ours;
      const builtinsBefore = new Set(process.moduleLoadList);
      const { AsyncLock } = api;
      const lock = new AsyncLock();
      const took = lock.tryLock();
      const timedOut = !new api.Condition().wait(lock, 5); // (a timed wait's deadline)
      const shown = require('util').inspect(lock);
      lock.unlock();
      return { before, after: loaded(new Set()).ours, took, timedOut, shown, same: api.AsyncLock === AsyncLock, builtins: loaded(builtinsBefore).builtins };
    `);
    assert.ok(!seen.builtins.includes('perf_hooks'), `perf_hooks loaded: ${seen.builtins.join(', ')}`);
    assert.strictEqual(seen.timedOut, true);
    assert.ok(!seen.before.includes('lib/async-lock.js'));
    assert.ok(seen.after.includes('lib/async-lock.js'));
    assert.ok(!seen.after.includes('lib/semaphore.js'), 'another class loaded with it');
    assert.strictEqual(seen.took, true);
    assert.strictEqual(seen.same, true);
    assert.match(seen.shown, /^AsyncLock \{ held by thread 0/);
  });

  it('a class is made once per thread, read through a copy of the exports (Babel interop) or frozen exports', function () {
    const seen = inFreshNode(`
      const api = require(root);
      // What Babel's _interopRequireWildcard does: copy each descriptor, getters as getters.
      const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(api));
      const frozen = Object.freeze(Object.defineProperties({}, Object.getOwnPropertyDescriptors(api)));
      const Lock = copy.AsyncLock;
      const lock = new copy.AsyncLock();
      const c = new copy.Condition();
      lock.lock();
      const waited = c.wait(lock, 1); // a Condition of the copy takes a lock of the copy
      lock.unlock();
      return {
        same: copy.AsyncLock === Lock && api.AsyncLock === Lock && frozen.AsyncLock === Lock && frozen.Latch === frozen.Latch,
        instance: lock instanceof copy.AsyncLock,
        waited,
      };
    `);
    assert.deepStrictEqual(seen, { same: true, instance: true, waited: false });
  });

  it('a Condition made with lock-order checks on re-takes its lock as the lock was made: no warning of its own', function () {
    // Two locks taken in one order, then a wait on the first: its re-take
    // is not a take in the inverse order.
    const result = runNode(['-e', `
      const api = require(${JSON.stringify(root)});
      const warnings = [];
      process.on('warning', (w) => warnings.push(w.name));
      const a = new api.AsyncLock();
      const b = new api.AsyncLock();
      const c = new api.Condition();
      a.lock();
      b.lock();
      c.wait(a, 5);
      b.unlock();
      a.unlock();
      setImmediate(() => console.log(JSON.stringify(warnings)));
    `], { env: { ...process.env, ATOMICS_WAITASYNC_DEBUG: 'lock-order' } });
    assert.strictEqual(result.status, 0, result.stderr);
    assert.deepStrictEqual(JSON.parse(result.stdout.trim()), []);
  });

  it('ATOMICS_WAITASYNC_DEBUG switches detection on as a thread loads the package, whatever it uses', function () {
    const result = runNode(['-e', `
      require(${JSON.stringify(root)});
      console.log(require(${JSON.stringify(root + '/binding')}).diagFlags());
    `], { env: { ...process.env, ATOMICS_WAITASYNC_DEBUG: 'deadlocks' } });
    assert.strictEqual(result.status, 0, result.stderr);
    assert.strictEqual(Number(result.stdout.trim()) & 1, 1);
  });

  it("knows the main thread from a worker without loading worker_threads, as worker_threads says", function () {
    const seen = inFreshNode(`
      const { isMainThread, threadId } = require(root + '/lib/describe.js');
      const ours = { isMainThread, threadId };
      const { Worker, receiveMessageOnPort, MessageChannel } = require('worker_threads');
      const { port1, port2 } = new MessageChannel();
      const shared = new Int32Array(new SharedArrayBuffer(4));
      new Worker(\`
        const { isMainThread, threadId } = require(\${JSON.stringify(root + '/lib/describe.js')});
        const w = require('worker_threads');
        w.workerData.port.postMessage({ ours: { isMainThread, threadId }, node: { isMainThread: w.isMainThread, threadId: w.threadId } });
        Atomics.store(w.workerData.shared, 0, 1);
        Atomics.notify(w.workerData.shared, 0);
      \`, { eval: true, workerData: { port: port2, shared }, transferList: [port2] }).unref();
      Atomics.wait(shared, 0, 0, 30000);
      const { isMainThread: nodeMain, threadId: nodeId } = require('worker_threads');
      return { main: { ours, node: { isMainThread: nodeMain, threadId: nodeId } }, worker: receiveMessageOnPort(port1).message };
    `);
    assert.deepStrictEqual(seen.main.ours, seen.main.node);
    assert.deepStrictEqual(seen.main.ours, { isMainThread: true, threadId: 0 });
    assert.deepStrictEqual(seen.worker.ours, seen.worker.node);
    assert.strictEqual(seen.worker.ours.isMainThread, false);
  });

  it('asks worker_threads where the program wrapped process.chdir (graceful-fs does)', function () {
    const seen = inFreshNode(`
      const chdir = process.chdir;
      process.chdir = function (dir) { return chdir.call(process, dir); };
      const before = process.moduleLoadList.includes('NativeModule worker_threads');
      const { isMainThread, threadId } = require(root + '/lib/describe.js');
      return { before, after: process.moduleLoadList.includes('NativeModule worker_threads'), isMainThread, threadId };
    `);
    assert.deepStrictEqual(seen, { before: false, after: true, isMainThread: true, threadId: 0 });
  });

  it("takes Node's timers as they are when the package loads, not when a class first loads", function () {
    // A program that fakes its timers after loading the package, and only
    // then first uses a class: a parked take's timeout still goes by Node's
    // own timers.
    const seen = inFreshNode(`
      const api = require(root);
      const timers = require('timers');
      const real = timers.setTimeout;
      let faked = 0;
      timers.setTimeout = global.setTimeout = function fake(...args) {
        faked++;
        return real(...args);
      };
      const lock = new api.AsyncLock();
      lock.lock(); // held: the takes below wait
      // The first async take goes for the word; the second waits parked,
      // behind it, with a timer for its timeout.
      lock.acquire().catch(() => {});
      lock.acquire({ timeout: 10 }).catch(() => {});
      return { faked };
    `);
    assert.strictEqual(seen.faked, 0);
  });

  it('every JavaScript file of the package is ASCII, which V8 reads as it is', function () {
    // One character outside ASCII (an arrow in a comment) and V8 decodes
    // the whole file from UTF-8 into a two-byte string as it compiles it:
    // ~5 % of the package's load. Write \u2026 in strings, -> in comments.
    const files = ['index.js', 'binding.js', 'polyfill.js', 'async-mutex.js']
      .concat(fs.readdirSync(path.join(root, 'lib')).filter((f) => f.endsWith('.js')).map((f) => `lib/${f}`));
    const found = [];
    for (const file of files) {
      fs.readFileSync(path.join(root, file), 'utf8').split('\n').forEach((line, i) => {
        if (/[^\x00-\x7f]/.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    assert.deepStrictEqual(found, []);
  });
});
