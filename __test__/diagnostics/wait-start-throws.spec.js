'use strict';
// Every primitive calls waitStart before its take changes anything that
// says it waits, so that a waitStart that throws (a deadlock check may)
// leaves nothing queued or counted: the take fails with its error, and
// the primitive is as it was. The first case runs in a child, whose copy
// of lib/diagnostics.js has a waitStart that always throws
// (__test__/fixtures/diagnostics-wait-start-throws.js); the second, here,
// makes lib/diagnostics.js's own waitStart throw after it registered the
// wait.

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

  // waitStart registers the wait first (query() lists it; with deadlock
  // detection on, that is the check), then publishes wait:start: should
  // that throw, the take fails, and its wait must leave the table again.
  // (A subscriber's throw does not reach the publisher: diagnostics_channel
  // reports it as an uncaught exception, on the next tick. The channel's
  // publish is what throws here.)
  it('throwing after it registered the wait (its wait:start publish throws): the take fails, and query() lists no wait left behind', async () => {
    const dc = require('diagnostics_channel');
    const { AsyncLock, query } = require('../..');
    const name = `wait-start-publish-throws-${process.pid}`;
    const holder = new AsyncLock({ name });
    const lock = AsyncLock.from(holder);
    const refused = new Error('publish refused');
    const start = dc.channel('atomics-waitasync:AsyncLock:wait:start');
    const subscriber = () => {};
    start.subscribe(subscriber);
    start.publish = () => {
      throw refused;
    };
    holder.lock();
    try {
      await assert.rejects(lock.acquire(), (error) => error === refused);
      assert.throws(() => lock.lock(1000), (error) => error === refused);
      const entry = query().primitives.find((p) => p.name === name);
      assert.deepStrictEqual(entry.waiters, []);
    } finally {
      delete start.publish;
      start.unsubscribe(subscriber);
      holder.unlock();
    }
  });
});
