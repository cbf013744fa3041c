'use strict';
// Two copies of the package in one process (two versions in node_modules,
// a bundled copy), each loading its own .node file, with statics of its
// own: a waiter made through one copy must be woken by a notify through the
// other. The first copy loaded owns the process's waiter core (registry,
// notifier thread, deadline epoch) and a later copy with the same ABI uses
// it; a later copy with another ABI fails to load, saying so.
//
// Real copies: the package's JS in two temp dirs, each with its own copy of
// the binary (cp, not a link: the loader dedupes by inode), loaded in a child
// process.

const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const helpers = require('../helpers');

const { root, fixture, runNodeAsync, atomicsTakeUnshared } = helpers;

const BINARY = require('../../binding')[Symbol.for('atomics-waitasync.binaryPath')];
const { version } = require('../../package.json');

/** A copy of the package (its JS and a copy of the binary) in `dir`. */
const copyPackage = (dir) => helpers.copyPackage(root, dir, BINARY);

/** Makes the binary at `file` another version (its ABI marker's); returns that version. */
const patchVersion = (file) => helpers.patchAbiVersion(file, version);

/**
 * Makes the binary at `file` a build of the same version from other
 * sources, as far as its core's ABI marker goes (the source hash's last hex
 * digit changed); returns the new hash.
 */
function patchSource(file) {
  const bytes = fs.readFileSync(file);
  const start = bytes.indexOf(Buffer.from('atomics-waitasync core ABI'));
  assert.notStrictEqual(start, -1, 'the binary carries its ABI marker');
  const field = Buffer.from('; source fnv1a64 ');
  const at = bytes.indexOf(field, start);
  assert.ok(at !== -1 && at - start < 300, 'the marker has a source hash');
  const last = at + field.length + 15;
  bytes[last] = bytes[last] === 0x30 ? 0x31 : 0x30; // last digit: 0, or 1
  fs.writeFileSync(file, bytes);
  return bytes.toString('latin1', at + field.length, last + 1);
}

