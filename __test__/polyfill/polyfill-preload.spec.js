'use strict';
// `node -r atomics-waitasync/polyfill app.js`: the main thread and the
// workers that inherit execArgv get the polyfill; a worker started with its
// own execArgv gets it too (lib/workers.js adds the -r). On a runtime with
// a native waitAsync, a preload that deletes it first stands in for Node
// 12-15 (on Node 14 the run needs no stand-in).

const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');

const root = path.join(__dirname, '..', '..');
const fixture = (name) => path.join(__dirname, '..', 'fixtures', name);

describe('node -r atomics-waitasync/polyfill', function () {
  it('installs in the main thread and in workers that inherit execArgv; waits and wakes cross threads; keeps the process alive', function () {
    const env = Object.assign({}, process.env);
    delete env.NODE_OPTIONS;
    delete env.ATOMICS_WAITASYNC_TEST_POLYFILL;
    const args = [];
    const nativeHere = spawnSync(process.execPath, ['-p', 'typeof Atomics.waitAsync'], { env, encoding: 'utf8' }).stdout.trim() === 'function';
    if (nativeHere) {
      args.push('-r', fixture('polyfill-no-native.js'));
      env.POLYFILL_TEST_PRELOAD_FIRST = fixture('polyfill-no-native.js');
    }
    args.push('-r', 'atomics-waitasync/polyfill', fixture('polyfill-preload-app.js'));
    const r = spawnSync(process.execPath, args, { cwd: root, env, encoding: 'utf8', timeout: 60000 });
    assert.strictEqual(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').map((line) => JSON.parse(line));
    const polyfilled = { waitAsync: 'package', notified: 1, waited: 'ok', theirNotify: 1, mainWaitAsync: 'ok' };
    assert.deepStrictEqual(lines, [
      { thread: 'main', waitAsync: 'package', execArgv: args.length - 1 },
      Object.assign({ thread: 'default execArgv' }, polyfilled),
      // This worker gets the polyfill too (lib/workers.js), but on a runtime
      // with a native waitAsync (the stand-in) the plain polyfill changes
      // nothing there: its native Atomics.wait is still woken by the main
      // thread's notify (which calls the native one for the rest), but its
      // native notify does not reach the package's waiters.
      nativeHere
        ? { thread: 'execArgv []', waitAsync: 'native', notified: 1, waited: 'ok', theirNotify: 0, mainWaitAsync: 'ok' }
        : Object.assign({ thread: 'execArgv []' }, polyfilled),
      Object.assign({ thread: 'execArgv with -r polyfill' }, polyfilled),
      { last: 'timed-out' },
    ]);
  });
});
