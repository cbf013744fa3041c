'use strict';
// When the notifier thread (started by the first waitAsync with a timeout)
// cannot start, that waitAsync throws an ordinary Error and leaves nothing
// behind, and the process exits. The thread is started before any
// registry lock is taken: started under a bucket lock and failing there
// with a panic (`expect`), the waitAsync would fail with "panic in the
// addon" and leave its pending slot behind, keeping the process alive for
// ever.

const assert = require('assert');
const { fixture, runNodeAsync } = require('../helpers');

describe('when the notifier thread cannot start', function () {
  this.timeout(60000);

  it('waitAsync with a timeout throws an Error, leaves nothing behind, and the process exits', async () => {
    const result = await runNodeAsync([fixture('notifier-start-fails.js')]);
    assert.deepStrictEqual([result.status, result.signal], [0, null], result.stderr);
    const report = JSON.parse(result.stdout);
    assert.strictEqual(report.error && report.error.name, 'Error');
    assert.match(report.error.message, /cannot start the notifier thread/);
    assert.deepStrictEqual(report.after, { registry: 0, pending: 0, timers: 0, retriers: 0 });
    assert.deepStrictEqual([report.woken, report.value], [1, 'ok']);
    assert.deepStrictEqual(report.end, { registry: 0, pending: 0, timers: 0, retriers: 0 });
  });
});
