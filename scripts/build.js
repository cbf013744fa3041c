#!/usr/bin/env node
'use strict';
// Builds the addon from source: `cargo build --release`, then copies the
// cdylib next to package.json as atomics-waitasync.node. Runs on every Node
// version we support (the napi-rs CLI needs Node >= 20.17, so it cannot be
// the install step on Node 14-18).
//
//   node scripts/build.js            release build (what `npm install` runs)
//   node scripts/build.js --debug    debug build

const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const root = path.join(__dirname, '..');
const debug = process.argv.includes('--debug');
const args = ['build', '--lib'];
if (!debug) args.push('--release');

const cargo = process.env.CARGO || 'cargo';
const built = spawnSync(cargo, args, { cwd: root, stdio: 'inherit' });
if (built.error && built.error.code === 'ENOENT') {
  console.error(
    'atomics-waitasync: building the native addon needs Rust (cargo), which was not found.\n' +
      'Install it from https://rustup.rs and run `npm rebuild atomics-waitasync`.'
  );
  process.exit(1);
}
if (built.status !== 0) process.exit(built.status || 1);

const targetDir = process.env.CARGO_TARGET_DIR || path.join(root, 'target');
const profile = debug ? 'debug' : 'release';
const file = {
  darwin: 'libatomics_waitasync.dylib',
  win32: 'atomics_waitasync.dll',
}[process.platform] || 'libatomics_waitasync.so';
const from = path.resolve(root, targetDir, profile, file);
const to = path.join(root, 'atomics-waitasync.node');
// Copy to a temporary name and rename, so that a process that has the old
// addon mapped keeps a valid file.
const tmp = `${to}.${process.pid}.tmp`;
fs.copyFileSync(from, tmp);
fs.renameSync(tmp, to);
console.log(`atomics-waitasync: built ${path.relative(root, to)} (${profile})`);
