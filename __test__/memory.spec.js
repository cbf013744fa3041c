'use strict';
// Memory: a pending waitAsync keeps its SharedArrayBuffer alive; a settled
// one retains nothing; creating and settling many waiters leaves RSS flat.

const assert = require('assert');
const v8 = require('v8');
const vm = require('vm');
const { waitAsync, notify, waitersForTesting } = require('..');
const { until } = require('./helpers');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

async function collect() {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('memory', function () {
  this.timeout(120000);

  (typeof FinalizationRegistry === 'function' ? it : it.skip)(
    'a pending waiter keeps its SharedArrayBuffer alive; once settled it is collectable',
    async () => {
      let finalized = false;
      const registry = new FinalizationRegistry(() => (finalized = true));
      let settled = false;
      (() => {
        const sab = new SharedArrayBuffer(16);
        registry.register(sab, 'sab');
        waitAsync(new Int32Array(sab), 0, 0, 500).value.then(() => (settled = true));
      })();
      // Nothing but the waiter refers to the buffer now. Collect over and
      // over while it is pending: the buffer must survive every time.
      let collections = 0;
      while (!settled) {
        await collect();
        collections++;
        if (finalized) assert.ok(settled, 'collected while its waiter was pending');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.ok(collections >= 1, 'no collection ran while the waiter was pending');
      await until(() => {
        gc();
        return finalized;
      }, 'the settled waiter\'s buffer to be collected');
    }
  );

  it('1,000,000 waiters created and settled in batches leave RSS flat and counters at zero', async () => {
    const ta = new Int32Array(new SharedArrayBuffer(16));
    const batch = 10000;
    const total = process.env.CI ? 1000000 : 300000;
    const round = async () => {
      const promises = new Array(batch);
      for (let i = 0; i < batch; i++) promises[i] = waitAsync(ta, 0, 0, i % 2 ? 1e7 : undefined).value;
      assert.strictEqual(notify(ta, 0), batch);
      await Promise.all(promises);
    };
    // Warm up until the heap and allocator pools reach their steady size
    // (RSS climbs for the first ~300,000 waiters, then stays flat).
    for (let i = 0; i < 50; i++) await round();
    await collect();
    const before = process.memoryUsage().rss;
    for (let done = 0; done < total; done += batch) await round();
    await collect();
    const grownMb = (process.memoryUsage().rss - before) / 1048576;
    assert.ok(grownMb < 10, `RSS grew ${grownMb.toFixed(1)} MB over ${total} waiters`);
    assert.strictEqual(waitersForTesting().pending, 0);
    assert.strictEqual(waitersForTesting(ta, 0).registry, 0);
    await until(() => waitersForTesting().timers === 0, 'cancelled deadlines to be dropped');
  });
});
