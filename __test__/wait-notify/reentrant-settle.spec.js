'use strict';
// JavaScript that runs while the binding settles promises (promise hooks,
// async_hooks) may call back into the binding. The binding must neither
// hold `&mut` to its per-env state across those calls (two live `&mut` to
// one state: undefined behaviour) nor free the slots of a chunk before JS
// has settled it: a waitAsync queued from a promiseResolve hook would reuse
// one of them, an old outcome would settle the new waiter ("ok" without a
// notify), and the old waiter's promise would never settle.

const assert = require('assert');
const { Worker } = require('worker_threads');
const { root } = require('../helpers');

// In a worker: two waiters on ta[0], both notified at once; resolving the
// first one's promise runs a promiseResolve hook that queues a new waiter on
// ta[1]. Posts what settled, and the counts; then, once told to, wakes the
// new waiter and posts how it settled.
const source = `
  const async_hooks = require('async_hooks');
  const { workerData, parentPort } = require('worker_threads');
  const { createAtomics } = require(workerData.root + '/lib/atomics.js');
  const binding = require(workerData.root + '/binding.js');
  // promisesInJs: lib/pending.js's promises (the default in workers), or N-API deferreds.
  // (Not the package's index.js: it would register lib/pending.js in this worker.)
  const api = createAtomics(binding, binding.notify, workerData.promisesInJs);
  const { waitAsync, notify } = api;
  const ta = new Int32Array(workerData.sab);
  let armed = false;
  const settled = [];
  let fresh;
  async_hooks.createHook({
    promiseResolve() {
      if (!armed) return;
      armed = false;
      fresh = waitAsync(ta, 1, 0).value;
      fresh.then((value) => settled.push('new ' + value));
    },
  }).enable();
  const old = [waitAsync(ta, 0, 0).value, waitAsync(ta, 0, 0).value];
  old.forEach((promise, i) => promise.then((value) => settled.push('old' + i + ' ' + value)));
  armed = true;
  notify(ta, 0, 2);
  Promise.all(old).then(() => {
    const counts = [api.waitersForTesting(ta, 0).registry, api.waitersForTesting(ta, 1).registry];
    parentPort.postMessage({ settled: settled.slice(), counts, pending: api.waitersForTesting().pending });
    parentPort.once('message', () => {
      notify(ta, 1, 1);
      fresh.then(() => parentPort.postMessage({ settled, pending: api.waitersForTesting().pending }));
    });
  });
`;

/** Resolves with `promise`'s value, or with 'still waiting' after `ms` (a failure bound only). */
function within(promise, ms) {
  let timer;
  const late = new Promise((resolve) => (timer = setTimeout(resolve, ms, 'still waiting')));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('JS re-entering the binding while it settles promises', function () {
  this.timeout(60000);
  const started = [];
  afterEach(() => Promise.all(started.splice(0).map((worker) => worker.terminate())));

  for (const promisesInJs of [true, false]) {
    it(`a waitAsync from a promiseResolve hook gets its own outcome (${promisesInJs ? 'JS promises' : 'N-API deferreds'})`, async () => {
      for (let round = 0; round < 3; round++) {
        const sab = new SharedArrayBuffer(8);
        const worker = new Worker(source, { eval: true, workerData: { root, sab, promisesInJs } });
        started.push(worker);
        const next = () => new Promise((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
        });
        const first = await within(next(), 5000);
        assert.deepStrictEqual(
          first,
          { settled: ['old0 ok', 'old1 ok'], counts: [0, 1], pending: 1 },
          `round ${round}: the old waiters settle, the new one waits`
        );
        const second = next();
        worker.postMessage('wake the new one');
        assert.deepStrictEqual(await within(second, 5000), {
          settled: ['old0 ok', 'old1 ok', 'new ok'],
          pending: 0,
        });
      }
    });
  }

  // While the binding makes a waitAsync's promise (N-API deferreds run the
  // init hook inside that call), the hook queues another waiter: both work.
  const initSource = `
    const async_hooks = require('async_hooks');
    const { workerData, parentPort } = require('worker_threads');
    const { createAtomics } = require(workerData.root + '/lib/atomics.js');
    const binding = require(workerData.root + '/binding.js');
    const api = createAtomics(binding, binding.notify, workerData.promisesInJs);
    const ta = new Int32Array(workerData.sab);
    let armed = true;
    let inner;
    async_hooks.createHook({
      init(id, type) {
        if (!armed || type !== 'PROMISE') return;
        armed = false;
        inner = api.waitAsync(ta, 1, 0);
      },
    }).enable();
    const outer = api.waitAsync(ta, 0, 0);
    const counts = [api.waitersForTesting(ta, 0).registry, api.waitersForTesting(ta, 1).registry];
    api.notify(ta, 0, 1);
    api.notify(ta, 1, 1);
    Promise.all([outer.value, inner.value]).then((values) =>
      parentPort.postMessage({ async: [outer.async, inner.async], values, counts, pending: api.waitersForTesting().pending })
    );
  `;
  for (const promisesInJs of [true, false]) {
    it(`a waitAsync from an init hook, while a promise is made, works (${promisesInJs ? 'JS promises' : 'N-API deferreds'})`, async () => {
      const sab = new SharedArrayBuffer(8);
      const worker = new Worker(initSource, { eval: true, workerData: { root, sab, promisesInJs } });
      started.push(worker);
      const result = new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      assert.deepStrictEqual(await within(result, 5000), {
        async: [true, true],
        values: ['ok', 'ok'],
        counts: [1, 1],
        pending: 0,
      });
    });
  }
});
