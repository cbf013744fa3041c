'use strict';
// waitAsync's promise is an intrinsic %Promise%, as ECMA-262 (and native
// V8) make it, whatever globalThis.Promise is, also when the global is
// replaced before the package loads (a preload, zone.js). In worker threads
// lib/pending.js makes it: made with the global Promise of the moment, it
// would not be intrinsic with `globalThis.Promise = class extends Promise {}`,
// and waitAsync would throw with a replacement whose constructor throws.

const assert = require('assert');
const { Worker } = require('worker_threads');
const { root } = require('../helpers');

// `replace` runs in a worker, before or after the package loads; then a
// waitAsync, notified. Posts what it saw.
function source(replace, when) {
  return `
    const { workerData, parentPort } = require('worker_threads');
    const intrinsic = Object.getPrototypeOf((async () => {})());
    const replace = () => { ${replace} };
    if (${JSON.stringify(when)} === 'before') replace();
    const { waitAsync, notify } = require(workerData.root);
    if (${JSON.stringify(when)} === 'after') replace();
    const ta = new Int32Array(new SharedArrayBuffer(4));
    let result;
    try {
      result = waitAsync(ta, 0, 0);
    } catch (error) {
      parentPort.postMessage({ threw: String(error) });
    }
    if (result) {
      const intrinsicPromise = Object.getPrototypeOf(result.value) === intrinsic;
      notify(ta, 0, 1);
      intrinsic.then.call(result.value, (value) =>
        parentPort.postMessage({ async: result.async, intrinsicPromise, value })
      );
    }
  `;
}

const replacements = {
  'a subclass': 'globalThis.Promise = class extends Promise {};',
  'a constructor that throws': 'globalThis.Promise = function Promise() { throw new Error("not this one"); };',
  // Then %Promise% cannot be found at load: promises are made without it.
  'a constructor that throws (also as Promise.prototype.constructor)':
    'globalThis.Promise = Promise.prototype.constructor = function Promise() { throw new Error("not this one"); };',
};

describe('waitAsync makes intrinsic promises, whatever globalThis.Promise is', function () {
  this.timeout(60000);
  const started = [];
  afterEach(() => Promise.all(started.splice(0).map((worker) => worker.terminate())));

  for (const [name, replace] of Object.entries(replacements)) {
    for (const when of ['before', 'after']) {
      it(`in a worker, with ${name} as globalThis.Promise, set ${when} the package loads`, async () => {
        const worker = new Worker(source(replace, when), { eval: true, workerData: { root } });
        started.push(worker);
        const seen = await new Promise((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
        });
        assert.deepStrictEqual(seen, { async: true, intrinsicPromise: true, value: 'ok' });
      });
    }
  }
});
