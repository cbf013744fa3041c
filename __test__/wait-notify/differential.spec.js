'use strict';
// Differential test: seeded random programs of waitAsync (main thread), wait
// (two workers), notify (with counts, from any thread), stores and timeouts
// over a few locations (fixtures/diff-program.js) run twice on this Node:
// with its native Atomics and with the package forced over them
// (fixtures/diff-run.js). Both logs (return values, settle strings, notify
// counts, the order in which woken main-thread promises settle, the set of
// woken workers) must be equal, and equal to the spec model's prediction.

const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');
const { generate } = require('../fixtures/diff-program');

const root = path.join(__dirname, '..', '..');
const LENGTH = 300;
// More seeds under CI (the run is a fraction of a second per seed and mode).
const SEEDS = process.env.DIFF_SEEDS
  ? process.env.DIFF_SEEDS.split(',').map(Number)
  : process.env.CI
    ? [1, 2, 3, 4, 5, 6, 7, 8]
    : [1, 2, 3];

function run(mode, seed) {
  const env = Object.assign({}, process.env);
  delete env.NODE_OPTIONS;
  const r = spawnSync(
    process.execPath,
    ['--allow-natives-syntax', path.join(__dirname, '..', 'fixtures', 'diff-run.js'), mode, String(seed), String(LENGTH)],
    { cwd: root, env, encoding: 'utf8', timeout: 120000 }
  );
  assert.strictEqual(r.status, 0, `${mode} seed ${seed}: exit ${r.status} ${r.signal || ''}\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Fails at the first differing entry, with its neighbours, rather than a 300-line diff. */
function assertSameLog(actual, expected, what) {
  const n = Math.max(actual.length, expected.length);
  for (let i = 0; i < n; i++) {
    const a = JSON.stringify(actual[i]);
    const e = JSON.stringify(expected[i]);
    if (a !== e) {
      const before = expected.slice(Math.max(0, i - 3), i).map((x) => JSON.stringify(x)).join('\n    ');
      assert.fail(`${what}: entry ${i} differs\n  after:\n    ${before}\n  expected: ${e}\n  actual:   ${a}`);
    }
  }
}

const nativeHere = (() => {
  const env = Object.assign({}, process.env);
  delete env.NODE_OPTIONS;
  return spawnSync(process.execPath, ['-p', 'typeof Atomics.waitAsync'], { env, encoding: 'utf8' }).stdout.trim() === 'function';
})();

describe(`differential: native Atomics vs the forced polyfill (${process.version})`, function () {
  before(function () {
    if (!nativeHere) {
      console.log(`      skipped: ${process.version} has no native Atomics.waitAsync to compare with`);
      this.skip();
    }
  });

  it('the generated programs exercise every kind of operation and outcome', function () {
    const all = [].concat(...SEEDS.map((seed) => generate(seed, LENGTH).expected));
    const count = (predicate) => all.filter(predicate).length;
    assert.ok(count((e) => e[0] === 'waitAsync' && e[2]) > 0, 'queued waitAsync');
    assert.ok(count((e) => e[0] === 'waitAsync' && e[3] === 'not-equal') > 0, 'waitAsync not-equal');
    assert.ok(count((e) => e[0] === 'waitAsync' && e[3] === 'timed-out') > 0, 'waitAsync timeout 0');
    assert.ok(count((e) => e[0] === 'wait' && e[3] === 'queued') > 0, 'blocking wait');
    assert.ok(count((e) => e[0] === 'wait' && e[3] === 'not-equal') > 0, 'wait not-equal');
    assert.ok(count((e) => e[0] === 'wait' && e[3] === 'timed-out') > 0, 'wait timed-out');
    assert.ok(count((e) => e[0] === 'notify' && e[5].length > 1) > 0, 'one notify settling several promises');
    assert.ok(count((e) => e[0] === 'notify' && e[5].length > 0 && e[6].length > 0) > 0, 'one notify waking both kinds');
    assert.ok(count((e) => e[0] === 'notify' && e[1] !== 'main' && e[4] > 0) > 0, 'a worker waking someone');
    assert.ok(count((e) => e[0] === 'drain' && e[1].length > 0) > 0, 'waitAsync timing out');
  });

  for (const seed of SEEDS) {
    it(`seed ${seed}: ${LENGTH} operations give the same log natively, with the polyfill, and in the model`, function () {
      const { expected } = generate(seed, LENGTH);
      const native = run('native', seed);
      const polyfill = run('polyfill', seed);
      assertSameLog(polyfill, native, 'polyfill vs native');
      assertSameLog(native, expected, 'native vs model');
    });
  }
});
