'use strict';
// Issue item 7: the notifier thread's lazy start ran inside the registry's
// enqueue closure, under a bucket lock, and panicked (`expect`) when the
// thread could not start: the waitAsync failed with "panic in the addon",
// left its pending slot behind, and that slot kept the process alive for
// ever. Now the thread is started before any lock is taken, and a failure
// to start it is an ordinary Error that leaves nothing behind.

const assert = require('assert');
const { fixture, runNodeAsync } = require('./helpers');

describe('issue: the notifier thread cannot start', function () {
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
