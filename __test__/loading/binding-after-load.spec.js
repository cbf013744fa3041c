'use strict';
// The "may be waiting" counts that let notify skip its native call, and
// `notifyAt`, which notifies by an element's address, are handed over once
// per thread, to lib/atomics.js, and nothing of them stays on the binding
// object: code that reaches binding.js after the package loaded must not
// zero the counts (every notify would then skip waiters: lost wake-ups) nor
// wake an element it has no reference to through a guessed address (a
// spurious "ok"). Each attack runs in a child process
// (fixtures/binding-after-load.js): it scribbles on process-wide state.

const assert = require('assert');
const { fixture, runNodeAsync } = require('../helpers');

async function run(scenario, file = 'binding-after-load.js') {
  const result = await runNodeAsync([fixture(file), scenario]);
  assert.deepStrictEqual([result.status, result.signal], [0, null], result.stderr);
  return JSON.parse(result.stdout);
}

describe('code that gets the binding after load', function () {
  this.timeout(60000);

  it('cannot make a notify skip a waiter (zeroing or replacing whatever it reaches)', async () => {
    assert.deepStrictEqual(await run('zeroCounts'), {
      'the package notify': 1,
      'the installed Atomics.notify': 1,
      'a fresh copy of lib/atomics.js': 1,
      'a fresh copy of lib/atomics.js on a fresh binding': 1,
    });
  });

  it('cannot wake an element it has no reference to through a made-up address', async () => {
    assert.deepStrictEqual(await run('madeUpAddress'), {
      'a notify-like function reachable from the binding': 'still waiting',
      'the skipping notify with an index that changes': 'still waiting',
    });
  });

  it('a counts accessor on Object.prototype neither gets the counts nor fakes them, nor stops the package loading', async () => {
    const expected = { stolen: false, woken: 1, value: 'ok' };
    assert.deepStrictEqual(await run('steal', 'fast-notify-proto.js'), expected);
    assert.deepStrictEqual(await run('throw', 'fast-notify-proto.js'), expected);
  });
});
