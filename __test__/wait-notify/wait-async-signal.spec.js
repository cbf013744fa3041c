'use strict';
// The package's waitAsync takes an optional 5th argument, `{ signal }`: an
// abort takes the waiter out of the queue (a later notify neither wakes nor
// counts it) and rejects with the signal's reason; an already aborted
// signal rejects without queueing; the spec's arguments behave as always.
// In the main thread and in a worker (the two ways promises are kept).

const assert = require('assert');
const path = require('path');
const { Worker } = require('worker_threads');
const { run } = require('../fixtures/wait-async-signal');
const { root, runNodeAsync } = require('../helpers');

const expected = {
  abortWhileQueued: {
    queued: [true, 1],
    outcome: { rejected: 'stop', name: 'Error' },
    left: 0,
    notifyFinds: 0,
    listeners: 0,
    pendingHere: 0,
  },
  alreadyAborted: { async: true, queued: 0, outcome: { rejected: 'stop', name: 'Error' } },
  noReason: { rejected: 'The operation was aborted', name: 'AbortError' },
  notifiedFirst: { woke: 1, outcome: { value: 'ok' }, listeners: 0 },
  notifiedThenAborted: { counted: 1, outcome: { value: 'ok' }, listeners: 0 },
  slotReuse: { sameSlot: true, newId: true, staleCancel: false, stillQueued: 1, woken: 1, second: { value: 'ok' } },
  timeout: { outcome: { value: 'timed-out' }, listeners: 0 },
  notEqual: { async: false, value: 'not-equal' },
  errors: [
    'RangeError: The "index" argument 99 is out of range: the typed array has 4 elements',
    'TypeError: The "options.signal" property must be an AbortSignal. Received 5',
    'TypeError: The "options" argument must be an object. Received 5',
    'TypeError: The "options" argument must be an object. Received null',
  ],
  emptyOptions: { async: false, value: 'not-equal' },
  length: 4,
  end: { registry: [0, 0, 0, 0], pending: 0 },
};

describe('waitAsync with a signal (the 5th argument)', function () {
  it('in the main thread: an abort takes the waiter out and rejects; nothing else changes', async () => {
    assert.deepStrictEqual(await run(), expected);
  });

  it('in a worker: the same', async () => {
    const worker = new Worker(path.join(__dirname, '..', 'fixtures', 'wait-async-signal.js'), { workerData: { run: true } });
    const report = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    assert.deepStrictEqual(report, expected);
  });

  it('an aborted wait no longer keeps the process alive', async () => {
    const script = `
      const { waitAsync } = require(${JSON.stringify(root)});
      // (Node 14 has no AbortController: a signal with its surface.)
      const listeners = [];
      const signal = {
        aborted: false,
        reason: undefined,
        addEventListener: (type, f) => listeners.push(f),
        removeEventListener: (type, f) => listeners.splice(listeners.indexOf(f), 1),
      };
      const ia = new Int32Array(new SharedArrayBuffer(4));
      waitAsync(ia, 0, 0, undefined, { signal }).value.catch((e) => console.log(e.message));
      setTimeout(() => {
        signal.aborted = true;
        signal.reason = new Error('aborted');
        listeners.slice().forEach((f) => f({ type: 'abort' }));
      }, 20).unref();
    `;
    const result = await runNodeAsync(['-e', script]);
    assert.deepStrictEqual([result.status, result.stdout.trim()], [0, 'aborted'], result.stderr);
  });
});
