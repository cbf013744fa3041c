'use strict';
// A piscina pool whose task takes the lock and is aborted, by its
// AbortSignal or by a timeout signal: piscina terminates the worker running
// it, which gives the lock back; the pool's later tasks all get the lock,
// the first of them told it was abandoned. (piscina 5 needs Node 20.)

const assert = require('assert');
const path = require('path');
const { AsyncLock } = require('../..');
const { until } = require('../helpers');

const major = Number(process.versions.node.split('.')[0]);

describe('AsyncLock in a piscina pool whose task is aborted while holding it', function () {
  this.timeout(60000);
  let Piscina;

  before(function () {
    if (major < 20 || process.versions.bun) this.skip();
    Piscina = require('piscina');
  });

  const cases = {
    'its AbortSignal': () => {
      const controller = new AbortController();
      return { signal: controller.signal, abort: () => controller.abort() };
    },
    'a timeout signal': () => ({ signal: AbortSignal.timeout(200), abort: () => {} }),
  };

  for (const [name, make] of Object.entries(cases)) {
    it(`by ${name}: the later tasks get the lock, the first told it was abandoned`, async () => {
      const pool = new Piscina({ filename: path.join(__dirname, '..', 'fixtures', 'piscina-lock-task.js'), maxThreads: 2 });
      try {
        const lock = new AsyncLock();
        const counter = new SharedArrayBuffer(4);
        const { signal, abort } = make();
        const held = pool.run({ lock, counter, mode: 'hold' }, { signal });
        await until(() => lock.holder() !== null, 'the task to take the lock');
        abort();
        await assert.rejects(held, (error) => error.name === 'AbortError' || error.name === 'TimeoutError');
        const results = [];
        for (let i = 0; i < 10; i++) results.push(await pool.run({ lock, counter, mode: 'count' }));
        assert.deepStrictEqual(
          results.map((r) => r.abandoned),
          [true, false, false, false, false, false, false, false, false, false]
        );
        assert.strictEqual(new Int32Array(counter)[0], 10);
        assert.strictEqual(lock.isLocked(), false);
      } finally {
        await pool.destroy();
      }
    });
  }
});