describe('two copies of the package in one process', function () {
  this.timeout(60000);
  let dir;
  let env;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atomics-waitasync-copies-'));
    env = { ...process.env };
    delete env.ATOMICS_WAITASYNC_BINARY; // each copy loads its own binary
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function run(scenario, dirA, dirB) {
    const result = await runNodeAsync([fixture('two-copies.js'), scenario, dirA, dirB], { env });
    assert.deepStrictEqual([result.status, result.signal], [0, null], result.stderr);
    return JSON.parse(result.stdout);
  }

  function twoCopies() {
    const a = path.join(dir, 'a', 'node_modules', 'atomics-waitasync');
    const b = path.join(dir, 'b', 'node_modules', 'atomics-waitasync');
    return [a, b, copyPackage(a), copyPackage(b)];
  }

  const empty = { registry: 0, pending: 0, timers: 0, retriers: 0 };

  it('a waitAsync through one copy is woken by a notify through the other, in the same thread', async () => {
    const [a, b, binaryA, binaryB] = twoCopies();
    const report = await run('sameThread', a, b);
    assert.deepStrictEqual(report.binaries, [binaryA, binaryB], 'two binaries were loaded');
    assert.strictEqual(report.seenByB, 1, "B sees A's waiter");
    assert.strictEqual(report.wokenByB, 1, "B's notify wakes A's waiter");
    assert.strictEqual(report.first, 'ok');
    assert.strictEqual(report.wokenByA, 1, "A's notify wakes B's waiter");
    assert.strictEqual(report.second, 'ok');
    assert.deepStrictEqual(report.end, [empty, empty]);
  });

  it('an object listed before this copy that the loader cannot look up again is passed over, not a crash', async function () {
    // As for an object unloaded between the listing and the look-up:
    // dlopen(RTLD_NOLOAD) answers NULL for libm here, through an LD_PRELOAD
    // interposer built with this machine's C compiler.
    if (process.platform !== 'linux') this.skip(); // the walk with dlopen is Linux's
    const cc = ['cc', 'gcc', 'clang'].find((c) => spawnSync(c, ['--version']).status === 0);
    if (!cc) this.skip(); // no C compiler to build the interposer with
    const library = path.join(dir, 'dlopen-noload-fails.so');
    const built = spawnSync(cc, ['-shared', '-fPIC', '-o', library, fixture('dlopen-noload-fails.c'), '-ldl'], { encoding: 'utf8' });
    assert.strictEqual(built.status, 0, built.stderr);
    const [a, b, binaryA, binaryB] = twoCopies();
    const preloaded = { ...env, LD_PRELOAD: library, AWA_NOLOAD_FAILS: 'libm.so' };
    const result = await runNodeAsync([fixture('two-copies.js'), 'sameThread', a, b], { env: preloaded });
    assert.deepStrictEqual([result.status, result.signal], [0, null], result.stderr);
    assert.match(result.stderr, /dlopen-noload-fails: \S*libm\.so/, 'the interposer failed a look-up');
    const report = JSON.parse(result.stdout);
    assert.deepStrictEqual(report.binaries, [binaryA, binaryB], 'two binaries were loaded');
    assert.deepStrictEqual([report.wokenByB, report.first, report.wokenByA, report.second], [1, 'ok', 1, 'ok']);
  });

  it('a copy loaded RTLD_GLOBAL first still owns the core: a later copy uses it, both ways', async () => {
    const [a, b, binaryA, binaryB] = twoCopies();
    const report = await run('globalFirst', a, b);
    assert.deepStrictEqual(report.binaries, [binaryA, binaryB], 'two binaries were loaded');
    assert.strictEqual(report.seenByB, 1, "B sees A's waiter");
    assert.strictEqual(report.wokenByB, 1, "B's notify wakes A's waiter");
    assert.strictEqual(report.first, 'ok');
    assert.strictEqual(report.wokenByA, 1, "A's notify wakes B's waiter");
    assert.strictEqual(report.second, 'ok');
    assert.deepStrictEqual(report.end, [empty, empty]);
  });

  it("a worker's sync wait through its first copy is woken by the main thread's notify through the other", async () => {
    const [a, b] = twoCopies();
    const report = await run('workerSyncWait', a, b);
    assert.strictEqual(report.queued, true);
    assert.strictEqual(report.seenByA, 1, "A sees the worker's waiter");
    assert.strictEqual(report.wokenByA, 1);
    assert.strictEqual(report.value, 'ok');
    assert.deepStrictEqual(report.end, [empty, empty]);
  });

  it('an AsyncLock whose holder took it through one copy and was terminated goes to the waiters of the other copy, the first told it was abandoned', async () => {
    const [a, b] = twoCopies();
    const report = await run('robustLock', a, b);
    assert.deepStrictEqual(report, {
      holderIsTheWorker: true,
      queued: true,
      bothQueued: true,
      worker: true,
      main: false,
      free: true,
    });
  });

  it('a waitAsync through one copy times out while the other copy owns the notifier thread', async () => {
    const [a, b] = twoCopies();
    const report = await run('timeoutThroughTheOther', a, b);
    assert.strictEqual(report.seenByA, 1, "A sees B's waiter");
    assert.strictEqual(report.value, 'timed-out');
    assert.deepStrictEqual([report.wokenByA, report.held], [1, 'ok']);
    assert.deepStrictEqual(report.end, [empty, empty]);
  });

  it("a panic in the owner's core, in a call through the other copy, throws an Error there and loses nothing", async () => {
    // Each copy has its own panic runtime: a panic unwinding from the
    // owner's code into the other copy's frames aborted the process.
    const [a, b] = twoCopies();
    const report = await run('panicInOwner', a, b);
    const panicked = { name: 'Error', message: 'atomics-waitasync: internal error (panic in the addon)' };
    assert.deepStrictEqual(report.notifyError, panicked);
    assert.strictEqual(report.stillQueued, 1, 'the waiter is still queued');
    assert.deepStrictEqual([report.wokenByB, report.first], [1, 'ok']);
    assert.deepStrictEqual(report.waitAsyncError, panicked);
    assert.deepStrictEqual(report.afterWaitAsync, empty, 'nothing queued or pending');
    assert.deepStrictEqual([report.wokenByA, report.second], [1, 'ok']);
    assert.deepStrictEqual(report.end, [empty, empty]);
  });

  it('several threads using both copies for the first time at once: every waiter is woken through the other copy', async () => {
    const [a, b] = twoCopies();
    for (let round = 0; round < 3; round++) {
      const report = await run('concurrentFirstUse', a, b);
      assert.deepStrictEqual(
        report,
        {
          hasKit: Array(4).fill([atomicsTakeUnshared, atomicsTakeUnshared]),
          woken: [1, 1, 1, 1],
          values: ['ok', 'ok', 'ok', 'ok'],
          end: [0, 0],
          timers: true,
        },
        `round ${round}`
      );
    }
  });

  it('a copy whose core has another ABI fails to load with ERR_ATOMICS_WAITASYNC_ABI_MISMATCH; the first goes on', async () => {
    const [a, b, binaryA, binaryB] = twoCopies();
    const other = patchVersion(binaryB);
    const report = await run('mismatch', a, b);
    assert.ok(report.error, 'the second copy did not load');
    assert.strictEqual(report.error.code, 'ERR_ATOMICS_WAITASYNC_ABI_MISMATCH');
    const message = report.error.message;
    for (const part of [binaryA, binaryB, version, other, 'dedupe']) {
      assert.ok(message.includes(part), `the message names ${part}: ${message}`);
    }
    assert.deepStrictEqual([report.wokenByA, report.value], [1, 'ok']);
  });

  it("a copy whose local build's core has another ABI goes on to its prebuilt binary, which shares the core", async () => {
    const [a, b, binaryA, localB] = twoCopies();
    const prebuiltB = path.join(b, 'prebuilds', `${process.platform}-${process.arch}-gnu`, 'atomics-waitasync.node');
    fs.mkdirSync(path.dirname(prebuiltB), { recursive: true });
    fs.copyFileSync(BINARY, prebuiltB);
    patchVersion(localB);
    const report = await run('sameThread', a, b);
    assert.deepStrictEqual(report.binaries, [binaryA, prebuiltB], "B's prebuilt binary was loaded");
    assert.deepStrictEqual([report.wokenByB, report.first, report.wokenByA, report.second], [1, 'ok', 1, 'ok']);
    assert.deepStrictEqual(report.end, [empty, empty]);
  });

  it('when no binary of a copy can share the core, the ABI mismatch is thrown with every path tried', async () => {
    const [a, b, binaryA, localB] = twoCopies();
    const prebuiltB = path.join(b, 'prebuilds', `${process.platform}-${process.arch}-gnu`, 'atomics-waitasync.node');
    fs.mkdirSync(path.dirname(prebuiltB), { recursive: true });
    fs.copyFileSync(localB, prebuiltB);
    patchVersion(localB);
    patchVersion(prebuiltB);
    const report = await run('mismatch', a, b);
    assert.ok(report.error, 'the second copy did not load');
    assert.strictEqual(report.error.code, 'ERR_ATOMICS_WAITASYNC_ABI_MISMATCH');
    assert.deepStrictEqual(
      (report.error.tried || []).map((t) => t.path),
      [localB, prebuiltB]
    );
    for (const part of [binaryA, localB, prebuiltB]) {
      assert.ok(report.error.message.includes(part), `the message names ${part}: ${report.error.message}`);
    }
    assert.deepStrictEqual([report.wokenByA, report.value], [1, 'ok']);
  });

  it('a copy of the same version built from other sources fails to load with ERR_ATOMICS_WAITASYNC_ABI_MISMATCH', async () => {
    const [a, b, binaryA, binaryB] = twoCopies();
    const other = patchSource(binaryB);
    const report = await run('mismatch', a, b);
    assert.ok(report.error, 'the second copy did not load');
    assert.strictEqual(report.error.code, 'ERR_ATOMICS_WAITASYNC_ABI_MISMATCH');
    for (const part of [binaryA, binaryB, other]) {
      assert.ok(report.error.message.includes(part), `the message names ${part}: ${report.error.message}`);
    }
    assert.deepStrictEqual([report.wokenByA, report.value], [1, 'ok']);
  });
});
