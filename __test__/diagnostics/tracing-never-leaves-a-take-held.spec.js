'use strict';
// A traced call returns what the untraced call would, whatever the
// program changed that the tracing meets on its way: a Promise species
// that throws or makes promises that never settle, a Promise.prototype.then
// that throws, subscribers that throw, a store bound to the start channel
// that runs what it is given twice, then throws, or from a timer. The call
// settles with its release function, f's result or f's error; f runs
// once; once released, nothing is held; and nothing is left rejected
// unhandled. Each case in a child (it changes the globals):
// __test__/fixtures/tracing-hostile.js.

const assert = require('assert');
const { runNodeAsync, fixture } = require('../helpers');
const { hasTracing } = require('../fixtures/diagnostics');

/** The fixture's report for `scenario`. */
async function run(scenario) {
  const { status, stdout, stderr } = await runNodeAsync([fixture('tracing-hostile.js'), scenario]);
  assert.strictEqual(status, 0, stderr);
  return JSON.parse(stdout);
}

describe('diagnostics: tracing never leaves a take held', function () {
  this.timeout(60000);
  let untouched;

  before(async function () {
    if (!hasTracing) this.skip(); // (Node < 18.19: no tracingChannel)
    untouched = await run('none');
  });

  it('with nothing changed, every call is traced and settles as it should', () => {
    assert.deepStrictEqual(Object.keys(untouched.results).filter((call) => untouched.results[call] !== 'ok'), []);
    assert.strictEqual(Object.keys(untouched.results).length, 20);
    assert.deepStrictEqual(untouched.problems, []);
    assert.deepStrictEqual(untouched.events['AsyncLock acquire'], ['start', 'end', 'asyncStart', 'asyncEnd']);
    assert.deepStrictEqual(untouched.events['AsyncLock runExclusive, f throws'], ['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
  });

  const cases = [
    ['species-throws', 'a Promise[Symbol.species] that throws', true],
    ['species-never-settles', 'a Promise[Symbol.species] whose promises never settle', true],
    ['then-throws', 'a Promise.prototype.then that throws', true],
    ['subscriber-throws', 'subscribers that throw', true],
    ['store-runs-twice', 'a store that runs the call twice', false],
    ['store-throws', 'a store that runs the call, then throws', false],
    ['store-runs-later', 'a store that runs the call from a timer', false],
  ];
  for (const [scenario, what, sameEvents] of cases) {
    it(`with ${what}${sameEvents ? ', traced as ever' : ''}`, async () => {
      const { results, events, problems } = await run(scenario);
      const wrong = Object.keys(results).filter((call) => results[call] !== 'ok');
      assert.deepStrictEqual(wrong, [], wrong.map((call) => `${call}: ${results[call]}`).join('\n'));
      assert.strictEqual(Object.keys(results).length, 20);
      // (A subscriber's throw is diagnostics_channel's to report, as an uncaught exception.)
      const unexpected = problems.filter((p) => !(scenario === 'subscriber-throws' && /^uncaught exception: subscriber of /.test(p)));
      assert.deepStrictEqual(unexpected, []);
      if (sameEvents) assert.deepStrictEqual(events, untouched.events);
    });
  }
});
