'use strict';
// Two copies of the package in one process (two versions in node_modules, a
// bundled copy), each loading its own copy of the binary: they must share one
// waiter core, or a wait through one copy is never woken by a notify through
// the other. Here on every runtime and platform the compat subset runs on;
// __test__/loading/two-copies.spec.js has the Linux cases in depth.

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');

const { copyPackage, patchAbiVersion } = require('../helpers');

const LOADED_FROM = Symbol.for('atomics-waitasync.binaryPath');

/** A second copy of the package at ctx.root, with a copy of the binary the first loaded, in a temp folder. */
function secondCopy(ctx) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'awa-second-copy-'));
  copyPackage(ctx.root, dir, require(path.join(ctx.root, 'binding.js'))[LOADED_FROM]);
  return dir;
}

/** Requires the copy in `dir` as a user would, with no ATOMICS_WAITASYNC_BINARY (each copy loads its own binary). */
function load(dir) {
  const override = process.env.ATOMICS_WAITASYNC_BINARY;
  delete process.env.ATOMICS_WAITASYNC_BINARY;
  try {
    return require(dir);
  } finally {
    if (override !== undefined) process.env.ATOMICS_WAITASYNC_BINARY = override;
  }
}

/** Removes a copy's folder; Windows keeps a loaded DLL's file, which then stays in the OS temp folder. */
function remove(dir) {
  try {
    if (fs.rmSync) fs.rmSync(dir, { recursive: true, force: true });
    else fs.rmdirSync(dir, { recursive: true }); // Node 12
  } catch (error) {
    // EBUSY / EPERM on Windows
  }
}

/** The second copy in `dir` and the first wake each other's waiters, async and blocking. */
async function shareOneCore(ctx, dir) {
  const other = load(dir);
  const first = require(path.join(ctx.root, 'binding.js'))[LOADED_FROM];
  const second = require(path.join(dir, 'binding.js'))[LOADED_FROM];
  assert.notStrictEqual(second, first, 'the second copy loaded its own binary');
  assert.strictEqual(path.dirname(second), fs.realpathSync(dir));

  const ta = new Int32Array(new SharedArrayBuffer(16));
  const viaFirst = ctx.api.waitAsync(ta, 0, 0);
  assert.strictEqual(viaFirst.async, true);
  assert.strictEqual(other.waitersForTesting(ta, 0).registry, 1, 'the other copy sees the waiter');
  assert.strictEqual(other.notify(ta, 0), 1);
  assert.strictEqual(await viaFirst.value, 'ok');

  const viaSecond = other.waitAsync(ta, 1, 0);
  assert.strictEqual(ctx.api.notify(ta, 1), 1);
  assert.strictEqual(await viaSecond.value, 'ok');

  // A worker's blocking wait through the first copy, woken through the second.
  const w = ctx.startWorker(ta.buffer);
  const blocked = w.call({ op: 'wait', index: 2, value: 0 });
  await ctx.until(() => other.waitersForTesting(ta, 2).registry === 1);
  assert.strictEqual(other.notify(ta, 2), 1);
  assert.strictEqual(await blocked, 'ok');
}

/** The second copy in `dir`, patched to another version, refuses to load; the first goes on. */
async function refuseAnotherAbi(ctx, dir) {
  patchAbiVersion(path.join(dir, 'atomics-waitasync.node'), require(path.join(ctx.root, 'package.json')).version);
  let error = null;
  try {
    load(dir);
  } catch (e) {
    error = e;
  }
  assert.ok(error, 'the second copy loaded');
  assert.strictEqual(error.code, 'ERR_ATOMICS_WAITASYNC_ABI_MISMATCH', error.message);
  const first = require(path.join(ctx.root, 'binding.js'))[LOADED_FROM];
  for (const part of [path.basename(dir), path.basename(path.dirname(first)), 'dedupe']) {
    assert.ok(error.message.includes(part), `the message names ${part}: ${error.message}`);
  }
  const ta = new Int32Array(new SharedArrayBuffer(16));
  const r = ctx.api.waitAsync(ta, 0, 0);
  assert.strictEqual(ctx.api.notify(ta, 0), 1);
  assert.strictEqual(await r.value, 'ok');
}

/** Runs `check(ctx, dir)` on a fresh second copy, and removes the copy whatever the outcome. */
function withSecondCopy(check) {
  return async (ctx) => {
    const dir = secondCopy(ctx);
    try {
      await check(ctx, dir);
    } finally {
      remove(dir);
    }
  };
}

module.exports = [
  {
    name: 'two copies of the package share one waiter core: each wakes the waiters of the other',
    run: withSecondCopy(shareOneCore),
  },
  {
    name: 'a copy whose core has another ABI refuses to load, naming both copies; the first goes on',
    run: withSecondCopy(refuseAnotherAbi),
  },
];
