'use strict';
// The package's exports object has fast properties in V8, before and after
// a class is made, so that `api.notify(...)` in code that is not optimised
// yet (a fresh worker's first calls) is a plain property load, not a
// dictionary look-up. (V8 turns an object into a dictionary when one of
// its data properties is redefined as an accessor, or when an object
// literal has an accessor.) Seen with V8's %HasFastProperties, in a child
// started with --allow-natives-syntax; the keys' order stays the same.

const assert = require('assert');
const { runNode } = require('../helpers');

const KEYS = [
  'waitAsync',
  'wait',
  'notify',
  'ref',
  'unref',
  'install',
  'AsyncLock',
  'Condition',
  'Latch',
  'Semaphore',
  'SignalSemaphore',
  'Barrier',
  'RwLock',
  'query',
  'report',
  'detectDeadlocks',
  'checkLockOrder',
  'waitersForTesting',
];

describe('the exports object', function () {
  it('has fast properties at load and after a class is made, its keys in order', function () {
    const program = [
      "const fast = new Function('o', 'return %HasFastProperties(o)');",
      "const api = require('./');",
      'const atLoad = fast(api);',
      'const lock = api.AsyncLock;',
      'process.stdout.write(JSON.stringify({ atLoad, afterClass: fast(api), made: typeof lock, keys: Object.keys(api) }));',
    ].join('\n');
    const run = runNode(['--allow-natives-syntax', '-e', program]);
    assert.strictEqual(run.status, 0, run.stderr);
    assert.deepStrictEqual(JSON.parse(run.stdout), { atLoad: true, afterClass: true, made: 'function', keys: KEYS });
  });

  it('names its functions as before', function () {
    const api = require('../..');
    assert.deepStrictEqual(
      ['query', 'report', 'detectDeadlocks', 'checkLockOrder'].map((name) => api[name].name),
      ['query', 'report', 'detectDeadlocks', 'checkLockOrder']
    );
  });
});
