#!/usr/bin/env node
'use strict';
// Builds the addon from source: `cargo build --release`, then copies the
// cdylib next to package.json as atomics-waitasync.node, the "local source
// build" that binding.js tries before the prebuilt binaries. Runs on every
// Node version we support (the napi-rs CLI needs Node >= 20.17), so it keeps
// to Node 12.22 syntax.
//
//   node scripts/build.js                  release build into ./target (npm install in a clone: `prepare`)
//   node scripts/build.js --debug          debug build
//   node scripts/build.js --temp-target    build in a temporary target folder and delete it after,
//                                          so that only the .node file stays (npx atomics-waitasync-build)

const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const root = path.join(__dirname, '..');
const OUTPUT = path.join(root, 'atomics-waitasync.node');

/** What cargo names the cdylib on this platform. */
function cdylibName() {
  if (process.platform === 'darwin') return 'libatomics_waitasync.dylib';
  if (process.platform === 'win32') return 'atomics_waitasync.dll';
  return 'libatomics_waitasync.so';
}

function removeTree(dir) {
  if (fs.rmSync) fs.rmSync(dir, { recursive: true, force: true });
  else fs.rmdirSync(dir, { recursive: true }); // Node 12
}

/** Throws an Error whose message says what to do; the CLI prints it. */
function fail(message, status) {
  const error = new Error(message);
  error.status = status || 1;
  throw error;
}

/**
 * Builds and copies the addon to atomics-waitasync.node. Returns that path.
 * `options.temporaryTarget`: cargo's output goes to a fresh folder under the
 * OS temp dir, removed afterwards whether the build worked or not.
 */
function build(options) {
  const debug = Boolean(options && options.debug);
  const temporary = Boolean(options && options.temporaryTarget);
  const targetDir = temporary
    ? fs.mkdtempSync(path.join(os.tmpdir(), 'atomics-waitasync-build-'))
    : path.resolve(root, process.env.CARGO_TARGET_DIR || 'target');
  try {
    const args = ['build', '--lib', '--locked', '--target-dir', targetDir];
    if (!debug) args.push('--release');
    const cargo = process.env.CARGO || 'cargo';
    const built = spawnSync(cargo, args, { cwd: root, stdio: 'inherit' });
    if (built.error && built.error.code === 'ENOENT') {
      fail(
        'atomics-waitasync: building the native addon needs Rust 1.88 or later (cargo), which was not found.\n' +
          'Install it from https://rustup.rs, then run `npx atomics-waitasync-build` again.'
      );
    }
    if (built.error) fail(`atomics-waitasync: could not run ${cargo}: ${built.error.message}`);
    if (built.status !== 0) fail(`atomics-waitasync: cargo build failed (exit ${built.status})`, built.status);

    const from = path.join(targetDir, debug ? 'debug' : 'release', cdylibName());
    // Copy to a temporary name and rename, so that a process that has the old
    // addon mapped keeps a valid file.
    const tmp = `${OUTPUT}.${process.pid}.tmp`;
    fs.copyFileSync(from, tmp);
    fs.renameSync(tmp, OUTPUT);
    return OUTPUT;
  } finally {
    if (temporary) removeTree(targetDir);
  }
}

function main(argv) {
  const options = { debug: argv.indexOf('--debug') !== -1, temporaryTarget: argv.indexOf('--temp-target') !== -1 };
  try {
    const file = build(options);
    console.log(`atomics-waitasync: built ${file} (${options.debug ? 'debug' : 'release'})`);
  } catch (error) {
    console.error(error.status ? error.message : error.stack);
    process.exitCode = error.status || 1;
  }
}

module.exports = { build, main };

if (require.main === module) main(process.argv.slice(2));
