'use strict';
// A failure inside the addon reaches JS as an Error: it never aborts the
// process and leaves the registry working.

const assert = require('assert');
const binding = require('../../binding');
const { waitAsync, notify } = require('../..');
const { runNodeAsync } = require('../helpers');

describe('internal errors', () => {
  it('a panic inside the addon becomes a JS Error, and the addon keeps working', async () => {
    // In a child process, so the panic message on stderr stays out of the test output.
    const script = `
      const binding = require('./binding');
      const { waitAsync, notify } = require('.');
      let error;
      try { binding.panicForTesting(); } catch (e) { error = e; }
      const ta = new Int32Array(new SharedArrayBuffer(8));
      const p = waitAsync(ta, 0, 0).value;
      const woken = notify(ta, 0);
      p.then((v) => console.log(JSON.stringify([error.constructor.name, error.message, woken, v])));
    `;
    const r = await runNodeAsync(['-e', script]);
    assert.strictEqual(r.status, 0, r.stderr);
    const [name, message, woken, value] = JSON.parse(r.stdout);
    assert.strictEqual(name, 'Error');
    assert.match(message, /internal error/);
    assert.deepStrictEqual([woken, value], [1, 'ok']);
  });

  it('the binding checks its arguments itself: a bad call throws instead of touching memory', () => {
    assert.throws(() => binding.notify(new Int32Array(4), 0, 1), TypeError, 'non-shared buffer');
    assert.throws(() => binding.notify(new Float64Array(new SharedArrayBuffer(8)), 0, 1), TypeError);
    assert.throws(() => binding.notify({}, 0, 1), TypeError);
    assert.throws(() => binding.waitAsync(new Int32Array(new SharedArrayBuffer(8)), 2, 0, 0), RangeError);
    assert.throws(() => binding.waitAsync(new Int32Array(new SharedArrayBuffer(8)), -1, 0, 0), RangeError);
    assert.throws(() => binding.wait(new Int32Array(new SharedArrayBuffer(8)), NaN, 0, 0), RangeError);
    assert.throws(() => binding.waitContinue(), /no wait in progress/);
    // Still fine afterwards.
    const ta = new Int32Array(new SharedArrayBuffer(8));
    assert.strictEqual(waitAsync(ta, 0, 1).value, 'not-equal');
    assert.strictEqual(notify(ta, 0), 0);
  });
});
