'use strict';
// The entry points on this runtime, each in a fresh child process:
// require('atomics-waitasync/polyfill'), import 'atomics-waitasync/polyfill',
// and the named ESM export `install`. Where the runtime has no native
// waitAsync (Node 12-15) the polyfill installs; where it has one, nothing
// changes until install({ force: true }).

const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');

const root = path.join(__dirname, '..', '..');
const fixture = (name) => path.join(__dirname, '..', 'fixtures', name);
const NAMES = ['waitAsync', 'wait', 'notify'];
const hasNative = (() => {
  // This process's Atomics may carry the forced polyfill (setup-polyfill.js);
  // a clean child tells what the runtime itself has.
  const r = run(['-e', 'console.log(typeof Atomics.waitAsync)']);
  return r.stdout.trim() === 'function';
})();

/** Runs this runtime on `args` in a clean environment (no preloads). */
function run(args) {
  const env = Object.assign({}, process.env);
  delete env.NODE_OPTIONS;
  delete env.ATOMICS_WAITASYNC_TEST_POLYFILL;
  const r = spawnSync(process.execPath, args, { cwd: root, env, encoding: 'utf8', timeout: 60000 });
  assert.strictEqual(r.status, 0, `${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  return r;
}

function observe(how) {
  return JSON.parse(run([fixture('compat-install.js'), how]).stdout);
}

function assertInstalled(after) {
  for (const name of NAMES) {
    assert.strictEqual(after[name].native, false, `${name} is the package's`);
    assert.deepStrictEqual(
      [after[name].writable, after[name].enumerable, after[name].configurable],
      [true, false, true],
      `${name}: writable, not enumerable, configurable`
    );
    assert.strictEqual(after[name].name, name);
    assert.strictEqual(after[name].hasPrototype, false);
  }
  assert.deepStrictEqual(NAMES.map((name) => after[name].length), [4, 4, 3]);
}

describe(`polyfill entry points (${process.version}, ${hasNative ? 'native waitAsync' : 'no native waitAsync'})`, function () {
  for (const how of ['require', 'import']) {
    it(`${how} 'atomics-waitasync/polyfill' ${hasNative ? 'leaves the native functions alone' : 'installs the three functions'}`, function () {
      const seen = observe(how);
      assert.strictEqual(seen.before.waitAsync.type, hasNative ? 'function' : 'undefined');
      if (hasNative) {
        for (const name of NAMES) assert.strictEqual(seen.after[name].same, true, `${name} unchanged`);
        assert.deepStrictEqual(seen.results[0], { installed: [], active: false });
      } else {
        assertInstalled(seen.after);
        assert.deepStrictEqual(seen.results[0], { installed: [], active: true }, 'installed once, by the entry point');
      }
    });
  }

  it('install({ force: true }) installs over whatever is there; again, it changes nothing', function () {
    const seen = observe('force');
    assertInstalled(seen.after);
    assert.deepStrictEqual(seen.results.map((r) => r.installed), [NAMES, [], []]);
  });

  it('the ESM entry exports install, and importing the polyfill too does not get in the way', function () {
    const out = JSON.parse(run([fixture('polyfill-esm.mjs')]).stdout);
    assert.deepStrictEqual(out, {
      result: hasNative ? { installed: NAMES, active: true } : { installed: [], active: true },
      native: false,
      ponyfill: 'function',
    });
  });

  it('with the polyfill, Atomics.notify on a non-shared array returns 0 (Node 14\'s own throws) and bad input throws the spec\'s errors', function () {
    const out = JSON.parse(run([fixture('polyfill-errors.js')]).stdout);
    if (hasNative) {
      // Nothing was installed: the built-ins answer, and agree with the spec.
      assert.strictEqual(out.notifyNonShared, 0);
      return;
    }
    assert.strictEqual(out.notifyNonShared, 0);
    assert.strictEqual(out.notifyNonSharedBig, 0);
    assert.strictEqual(out.notifyFloat.error, 'TypeError');
    assert.match(out.notifyFloat.message, /"typedArray"/);
    assert.strictEqual(out.notifyIndex.error, 'RangeError');
    assert.match(out.notifyIndex.message, /"index"/);
    assert.strictEqual(out.waitNonShared.error, 'TypeError');
    assert.match(out.waitNonShared.message, /SharedArrayBuffer/);
    assert.strictEqual(out.waitAsyncIndex.error, 'RangeError');
    assert.strictEqual(out.waitAsyncBigValue.error, 'TypeError');
    assert.match(out.waitAsyncBigValue.message, /"value"/);
  });
});
