'use strict';
// Every property descriptor lib/ hands to defineProperty has a null
// prototype, so that properties a program puts on Object.prototype do not
// become part of it: with `Object.prototype.get` set, a plain `{ value }`
// is an invalid descriptor (a TypeError), and a getter `enumerable` changes
// the attributes.

const assert = require('assert');
const { AsyncLock, waitAsync, notify } = require('../..');

/** Runs `f` with `Object.prototype[key]` defined as `descriptor`. */
async function polluted(key, descriptor, f) {
  Object.defineProperty(Object.prototype, key, { configurable: true, ...descriptor });
  try {
    return await f();
  } finally {
    delete Object.prototype[key];
  }
}

describe('descriptors immune to Object.prototype', function () {
  it('Object.prototype.get: acquire on a free and on a held lock resolves, and the lock ends free', async () => {
    const lock = new AsyncLock();
    const other = new AsyncLock(lock.sab);
    await polluted('get', { value: function get() {}, writable: true }, async () => {
      const release = await lock.acquire(); // free: the release function's own `then`
      const waiter = other.acquire(); // held: its waitAsync promise's own `constructor`
      release();
      (await waiter)();
    });
    assert.strictEqual(lock.isLocked(), false);
  });

  it('Object.prototype.get: waitAsync and notify still work', async () => {
    const i32a = new Int32Array(new SharedArrayBuffer(4));
    await polluted('get', { value: function get() {}, writable: true }, async () => {
      const { async, value } = waitAsync(i32a, 0, 0);
      assert.strictEqual(async, true);
      assert.strictEqual(notify(i32a, 0), 1);
      assert.strictEqual(await value, 'ok');
    });
  });

  it('Object.prototype.get: after a forced install, a Worker with its own execArgv starts (child process)', () => {
    const { runNode, root } = require('../helpers');
    // (Node 14's own perf_hooks cannot load with Object.prototype.get set:
    // its event_target loads it as a MessagePort closes. Node 20 has it in
    // its start-up snapshot; the package no longer loads it for you.)
    const program = `
      require(${JSON.stringify(root)}).install({ force: true });
      require('perf_hooks');
      Object.defineProperty(Object.prototype, 'get', { configurable: true, writable: true, value: function get() {} });
      const { Worker } = require('worker_threads');
      const worker = new Worker('require("worker_threads").parentPort.postMessage(typeof Atomics.waitAsync)', { eval: true, execArgv: [] });
      worker.once('message', (m) => { console.log(m); });
    `;
    const result = runNode(['-e', program]);
    assert.deepStrictEqual([result.status, result.stderr], [0, ''], result.stderr);
    assert.strictEqual(result.stdout.trim(), 'function');
  });
});

