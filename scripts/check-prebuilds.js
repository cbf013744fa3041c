#!/usr/bin/env node
'use strict';
// Checks the prebuilt binaries before they ship, without loading them:
// for every <platform>-<arch>[-<libc>]/atomics-waitasync.node under a folder,
//   - it is an ELF shared object for the folder's CPU (x64 -> x86-64, arm64 -> aarch64, ...);
//   - for -gnu, it needs no glibc symbol version newer than 2.17
//     (the GNU version-needs section), so it loads on glibc 2.17 and later;
//     for -musl, it needs no glibc symbol version at all;
//   - its dynamic symbol table exports napi_register_module_v1, the entry
//     point Node and Bun look up.
// Prints one line per binary and a last line `check-prebuilds: N passed, N failed`;
// exits 1 when any check fails or when there is no binary at all.
//
//   node scripts/check-prebuilds.js [dir]      dir defaults to prebuilds/ in the package
//   require('./scripts/check-prebuilds').checkPrebuilds(dir) -> [{ name, file, ok, problems, ... }]
//
// Parses on Node 12 (no `?.`, `??` or `node:` specifiers).

const fs = require('fs');
const path = require('path');
const elf = require('./lib/elf');

const FILE = 'atomics-waitasync.node';
const ENTRY = 'napi_register_module_v1';
const MAX_GLIBC = '2.17';

// process.arch -> ELF e_machine name (scripts/lib/elf.js MACHINES).
const ARCH_MACHINE = {
  x64: 'x86-64',
  arm64: 'aarch64',
  ia32: 'x86',
  arm: 'arm',
  riscv64: 'riscv',
  s390x: 's390',
  ppc64: 'ppc64',
  loong64: 'loongarch',
};
const ELF_PLATFORMS = ['linux', 'freebsd', 'openbsd', 'netbsd', 'android', 'sunos'];

/** 'linux-arm64-gnu' -> { platform: 'linux', arch: 'arm64', libc: 'gnu' }; null if it is no such name. */
function parseName(name) {
  const m = /^([a-z0-9]+)-([a-z0-9]+)(?:-([a-z0-9]+))?$/.exec(name);
  return m ? { platform: m[1], arch: m[2], libc: m[3] || null } : null;
}

/** Checks one binary; returns { ok, problems, machine, maxGlibc, glibc, size }. */
function checkBinary(file, target, options) {
  const maxGlibc = (options && options.maxGlibc) || MAX_GLIBC;
  const result = { ok: false, problems: [], machine: null, maxGlibc: null, glibc: [], size: null };
  let info;
  try {
    result.size = fs.statSync(file).size;
    info = elf.readElf(file);
  } catch (error) {
    result.problems.push(error.message);
    return result;
  }
  result.machine = info.machine;
  result.maxGlibc = info.maxGlibc;
  result.glibc = info.glibc;
  if (ELF_PLATFORMS.indexOf(target.platform) === -1) {
    result.problems.push(target.platform + ' binaries are not ELF files, yet this one is');
  }
  if (info.type !== 'DYN') result.problems.push('an ELF of type ' + info.type + ', not a shared object (DYN)');
  const wanted = ARCH_MACHINE[target.arch];
  if (!wanted) result.problems.push('unknown arch "' + target.arch + '" in the folder name');
  else if (info.machine !== wanted) result.problems.push('machine is ' + info.machine + ', the folder says ' + target.arch + ' (' + wanted + ')');
  if (target.libc === 'gnu') {
    if (info.maxGlibc && elf.compareVersions(info.maxGlibc, maxGlibc) > 0) {
      const newer = info.glibc.filter(function (v) {
        return elf.compareVersions(v, maxGlibc) > 0;
      });
      result.problems.push('needs GLIBC_' + newer.join(', GLIBC_') + ' (at most ' + maxGlibc + ' allowed)');
    }
  } else if (target.libc === 'musl' && info.glibc.length) {
    result.problems.push('a musl binary that needs glibc (GLIBC_' + info.maxGlibc + ')');
  }
  if (info.exports.indexOf(ENTRY) === -1) result.problems.push('does not export ' + ENTRY);
  result.ok = result.problems.length === 0;
  return result;
}

/**
 * Checks every <platform>-<arch>[-<libc>]/atomics-waitasync.node under `dir`.
 * A platform folder without the binary is a failure too. Returns one result
 * per folder: { name, file, platform, arch, libc, ok, problems, machine, maxGlibc, glibc, size };
 * an empty array when `dir` has no platform folder (or does not exist).
 */
function checkPrebuilds(dir, options) {
  const root = path.resolve(dir || path.join(__dirname, '..', 'prebuilds'));
  let names = [];
  try {
    names = fs.readdirSync(root).sort();
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  const results = [];
  for (let i = 0; i < names.length; i++) {
    const target = parseName(names[i]);
    if (!target || !fs.statSync(path.join(root, names[i])).isDirectory()) continue;
    const file = path.join(root, names[i], FILE);
    let result;
    if (!fs.existsSync(file)) result = { ok: false, problems: ['no ' + FILE + ' in this folder'] };
    else result = checkBinary(file, target, options);
    results.push(
      Object.assign({ name: names[i], file: file, platform: target.platform, arch: target.arch, libc: target.libc }, result)
    );
  }
  return results;
}

function describe(r) {
  const label = r.name + '/' + FILE;
  if (!r.ok) return 'FAIL ' + label + ': ' + r.problems.join('; ');
  const glibc = r.libc === 'gnu' ? ', GLIBC ' + (r.maxGlibc || 'none') + ' <= ' + MAX_GLIBC : '';
  return 'ok   ' + label + ': ' + r.machine + glibc + ', exports ' + ENTRY + ', ' + Math.round(r.size / 1024) + ' KiB';
}

function main(argv) {
  const dir = argv[0] ? path.resolve(argv[0]) : path.join(__dirname, '..', 'prebuilds');
  const results = checkPrebuilds(dir);
  let passed = 0;
  let failed = 0;
  for (let i = 0; i < results.length; i++) {
    console.log(describe(results[i]));
    if (results[i].ok) passed++;
    else failed++;
  }
  if (results.length === 0) {
    console.log('FAIL ' + dir + ': no <platform>-<arch>-<libc>/' + FILE + ' found (run `node scripts/prebuild.js`)');
    failed++;
  }
  console.log('check-prebuilds: ' + passed + ' passed, ' + failed + ' failed');
  return failed ? 1 : 0;
}

module.exports = { checkPrebuilds, checkBinary, parseName, MAX_GLIBC };

if (require.main === module) process.exitCode = main(process.argv.slice(2));
