'use strict';
// scripts/check-prebuilds.js on stand-ins for the addon, one per shipped
// folder (__test__/fixtures/binaries/README.md): what it reads from each
// format, and that its self-test's mutations each fail for their reason.
// The real binaries get the same self-test in `npm test`'s install stage.

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { root } = require('../helpers');

const { checkPrebuilds, checkBinary, selfTest } = require(path.join(root, 'scripts', 'check-prebuilds'));

const FIXTURES = path.join(root, '__test__', 'fixtures', 'binaries');
const FILE = 'atomics-waitasync.node';

describe('check-prebuilds', function () {
  let dir;

  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'awa-check-prebuilds-'));
    for (const name of fs.readdirSync(FIXTURES)) {
      if (!/\.(so|dylib|dll)$/.test(name)) continue;
      const tag = name.replace(/\.\w+$/, '');
      fs.mkdirSync(path.join(dir, tag));
      fs.copyFileSync(path.join(FIXTURES, name), path.join(dir, tag, FILE));
    }
  });

  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads each format: CPU, minimum system, libraries, exports, signature', function () {
    const byName = {};
    for (const r of checkPrebuilds(dir)) byName[r.name] = r;
    assert.deepStrictEqual(Object.keys(byName).sort(), [
      'darwin-arm64',
      'darwin-x64',
      'linux-arm64-gnu',
      'linux-arm64-musl',
      'linux-x64-gnu',
      'linux-x64-musl',
      'win32-arm64',
      'win32-x64',
    ]);
    for (const name of Object.keys(byName)) {
      assert.deepStrictEqual(byName[name].problems, [], name);
      assert.strictEqual(byName[name].ok, true, name);
    }
    assert.deepStrictEqual(byName['linux-arm64-gnu'].facts.slice(0, 4), [
      'ELF aarch64',
      'GLIBC 2.17 <= 2.17',
      'links libc.so.6',
      'exports napi_register_module_v1 + atomics_waitasync_core_v1',
    ]);
    assert.deepStrictEqual(byName['linux-x64-musl'].facts.slice(0, 3), ['ELF x86-64', 'no GLIBC versions', 'links libc.so']);
    assert.deepStrictEqual(byName['win32-arm64'].facts.slice(0, 3), ['PE32+ DLL arm64', 'OS 6.0 / subsystem 6.0 <= 10', 'links KERNEL32.dll']);

    assert.deepStrictEqual(byName['darwin-arm64'].facts.slice(0, 6), [
      'Mach-O arm64 dylib',
      'macOS 11.0 <= 11.0',
      'id @rpath/atomics-waitasync.node',
      'links /usr/lib/libSystem.B.dylib',
      'exports _atomics_waitasync_core_v1 + _napi_register_module_v1 (+ 2 of the toolchain)',
      'signed ad hoc, linker-signed, SHA-256, 4 page hashes match',
    ]);
    assert.deepStrictEqual(byName['darwin-x64'].facts.slice(0, 6), [
      'Mach-O x86_64 dylib',
      'macOS 10.15 <= 10.15',
      'id @rpath/atomics-waitasync.node',
      'links /usr/lib/libSystem.B.dylib',
      'exports _atomics_waitasync_core_v1 + _napi_register_module_v1 (+ 2 of the toolchain)',
      'unsigned',
    ]);
  });

  it('self-test: every mutation of every stand-in adds the problem it is for', function () {
    const lines = [];
    const counts = selfTest(dir, (line) => lines.push(line));
    const failed = lines.filter((line) => !line.startsWith('ok   '));
    assert.deepStrictEqual(failed, []);
    assert.strictEqual(counts.failed, 0);
    const cases = (tag) => lines.filter((line) => line.startsWith(`ok   ${tag} `)).map((line) => line.slice(5 + tag.length + 1).split(':')[0]);
    assert.deepStrictEqual(cases('darwin-arm64'), [
      'unchanged',
      'wrong CPU (cputype)',
      'newer minimum macOS (LC_BUILD_VERSION 11.0 -> 14.0)',
      // zig's linker signs arm64 only, so darwin-x64 has no such case.
      'one byte flipped in a signed page (__text)',
      'entry point renamed in the export trie',
      'an export beyond the allowed ones',
      'extra import (/usr/lib/libSystem.B.dylib -> /opt/lib/libSystem.B.dylib)',
      'absolute install name (/b/atomics-waitasync.node)',
    ]);
    assert.deepStrictEqual(cases('win32-x64'), [
      'unchanged',
      'wrong CPU (Machine)',
      'newer Windows (MajorSubsystemVersion 6 -> 11)',
      'newer Windows (MajorOperatingSystemVersion 6 -> 11)',
      'entry point renamed in the export directory',
      'an export beyond the allowed ones',
      'extra import (KERNEL32.dll -> node.exe)',
    ]);
    assert.deepStrictEqual(cases('linux-x64-gnu'), [
      'unchanged',
      'wrong CPU (e_machine)',
      'entry point renamed in .dynstr',
      'an export beyond the allowed ones',
      'extra import (DT_NEEDED libc.so.6 -> libnode)',
      'executable stack (PF_X on PT_GNU_STACK)',
      'newer glibc (GLIBC_2.2.5 -> GLIBC_2.34)',
      'this glibc build checked as musl',
    ]);
  });

  it('checks the minimum systems the loader names (lib/platform.js) and prebuild.js builds for', function () {
    const { MAX_GLIBC, MAX_MACOS, MAX_WINDOWS } = require(path.join(root, 'scripts', 'check-prebuilds'));
    const { SHIPPED } = require(path.join(root, 'lib', 'platform'));
    const { TARGETS } = require(path.join(root, 'scripts', 'prebuild'));
    const major = (version) => version.replace(/\.0$/, '');
    for (const tag of Object.keys(SHIPPED)) {
      const [os, arch] = tag.split('-');
      const expected = {
        linux: tag.endsWith('-gnu') ? `glibc ${MAX_GLIBC}` : 'musl 1.2',
        darwin: `macOS ${major(MAX_MACOS[arch])}`,
        win32: `Windows ${MAX_WINDOWS}`,
      }[os];
      assert.strictEqual(SHIPPED[tag], expected, tag);
      if (os === 'darwin') assert.strictEqual(TARGETS[tag].env.MACOSX_DEPLOYMENT_TARGET, MAX_MACOS[arch], tag);
      if (tag.endsWith('-gnu')) assert.ok(TARGETS[tag].zig.endsWith(`.${MAX_GLIBC}`), tag);
    }
  });

  it('rejects a file of another format than its folder says', function () {
    const elfFile = path.join(dir, 'linux-x64-gnu', FILE);
    assert.deepStrictEqual(checkBinary(elfFile, { platform: 'darwin', arch: 'x64', libc: null }).problems, [
      'an ELF file, darwin binaries are Mach-O',
    ]);
    const dll = path.join(dir, 'win32-x64', FILE);
    assert.deepStrictEqual(checkBinary(dll, { platform: 'linux', arch: 'x64', libc: 'gnu' }).problems, [
      'a PE file, linux binaries are ELF',
    ]);
  });
});
