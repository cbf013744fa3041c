'use strict';
// In a worker, the binding queues a waitAsync's waiter and answers with its
// slot; lib/atomics.js then makes the promise for it. Near the stack limit,
// a call made there that throws RangeError must not leave the waiter
// queued for a notify to count with nobody to see it. Every waitAsync that
// throws must leave nothing queued, and every wake-up a notify counts must
// reach a promise.

const assert = require('assert');
const { Worker } = require('worker_threads');
const { root } = require('../helpers');

// Calls waitAsync at many stack depths near the limit (recursing until
// RangeError, with frames of several sizes), counting the calls that threw
// and those that left a waiter queued anyway; then notifies all and counts
// the promises that see "ok".
const source = `
  const { workerData, parentPort } = require('worker_threads');
  const { waitAsync, notify, waitersForTesting } = require(workerData.root);
  const ta = new Int32Array(new SharedArrayBuffer(8));
  const promises = [];
  let failures = 0, leaks = 0;
  function attempt() {
    const before = waitersForTesting(ta, 0).registry;
    try { promises.push(waitAsync(ta, 0, 0).value); return true; }
    catch (e) { failures++; if (waitersForTesting(ta, 0).registry !== before) leaks++; return false; }
  }
  for (let k = 0; k < 60; k++) {
    const locals = Array.from({ length: k }, (_, i) => 'let v' + i + ' = x + ' + i + ';').join('');
    const uses = Array.from({ length: k }, (_, i) => 'v' + i).join('+') || '0';
    const dive = new Function('attempt', 'let done = false; return function dive(x) {' + locals +
      ' try { dive(x + 1); } catch (_) {} if (done) return ' + uses + '; if (attempt()) done = true; return ' + uses + '; }')(attempt);
    try { dive(0); } catch (_) {}
  }
  const queued = waitersForTesting(ta, 0).registry;
  const counted = notify(ta, 0);
  Promise.all(promises).then((values) => {
    const ok = values.filter((v) => v === 'ok').length;
    parentPort.postMessage({ failures, leaks, promises: promises.length, queued, counted, ok,
      pendingAfter: waitersForTesting().pending });
  });
`;

describe('waitAsync at the stack limit in a worker', function () {
  let worker;
  afterEach(async function () {
    if (worker) await worker.terminate();
    worker = undefined;
  });

  it('leaves no waiter queued when it throws, and every counted wake-up reaches a promise', async function () {
    worker = new Worker(source, { eval: true, workerData: { root } });
    const result = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    assert.ok(result.failures > 0, `no waitAsync reached the stack limit: ${JSON.stringify(result)}`);
    assert.strictEqual(result.leaks, 0, JSON.stringify(result));
    assert.strictEqual(result.queued, result.promises, JSON.stringify(result));
    assert.strictEqual(result.counted, result.promises, JSON.stringify(result));
    assert.strictEqual(result.ok, result.counted, JSON.stringify(result));
    assert.strictEqual(result.pendingAfter, 0, JSON.stringify(result));
  });
});
