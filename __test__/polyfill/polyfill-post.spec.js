'use strict';
// The code of the V8 post (shared/seed: "Atomics.wait, Atomics.notify,
// Atomics.waitAsync") runs as written with only the polyfill required: its
// waitAsync example, and its AsyncLock with workers blocking in lock() and
// the main thread in executeLocked(). On a runtime without native waitAsync
// (Node 14 in the matrix) that is the polyfill as users get it; on one with
// it, the fixtures force the polyfill over the native functions.

const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');

const root = path.join(__dirname, '..', '..');
const fixture = (name) => path.join(__dirname, '..', 'fixtures', name);

function run(args) {
  const env = Object.assign({}, process.env);
  delete env.NODE_OPTIONS;
  delete env.ATOMICS_WAITASYNC_TEST_POLYFILL;
  const r = spawnSync(process.execPath, args, { cwd: root, env, encoding: 'utf8', timeout: 120000 });
  assert.strictEqual(r.status, 0, `exit ${r.status} ${r.signal || ''}\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

const nativeHere = spawnSync(process.execPath, ['-p', 'typeof Atomics.waitAsync'], { encoding: 'utf8' }).stdout.trim() === 'function';
const mode = nativeHere ? ['force'] : [];

describe(`the V8 post's code with the polyfill (${process.version}${nativeHere ? ', forced over the native waitAsync' : ''})`, function () {
  it('the waitAsync example: an async result whose promise settles "ok" after the notify', function () {
    assert.deepStrictEqual(run([fixture('polyfill-post-example.js')].concat(mode)), {
      async: true,
      isPromise: true,
      settled: 'ok',
      polyfilled: true,
    });
  });

  it('AsyncLock: 4 workers in lock() and 200 executeLocked() calls on the main thread keep a plain counter exact', function () {
    const workers = 4;
    const iterations = process.env.CI ? 5000 : 2000;
    const out = run([fixture('polyfill-post-async-lock.js'), nativeHere ? 'force' : 'plain', String(workers), String(iterations)]);
    assert.strictEqual(out.queuedBeforeUnlock, workers + 200, 'everyone was queued behind the main thread');
    assert.strictEqual(out.counter, out.expected);
    assert.strictEqual(out.expected, workers * iterations + 200);
    assert.strictEqual(out.lockWord, 0, 'unlocked at the end');
    assert.strictEqual(out.left, 0, 'nobody left in the queue');
  });
});
