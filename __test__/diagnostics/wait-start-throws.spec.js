'use strict';
// Every primitive calls waitStart before its take changes anything that
// says it waits, so that a waitStart that throws (a deadlock check may)
// leaves nothing queued or counted: the take fails with its error, and
// the primitive is as it was. Run in a child, whose copy of
// lib/diagnostics.js has a waitStart that always throws
// (__test__/fixtures/diagnostics-wait-start-throws.js).

const assert = require('assert');
const { runNodeAsync } = require('../helpers');

describe('diagnostics: a waitStart that throws', function () {
  this.timeout(60000);

  it('fails the take and leaves nothing behind, for every primitive', async () => {
    const { status, stdout, stderr } = await runNodeAsync([require.resolve('../fixtures/diagnostics-wait-start-throws.js')]);
    assert.strictEqual(status, 0, stderr);
    const results = JSON.parse(stdout);
    const failed = Object.keys(results).filter((name) => results[name] !== 'ok');
    assert.deepStrictEqual(failed, [], failed.map((name) => `${name}: ${results[name]}`).join('\n'));
    assert.strictEqual(Object.keys(results).length, 9);
  });
});
