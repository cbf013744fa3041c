'use strict';
// With deadlock detection and lock-order checks on (ATOMICS_WAITASYNC_DEBUG),
// the takes are wrapped to record where each hold was taken. The wrappers
// only look: the specs of what the locks guarantee under a program's
// Promise species, near the stack limit, and in turn among one thread's
// tasks pass unchanged with them on. Run in a child mocha.

const assert = require('assert');
const path = require('path');
const { runNodeAsync } = require('../helpers');

const root = path.join(__dirname, '..', '..');
// Before Node 16, AsyncLocalStorage runs on async_hooks, where a
// RangeError in a hook near the stack limit ends the process: with
// debugging on (it keeps the holds' contexts there), those runtimes are
// held to the specs that do not go near the stack limit only
// (docs/debugging.md says so).
const hooksFatalNearTheLimit = Number(process.versions.node.split('.')[0]) < 16;
const specs = [
  'locks/async-lock-intrinsic-promises.spec.js',
  'locks/condition.spec.js',
  'locks/first-come-first-served.spec.js',
  ...(hooksFatalNearTheLimit
    ? []
    : [
        'locks/async-lock-stack-limit.spec.js',
        'locks/async-lock-never-held-by-nobody.spec.js',
        'coordination/semaphore.spec.js',
        'coordination/rwlock.spec.js',
      ]),
];

describe('with deadlock detection and lock-order checks on', function () {
  this.timeout(600000);

  it('the locks keep their guarantees: Promise species, the stack limit, turns among tasks', async () => {
    const mocha = path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');
    const files = specs.map((spec) => path.join(__dirname, '..', spec));
    // (Not the 10^6-operation load tests: with every take recording its
    // stack they run close to their own 60 s limit on this VM, and they
    // are about the locks under load, not about what the wrappers change.)
    const args = ['--no-package', '--exit', '--timeout', '120000', '--reporter', 'dot', '--grep', '10\\^6 operations', '--invert'];
    const result = await runNodeAsync([mocha, ...args, ...files], {
      env: { ...process.env, ATOMICS_WAITASYNC_DEBUG: 'deadlocks,lock-order' },
      killAfter: 580000,
    });
    assert.deepStrictEqual([result.status, result.signal], [0, null], result.stdout + result.stderr);
    assert.match(result.stdout, /\d+ passing/);
  });
});
