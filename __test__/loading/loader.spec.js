'use strict';
// binding.js, the loader, in child processes over a copy of the package's
// JavaScript in a temporary folder: which binary it takes, in which order,
// and what it says when none loads.

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { root, runNodeAsync } = require('../helpers');

const BUILT = path.join(root, 'atomics-waitasync.node');
const TAG = `${process.platform}-${process.arch}-gnu`;
const LOADED_FROM = 'Symbol.for("atomics-waitasync.binaryPath")';

/** A package folder with the JS files and none of the binaries. */
function copyPackage() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'awa-loader-'));
  for (const file of ['index.js', 'binding.js', 'package.json']) fs.copyFileSync(path.join(root, file), path.join(dir, file));
  fs.mkdirSync(path.join(dir, 'lib'));
  for (const file of fs.readdirSync(path.join(root, 'lib'))) {
    fs.copyFileSync(path.join(root, 'lib', file), path.join(dir, 'lib', file));
  }
  return dir;
}

function put(dir, relative, from) {
  const to = path.join(dir, relative);
  fs.mkdirSync(path.dirname(to), { recursive: true });
  if (from === undefined) fs.writeFileSync(to, 'not an ELF file\n');
  else fs.copyFileSync(from, to);
  return to;
}

/** Requires the package in `dir` in a child; resolves to what it loaded, or the error's fields. */
async function load(dir, env = {}) {
  const program = `
    try {
      const api = require(${JSON.stringify(dir)});
      const binding = require(${JSON.stringify(path.join(dir, 'binding.js'))});
      const ia = new Int32Array(new SharedArrayBuffer(4));
      console.log(JSON.stringify({ from: binding[${LOADED_FROM}], value: api.wait(ia, 0, 1, 0) }));
    } catch (e) {
      console.log(JSON.stringify({ code: e.code, message: e.message, platform: e.platform, arch: e.arch,
        libc: e.libc, tried: e.tried, cause: e.cause && e.cause.message }));
    }`;
  const childEnv = { ...process.env, ...env };
  if (!('ATOMICS_WAITASYNC_BINARY' in env)) delete childEnv.ATOMICS_WAITASYNC_BINARY;
  const r = await runNodeAsync(['-e', program], { env: childEnv });
  assert.strictEqual(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

describe('loader (binding.js)', function () {
  let dir;
  beforeEach(() => {
    dir = copyPackage();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('with no binary at all, throws ERR_ATOMICS_WAITASYNC_NO_BINARY naming the platform, each path and the build command', async () => {
    const r = await load(dir);
    assert.strictEqual(r.code, 'ERR_ATOMICS_WAITASYNC_NO_BINARY');
    assert.deepStrictEqual([r.platform, r.arch, r.libc], [process.platform, process.arch, 'gnu']);
    assert.match(r.message, new RegExp(`no native addon loads on ${process.platform}-${process.arch} \\(glibc\\)`));
    const local = path.join(dir, 'atomics-waitasync.node');
    const prebuilt = path.join(dir, 'prebuilds', TAG, 'atomics-waitasync.node');
    assert.deepStrictEqual(r.tried, [
      { path: local, why: 'local source build', error: 'not found' },
      { path: prebuilt, why: 'prebuilt binary', error: 'not found' },
    ]);
    assert.ok(r.message.includes(`${local} (local source build): not found`), r.message);
    assert.ok(r.message.includes(`${prebuilt} (prebuilt binary): not found`), r.message);
    assert.match(r.message, /\n {2}npx atomics-waitasync-build$/);
  });

  it('takes the prebuilt binary for this platform, arch and libc when there is no local build', async () => {
    const prebuilt = put(dir, `prebuilds/${TAG}/atomics-waitasync.node`, BUILT);
    assert.deepStrictEqual(await load(dir), { from: prebuilt, value: 'not-equal' });
  });

  it('prefers a local source build over the prebuilt binary', async () => {
    put(dir, `prebuilds/${TAG}/atomics-waitasync.node`, BUILT);
    const local = put(dir, 'atomics-waitasync.node', BUILT);
    assert.deepStrictEqual(await load(dir), { from: local, value: 'not-equal' });
  });

  it('goes past a local build that does not load to the prebuilt one', async () => {
    put(dir, 'atomics-waitasync.node');
    const prebuilt = put(dir, `prebuilds/${TAG}/atomics-waitasync.node`, BUILT);
    assert.deepStrictEqual(await load(dir), { from: prebuilt, value: 'not-equal' });
  });

  it('when every file fails to load, gives each path with its own load error', async () => {
    const local = put(dir, 'atomics-waitasync.node');
    const prebuilt = put(dir, `prebuilds/${TAG}/atomics-waitasync.node`);
    const r = await load(dir);
    assert.strictEqual(r.code, 'ERR_ATOMICS_WAITASYNC_NO_BINARY');
    assert.deepStrictEqual(r.tried.map((t) => t.path), [local, prebuilt]);
    for (const t of r.tried) {
      // The dynamic loader's own words, e.g. "…: invalid ELF header".
      assert.match(t.error, /invalid ELF header|file too short/, t.error);
      assert.ok(t.error.includes(t.path), t.error);
      assert.ok(r.message.includes(`${t.path} (${t.why}): ${t.error}`), r.message);
    }
    assert.ok(r.cause.includes(prebuilt), `the last load error is the cause: ${r.cause}`);
  });

  it('ATOMICS_WAITASYNC_BINARY comes first, and when it does not load nothing else is tried', async () => {
    put(dir, 'atomics-waitasync.node', BUILT);
    const elsewhere = put(dir, 'custom/any-name.node', BUILT);
    assert.deepStrictEqual(await load(dir, { ATOMICS_WAITASYNC_BINARY: elsewhere }), { from: elsewhere, value: 'not-equal' });

    const missing = path.join(dir, 'custom', 'missing.node');
    const r = await load(dir, { ATOMICS_WAITASYNC_BINARY: missing });
    assert.strictEqual(r.code, 'ERR_ATOMICS_WAITASYNC_NO_BINARY');
    assert.deepStrictEqual(r.tried, [{ path: missing, why: 'ATOMICS_WAITASYNC_BINARY', error: 'not found' }]);
  });

  it('keeps to syntax Node 12.22 parses (no ?., no ??, no node: specifiers), with lib/platform.js it requires', () => {
    for (const file of ['binding.js', 'lib/platform.js']) {
      const source = fs.readFileSync(path.join(root, file), 'utf8').replace(/\/\/.*$/gm, '');
      assert.doesNotMatch(source, /\?\.|\?\?|['"]node:/, file);
    }
  });
});
