'use strict';
// Where the runtime has no diagnostics_channel (Node 12, Node 14 before
// 14.17), nothing is published and nothing breaks: takes that wait,
// traced calls and an abandoned lock work as ever. Run in a child where
// require('diagnostics_channel') fails as it does there
// (__test__/fixtures/diagnostics-no-channel.js).

const assert = require('assert');
const { runNodeAsync } = require('../helpers');

describe('diagnostics: a runtime without diagnostics_channel', function () {
  this.timeout(60000);

  it('publishes nothing and throws nothing', async () => {
    const { status, stdout, stderr } = await runNodeAsync([require.resolve('../fixtures/diagnostics-no-channel.js')]);
    assert.strictEqual(stdout.trim(), 'ok', stderr);
    assert.strictEqual(status, 0, stderr);
  });
});
