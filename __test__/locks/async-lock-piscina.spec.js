'use strict';
// A piscina pool whose task takes the lock and is aborted, by its
// AbortSignal or by a timeout signal: piscina terminates the worker running
// it, which gives the lock back; the pool's later tasks all get the lock,
// the first of them told it was abandoned. In a child process
// (fixtures/piscina-lock-run.js). piscina 5 needs Node 20.

const assert = require('assert');
const { fixture, runNodeAsync } = require('../helpers');

const major = Number(process.versions.node.split('.')[0]);

describe('AsyncLock in a piscina pool whose task is aborted while holding it', function () {
  this.timeout(60000);

  it('by its AbortSignal or a timeout signal: the later tasks get the lock, the first told it was abandoned', async function () {
    if (major < 20 || process.versions.bun) this.skip();
    const result = await runNodeAsync([fixture('piscina-lock-run.js')]);
    assert.strictEqual(result.status, 0, result.stderr);
    const told = [true, false, false, false, false, false, false, false, false, false];
    assert.deepStrictEqual(JSON.parse(result.stdout), {
      signal: { ended: 'AbortError', abandoned: told, count: 10, locked: false },
      timeout: { ended: 'AbortError', abandoned: told, count: 10, locked: false },
    });
  });
});
