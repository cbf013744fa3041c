'use strict';
// A wake-up passed on through a long chain of dead waiters (a terminated
// worker's) must not crash: a pass-on that recursed (`pass_on → wake →
// deliver → pass_on`) once per dead waiter in front of a live one would
// overflow the stack about 26,000 waiters deep (SIGSEGV). Each run is a
// child process (a crash is its exit status) with a chain of 300,000 dead
// waiters; see fixtures/pass-on-chain.js.

const assert = require('assert');
const { fixture, runNodeAsync } = require('../helpers');

describe('pass-on through a chain of 300,000 dead waiters', function () {
  this.timeout(600000);
  const runs = process.env.CI ? 10 : 4;
  const rounds = 2;

  it(`${runs} processes × ${rounds} rounds: no crash, and the live waiter behind the chain wakes`, async () => {
    for (let run = 0; run < runs; run++) {
      const result = await runNodeAsync([fixture('pass-on-chain.js'), '300000', String(rounds)]);
      assert.deepStrictEqual(
        { status: result.status, signal: result.signal, stdout: result.stdout.trim() },
        { status: 0, signal: null, stdout: 'ok' },
        `run ${run}: ${result.stderr}`
      );
    }
  });
});
