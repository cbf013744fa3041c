'use strict';
// Process lifetime, in child processes: a pending waitAsync keeps the loop
// alive until it settles, nothing pending exits at once, unref() opts out,
// and process.exit() with waiters pending never hangs or crashes.

const assert = require('assert');
const { fixture, runNodeAsync } = require('../helpers');

const run = (name) => runNodeAsync([fixture('exit-cases.js'), name]);

describe('process lifetime', function () {
  it('a pending waitAsync(…, 300) alone keeps the process alive until "timed-out", then it exits', async () => {
    const r = await run('keep-alive');
    assert.strictEqual(r.status, 0, r.stderr);
    const [value, ms] = r.stdout.trim().split(' ');
    assert.strictEqual(value, 'timed-out');
    assert.ok(Number(ms) >= 299, `settled after ${ms} ms`);
  });

  it('exits with nothing pending once the wait has settled', async () => {
    const r = await run('nothing-pending');
    assert.strictEqual(r.status, 0, r.stderr);
    assert.strictEqual(r.stdout.trim(), 'ok');
  });

  it('unref(): a pending wait does not hold the process open', async () => {
    const r = await run('unref');
    assert.strictEqual(r.status, 0, r.stderr);
    assert.strictEqual(r.stdout.trim(), 'queued', 'exited before the 60 s wait settled');
  });

  it('ref() after unref() restores keep-alive', async () => {
    const r = await run('re-ref');
    assert.strictEqual(r.status, 0, r.stderr);
    assert.strictEqual(r.stdout.trim(), 'timed-out');
  });

  it('a worker\'s pending waitAsync keeps it alive until it settles', async () => {
    const r = await run('worker-keep-alive');
    assert.strictEqual(r.status, 0, r.stderr);
    assert.strictEqual(r.stdout.trim(), 'timed-out');
  });

  it('process.exit() in the main thread with async and sync waiters pending exits cleanly', async () => {
    const r = await run('exit-main');
    assert.strictEqual(r.signal, null, r.stderr);
    assert.strictEqual(r.status, 0, r.stderr);
  });

  it('process.exit() in workers with waiters pending, while notifies run, leaves no waiter and no crash', async () => {
    const r = await run('exit-worker');
    assert.strictEqual(r.signal, null, r.stderr);
    assert.strictEqual(r.status, 0, r.stderr);
    assert.strictEqual(r.stdout.trim(), 'workers exited 0');
  });

  it('loads as an ES module by package name, with the same functions', async () => {
    // A file inside the package may import the package by its own name.
    const esm = await import('atomics-waitasync');
    const cjs = require('../..');
    assert.strictEqual(esm.waitAsync, cjs.waitAsync);
    assert.strictEqual(esm.notify, cjs.notify);
    assert.strictEqual(esm.wait, cjs.wait);
    assert.strictEqual(esm.default, cjs);
  });
});
