'use strict';
// install() (lib/polyfill.js) on a stand-in Atomics object with the real
// binding: what it defines, when, and how the installed notify chains to
// the original one. The real global Atomics is tested in child processes
// (polyfill-entry.spec.js), so this process's Atomics is left alone.

const assert = require('assert');
const binding = require('../../binding');
const { createPolyfill } = require('../../lib/polyfill');

const NAMES = ['waitAsync', 'wait', 'notify'];

/** An Atomics stand-in whose notify records its calls and wakes `nativeWaiters` pretend waiters. */
function fakeAtomics({ withWaitAsync = false, nativeWaiters = 0, throwOnNotify = false } = {}) {
  const calls = [];
  const atomics = {
    wait: function wait() {
      throw new Error('the original wait must not be called');
    },
    notify: function notify(ta, index, count) {
      calls.push([ta, index, count]);
      if (throwOnNotify) throw new TypeError('native notify called');
      const woken = Math.min(count, nativeWaiters);
      nativeWaiters -= woken;
      return woken;
    },
  };
  if (withWaitAsync) atomics.waitAsync = function waitAsync() {};
  return { atomics, calls };
}

const shared = () => new Int32Array(new SharedArrayBuffer(16));

describe('polyfill install()', function () {
  it('where waitAsync is missing, installs waitAsync, wait and notify shaped like built-ins', function () {
    const { atomics } = fakeAtomics();
    const { install } = createPolyfill(binding, atomics);
    assert.deepStrictEqual(install(), { installed: NAMES, active: true });
    const lengths = { waitAsync: 4, wait: 4, notify: 3 };
    for (const name of NAMES) {
      const d = Object.getOwnPropertyDescriptor(atomics, name);
      assert.deepStrictEqual(
        { writable: d.writable, enumerable: d.enumerable, configurable: d.configurable },
        { writable: true, enumerable: false, configurable: true },
        name
      );
      assert.strictEqual(d.value.name, name);
      assert.strictEqual(d.value.length, lengths[name], `${name}.length`);
      assert.strictEqual(Object.prototype.hasOwnProperty.call(d.value, 'prototype'), false, `${name} has no prototype`);
      assert.throws(() => new d.value(), TypeError, `${name} is not a constructor`);
    }
    assert.deepStrictEqual(Object.keys(atomics), [], 'none of them is enumerable');
  });

  it('the installed functions wait and wake through the package', async function () {
    const { atomics } = fakeAtomics();
    createPolyfill(binding, atomics).install();
    const ta = shared();
    assert.strictEqual(atomics.wait(ta, 0, 1), 'not-equal');
    assert.strictEqual(atomics.wait(ta, 0, 0, 0), 'timed-out');
    assert.deepStrictEqual(atomics.waitAsync(ta, 0, 0, 0), { async: false, value: 'timed-out' });
    const r = atomics.waitAsync(ta, 0, 0);
    assert.strictEqual(r.async, true);
    assert.strictEqual(binding.countsForTesting(ta, 0)[0], 1, 'queued in the package\'s registry');
    assert.strictEqual(atomics.notify(ta, 0, 1), 1);
    assert.strictEqual(await r.value, 'ok');
  });

  it('where waitAsync exists, changes nothing unless forced', function () {
    const { atomics } = fakeAtomics({ withWaitAsync: true });
    const before = NAMES.map((name) => atomics[name]);
    const { install } = createPolyfill(binding, atomics);
    assert.deepStrictEqual(install(), { installed: [], active: false });
    assert.deepStrictEqual(install({}), { installed: [], active: false });
    assert.deepStrictEqual(install({ force: false }), { installed: [], active: false });
    assert.deepStrictEqual(NAMES.map((name) => atomics[name]), before);
    assert.deepStrictEqual(install({ force: true }), { installed: NAMES, active: true });
    NAMES.forEach((name, i) => assert.notStrictEqual(atomics[name], before[i], name));
  });

  it('installing again changes nothing; the installed notify calls the original once', function () {
    const { atomics, calls } = fakeAtomics();
    const { install } = createPolyfill(binding, atomics);
    install();
    const first = NAMES.map((name) => atomics[name]);
    assert.deepStrictEqual(install(), { installed: [], active: true });
    assert.deepStrictEqual(install({ force: true }), { installed: [], active: true });
    assert.deepStrictEqual(NAMES.map((name) => atomics[name]), first);
    const ta = shared();
    assert.strictEqual(atomics.notify(ta, 0), 0);
    assert.deepStrictEqual(calls, [[ta, 0, Infinity]], 'one call to the original notify, with the whole count');
  });

  it('a forced install over a user\'s wrapper of the installed notify still calls the original, once', function () {
    const { atomics, calls } = fakeAtomics();
    const { install } = createPolyfill(binding, atomics);
    install();
    const installed = atomics.notify;
    let wrapperCalls = 0;
    atomics.notify = function notify(ta, index, count) {
      wrapperCalls++;
      return installed(ta, index, count);
    };
    assert.deepStrictEqual(install({ force: true }), { installed: NAMES, active: true });
    assert.strictEqual(atomics.notify, installed);
    const ta = shared();
    assert.strictEqual(atomics.notify(ta, 1, 2), 0);
    assert.deepStrictEqual(calls, [[ta, 1, 2]]);
    assert.strictEqual(wrapperCalls, 0);
  });

  it('notify wakes the package\'s waiters first, then the original notify for the rest, and returns the sum', async function () {
    const { atomics, calls } = fakeAtomics({ nativeWaiters: 1 });
    createPolyfill(binding, atomics).install();
    const ta = shared();
    const order = [];
    const a = atomics.waitAsync(ta, 2, 0).value.then((v) => order.push(`a ${v}`));
    const b = atomics.waitAsync(ta, 2, 0).value.then((v) => order.push(`b ${v}`));
    assert.strictEqual(atomics.notify(ta, 2, 5), 3, '2 package waiters + 1 native one');
    assert.deepStrictEqual(calls, [[ta, 2, 3]], 'the original gets what is left of the count');
    await Promise.all([a, b]);
    assert.deepStrictEqual(order, ['a ok', 'b ok']);
  });

  it('notify does not call the original when the package\'s waiters used up the count', async function () {
    const { atomics, calls } = fakeAtomics({ nativeWaiters: 1 });
    createPolyfill(binding, atomics).install();
    const ta = shared();
    const waits = [atomics.waitAsync(ta, 3, 0).value, atomics.waitAsync(ta, 3, 0).value, atomics.waitAsync(ta, 3, 0).value];
    assert.strictEqual(atomics.notify(ta, 3, 2), 2);
    assert.strictEqual(atomics.notify(ta, 3, 0), 0);
    assert.deepStrictEqual(calls, []);
    assert.strictEqual(atomics.notify(ta, 3), 2, 'the last package waiter, then the native one (count +∞)');
    assert.deepStrictEqual(calls, [[ta, 3, Infinity]]);
    assert.deepStrictEqual(await Promise.all(waits), ['ok', 'ok', 'ok']);
  });

  it('notify validates like the spec; a non-shared array gives 0 without calling the original', function () {
    const { atomics, calls } = fakeAtomics({ throwOnNotify: true }); // Node 14's throws on non-shared arrays
    createPolyfill(binding, atomics).install();
    assert.strictEqual(atomics.notify(new Int32Array(4), 0), 0);
    assert.strictEqual(atomics.notify(new BigInt64Array(4), 3, 1), 0);
    assert.throws(() => atomics.notify(new Float64Array(new SharedArrayBuffer(8)), 0), TypeError);
    assert.throws(() => atomics.notify({}, 0), TypeError);
    assert.throws(() => atomics.notify(shared(), 4), RangeError);
    assert.throws(() => atomics.notify(shared(), -1), RangeError);
    assert.throws(() => atomics.notify(shared(), 0, Symbol('count')), TypeError);
    assert.throws(() => atomics.notify(new Int32Array(4), 4), RangeError, 'the index is checked on non-shared arrays too');
    assert.deepStrictEqual(calls, []);
  });

  it('notify coerces index and count once, in the spec\'s order, and hands the original numbers', function () {
    const { atomics, calls } = fakeAtomics();
    createPolyfill(binding, atomics).install();
    const ta = shared();
    const log = [];
    const index = { valueOf: () => (log.push('index'), 1) };
    const count = { valueOf: () => (log.push('count'), 2.7) };
    assert.strictEqual(atomics.notify(ta, index, count), 0);
    assert.deepStrictEqual(log, ['index', 'count']);
    assert.deepStrictEqual(calls, [[ta, 1, 2]]);
  });

  it('install() rejects options that are not an object', function () {
    const { install } = createPolyfill(binding, fakeAtomics().atomics);
    assert.throws(() => install('force'), { name: 'TypeError', message: /"options"/ });
    assert.throws(() => install(true), TypeError);
    assert.deepStrictEqual(install(null), { installed: NAMES, active: true });
  });

  it('a copy of lib/atomics.js loaded after a forced install waits through the engine\'s wait, not the installed one (child process)', function () {
    // Its interrupt point, called once per slice, is the Atomics.wait it
    // found at load: the installed one would end the wait in progress.
    const { runNode, root } = require('../helpers');
    const path = require('path');
    const program = `
      require(${JSON.stringify(root)}).install({ force: true });
      const file = ${JSON.stringify(path.join(root, 'lib', 'atomics.js'))};
      delete require.cache[file];
      const second = require(file).createAtomics(require(${JSON.stringify(path.join(root, 'binding.js'))}));
      const ta = new Int32Array(new SharedArrayBuffer(4));
      console.log(second.wait(ta, 0, 0, 50));
    `;
    const result = runNode(['-e', program]);
    assert.deepStrictEqual([result.status, result.stderr], [0, ''], result.stderr);
    assert.strictEqual(result.stdout.trim(), 'timed-out');
  });
});

