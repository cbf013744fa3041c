'use strict';
// A waitAsync made from inside another one's argument coercion (`valueOf`),
// in the main thread and in a worker: both waiters are queued in the order
// their calls reached the registry, each gets a promise of its own, and one
// notify(…, 2) settles both with "ok". In workers lib/atomics.js hands each
// queued waiter a promise made before the binding call; the inner call uses
// that spare, so the outer one must make another before it calls the binding.

const assert = require('assert');
const { Worker } = require('worker_threads');
const { root } = require('../helpers');

const program = `
  const { waitAsync, notify, waitersForTesting } = require(ROOT);
  const ta = new Int32Array(new SharedArrayBuffer(4));
  let inner;
  const outer = waitAsync(ta, 0, { valueOf() { inner = waitAsync(ta, 0, 0); return 0; } });
  const queued = waitersForTesting(ta, 0).registry;
  const counted = notify(ta, 0, 2);
  Promise.all([inner.value, outer.value]).then((values) => report({
    async: [inner.async, outer.async],
    distinct: inner.value !== outer.value,
    queued,
    counted,
    values,
    left: waitersForTesting(ta, 0).registry,
  }));
`;

const expected = { async: [true, true], distinct: true, queued: 2, counted: 2, values: ['ok', 'ok'], left: 0 };

describe('waitAsync called again from its own argument coercion', function () {
  this.timeout(30000);
  let worker;
  afterEach(() => worker && worker.terminate());

  it('in a worker: two waiters, two promises, both settled "ok" by one notify', async () => {
    const source = `const { parentPort } = require('worker_threads'); const ROOT = ${JSON.stringify(root)};
      const report = (r) => parentPort.postMessage(r);` + program;
    worker = new Worker(source, { eval: true });
    const seen = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    assert.deepStrictEqual(seen, expected);
  });

  it('in the main thread: the same', async () => {
    const seen = await new Promise((resolve) => {
      new Function('require', 'ROOT', 'report', program)(require, root, resolve);
    });
    assert.deepStrictEqual(seen, expected);
  });
});
