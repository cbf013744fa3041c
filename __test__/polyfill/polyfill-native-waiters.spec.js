'use strict';
// Threads that never loaded the package and block in the engine's own
// Atomics.wait are still woken by the installed Atomics.notify: it wakes the
// package's waiters first, then calls the original notify for the rest of
// the count, and returns the sum. A child process with
// --allow-natives-syntax counts the native waiters exactly.

const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');

const root = path.join(__dirname, '..', '..');

describe('the installed notify and native Atomics.wait waiters', function () {
  it('wakes package waiters first, then native ones for the rest of the count, and returns the sum', function () {
    const env = Object.assign({}, process.env);
    delete env.NODE_OPTIONS;
    const r = spawnSync(
      process.execPath,
      ['--allow-natives-syntax', path.join(__dirname, '..', 'fixtures', 'polyfill-native-waiters.js')],
      { cwd: root, env, encoding: 'utf8', timeout: 60000 }
    );
    assert.strictEqual(r.status, 0, r.stderr);
    assert.deepStrictEqual(JSON.parse(r.stdout), {
      // native waiter queued before the package's one; count 1 wakes the package's
      queued: { package: 1, native: 1 },
      notifyOne: 1,
      p1: 'ok',
      afterOne: { package: 0, native: 1 },
      notifyRest: 1,
      w1: 'ok',
      // one package + two native waiters, count +∞: all three in one call
      queuedThree: { package: 1, native: 2 },
      notifyAll: 3,
      all: ['ok', 'ok', 'ok'],
      // one package + two native waiters, count 2: the package's and one native
      notifyTwo: 2,
      p3: 'ok',
      afterTwo: { package: 0, native: 1 },
      notifyLast: 1,
      cd: 'ok,ok',
      notifyNone: 0,
    });
  });
});
