'use strict';
// The polyfill entry points and install(): what they put on Atomics, on a
// runtime with or without a native waitAsync. Each case is a fresh child
// process, so the runner's own mode does not matter.

const assert = require('assert');

const NAMES = ['waitAsync', 'wait', 'notify'];
const LENGTHS = { waitAsync: 4, wait: 4, notify: 3 };

async function observe(ctx, how) {
  const child = await ctx.runChild([ctx.fixture('compat-install.js'), how]);
  assert.strictEqual(child.status, 0, child.stderr);
  return JSON.parse(child.stdout);
}

/** The package's functions are on Atomics, shaped like built-ins. */
function assertInstalled(after) {
  for (const name of NAMES) {
    const f = after[name];
    assert.strictEqual(f.type, 'function', name);
    assert.strictEqual(f.native, false, `${name} is the package's`);
    assert.strictEqual(f.same, false, name);
    assert.deepStrictEqual([f.writable, f.enumerable, f.configurable], [true, false, true], `${name} attributes`);
    assert.strictEqual(f.name, name);
    assert.strictEqual(f.length, LENGTHS[name], `${name}.length`);
    assert.strictEqual(f.hasPrototype, false, `${name} has no prototype, like a built-in`);
  }
}

function loadCase(how) {
  return {
    name: `${how === 'import' ? 'import' : 'require'} 'atomics-waitasync/polyfill' installs where waitAsync is missing, else changes nothing`,
    async run(ctx) {
      const seen = await observe(ctx, how);
      if (seen.before.waitAsync.type === 'function') {
        for (const name of NAMES) assert.strictEqual(seen.after[name].same, true, `${name} unchanged`);
        assert.deepStrictEqual(seen.results[0], { installed: [], active: false });
      } else {
        assertInstalled(seen.after);
        // The second install() (after the polyfill's own) changes nothing.
        assert.deepStrictEqual(seen.results[0], { installed: [], active: true });
        assert.strictEqual(seen.notifyNonShared, 0, 'notify on a non-shared array returns 0');
      }
    },
  };
}

module.exports = [
  loadCase('require'),
  loadCase('import'),
  {
    name: '-r atomics-waitasync/polyfill installs in the main thread and in workers that inherit execArgv or name it',
    // Bun 1.4 runs -r/--preload modules in the main thread only: its workers
    // list them in process.execArgv but do not run them, inherited or given
    // in `execArgv` (checked with a worker reporting its Atomics.waitAsync).
    // A Bun worker must require the polyfill at the top of its script.
    skip: (ctx) => (ctx.runtime === 'bun' ? 'Bun does not run -r preloads in worker threads' : null),
    async run(ctx) {
      // Where the runtime has waitAsync, a preload deleting it first stands
      // in for Node 12-15 (see polyfill-no-native.js).
      const first = ctx.nativeWaitAsync ? ctx.fixture('polyfill-no-native.js') : '';
      const args = (first ? ['-r', first] : []).concat(['-r', 'atomics-waitasync/polyfill', ctx.fixture('polyfill-preload-app.js')]);
      const child = await ctx.runChild(args, { POLYFILL_TEST_PRELOAD_FIRST: first });
      assert.strictEqual(child.status, 0, child.stderr);
      const lines = child.stdout.trim().split('\n').map((line) => JSON.parse(line));
      const polyfilled = { waitAsync: 'package', notified: 1, waited: 'ok', theirNotify: 1, mainWaitAsync: 'ok' };
      assert.deepStrictEqual(lines, [
        { thread: 'main', waitAsync: 'package', execArgv: args.length - 1 },
        Object.assign({ thread: 'default execArgv' }, polyfilled),
        // The polyfill reaches this worker too (lib/workers.js); where the
        // runtime has waitAsync (the stand-in), it changes nothing there.
        first
          ? { thread: 'execArgv []', waitAsync: 'native', notified: 1, waited: 'ok', theirNotify: 0, mainWaitAsync: 'ok' }
          : Object.assign({ thread: 'execArgv []' }, polyfilled),
        Object.assign({ thread: 'execArgv with -r polyfill' }, polyfilled),
        { last: 'timed-out' },
      ]);
    },
  },
  {
    name: 'install({ force: true }) replaces the three everywhere; installing again changes nothing',
    async run(ctx) {
      const seen = await observe(ctx, 'force');
      assertInstalled(seen.after);
      assert.deepStrictEqual(seen.results, [
        { installed: NAMES, active: true },
        { installed: [], active: true },
        { installed: [], active: true },
      ]);
      assert.strictEqual(seen.notifyNonShared, 0, 'notify on a non-shared array returns 0');
    },
  },
];
