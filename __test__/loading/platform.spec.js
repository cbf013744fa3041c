'use strict';
// lib/platform.js, which tells binding.js which binary fits the process:
// driven through every platform the package ships for, with the files and
// the system's answers given as tables, so no other platform is needed.

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const platform = require('../../lib/platform');

const DIR = path.join(path.sep, 'app', 'node_modules', 'atomics-waitasync');
const prebuilt = (tag) => path.join(DIR, 'prebuilds', tag, 'atomics-waitasync.node');
const LOCAL = path.join(DIR, 'atomics-waitasync.node');

/**
 * A minimal ELF executable image whose only program header is PT_INTERP
 * naming `interpreter`: 64- or 32-bit, little- or big-endian.
 */
function elfWithInterpreter(interpreter, { bits = 64, little = true } = {}) {
  const is64 = bits === 64;
  const ehsize = is64 ? 64 : 52;
  const phentsize = is64 ? 56 : 32;
  const text = Buffer.from(`${interpreter}\0`, 'latin1');
  const bytes = Buffer.alloc(ehsize + phentsize + text.length);
  bytes.writeUInt32BE(0x7f454c46, 0);
  bytes[4] = is64 ? 2 : 1;
  bytes[5] = little ? 1 : 2;
  const u16 = (v, at) => (little ? bytes.writeUInt16LE(v, at) : bytes.writeUInt16BE(v, at));
  const u32 = (v, at) => (little ? bytes.writeUInt32LE(v, at) : bytes.writeUInt32BE(v, at));
  const word = (v, at) => (is64 ? u32(v, little ? at : at + 4) : u32(v, at));
  word(ehsize, is64 ? 32 : 28); // e_phoff
  u16(phentsize, is64 ? 54 : 42);
  u16(1, is64 ? 56 : 44); // e_phnum
  u32(3, ehsize); // p_type PT_INTERP
  word(ehsize + phentsize, ehsize + (is64 ? 8 : 4)); // p_offset
  word(text.length, ehsize + (is64 ? 32 : 16)); // p_filesz
  text.copy(bytes, ehsize + phentsize);
  return bytes;
}

/** A `read(file, bytes, position)` over a table of file contents; absent files read as null. */
const reader = (files) => (file, bytes, position = 0) =>
  file in files ? Buffer.from(files[file], 'latin1').subarray(position, position + bytes) : null;

/** `elfWithInterpreter`'s image with the name moved 8 KiB on, past the first 4 KiB, as patchelf does. */
function elfWithFarInterpreter(interpreter) {
  const near = elfWithInterpreter(interpreter);
  const far = Buffer.alloc(8192 + near.length);
  near.copy(far);
  const at = 64 + 56;
  near.copy(far, 8192, at); // the name
  far.fill(0, at, near.length);
  far.writeUInt32LE(8192, 64 + 8); // p_offset
  return far;
}

describe('platform: which binary fits the process (lib/platform.js)', function () {
  describe('elfInterpreter', function () {
    it('reads the loader this Node was started with from its own executable', function () {
      if (process.platform !== 'linux') this.skip();
      const interpreter = platform.elfInterpreter(fs.readFileSync('/proc/self/exe').subarray(0, 4096));
      assert.match(interpreter, /^\/lib(64)?\/ld-(linux|musl)/);
      assert.ok(fs.existsSync(interpreter), interpreter);
    });

    for (const bits of [64, 32]) {
      for (const little of [true, false]) {
        it(`reads PT_INTERP of a ${bits}-bit ${little ? 'little' : 'big'}-endian ELF`, function () {
          const bytes = elfWithInterpreter('/lib/ld-musl-armhf.so.1', { bits, little });
          assert.strictEqual(platform.elfInterpreter(bytes), '/lib/ld-musl-armhf.so.1');
        });
      }
    }

    it('reads a name that lies past the bytes given (patchelf moves it to the end) through readAt', function () {
      const file = elfWithFarInterpreter('/lib/ld-musl-x86_64.so.1');
      const readAt = (offset, size) => file.subarray(offset, offset + size);
      assert.strictEqual(platform.elfInterpreter(file.subarray(0, 4096), readAt), '/lib/ld-musl-x86_64.so.1');
      assert.strictEqual(platform.elfInterpreter(file.subarray(0, 4096)), null);
    });

    it('is null for no ELF, a truncated one, or one without PT_INTERP', function () {
      assert.strictEqual(platform.elfInterpreter(null), null);
      assert.strictEqual(platform.elfInterpreter(Buffer.from('#!/bin/sh\necho\n'.repeat(8))), null);
      const bytes = elfWithInterpreter('/lib/ld-musl-x86_64.so.1');
      assert.strictEqual(platform.elfInterpreter(bytes.subarray(0, bytes.length - 10)), null);
      bytes.writeUInt32LE(1, 64); // PT_LOAD instead
      assert.strictEqual(platform.elfInterpreter(bytes), null);
    });
  });

  describe('detectLibc', function () {
    const MUSL_EXE = elfWithInterpreter('/lib/ld-musl-x86_64.so.1').toString('latin1');
    const GNU_EXE = elfWithInterpreter('/lib64/ld-linux-x86-64.so.2').toString('latin1');
    const GLIBC_LDD = '#! /bin/bash\n# This file is part of the GNU C Library.\n';
    const MUSL_LDD = '\x7fELF...musl libc (x86_64)...';
    const noReport = () => null;
    const noList = () => null;
    const rows = [
      // [what, platform, files, report, expected]
      ['a musl Node on a glibc host (the running loader wins)', 'linux', { '/proc/self/exe': MUSL_EXE, '/usr/bin/ldd': GLIBC_LDD }, noReport, 'musl'],
      ['a musl Node whose interpreter name patchelf moved past 4 KiB', 'linux', { '/proc/self/exe': elfWithFarInterpreter('/lib/ld-musl-x86_64.so.1').toString('latin1'), '/usr/bin/ldd': GLIBC_LDD }, noReport, 'musl'],
      ['a glibc Node on a musl host (gcompat)', 'linux', { '/proc/self/exe': GNU_EXE, '/usr/bin/ldd': MUSL_LDD }, noReport, 'gnu'],
      ['no readable executable, musl ldd (Alpine)', 'linux', { '/usr/bin/ldd': MUSL_LDD }, noReport, 'musl'],
      ['no readable executable, glibc ldd', 'linux', { '/usr/bin/ldd': GLIBC_LDD }, noReport, 'gnu'],
      ['nothing to read, a report with glibc', 'linux', {}, () => ({ header: { glibcVersionRuntime: '2.36' } }), 'gnu'],
      ['nothing to read, a report naming the musl loader', 'linux', {}, () => ({ header: {}, sharedObjects: ['/lib/ld-musl-aarch64.so.1'] }), 'musl'],
      ['nothing to read, a report whose paths only pass through a folder named musl', 'linux', {}, () => ({ header: {}, sharedObjects: ['/opt/musl/node', '/lib/x86_64-linux-gnu/libc.so.6'] }), 'gnu'],
      ['nothing to read, no report, a musl loader in /lib', 'linux', {}, noReport, 'musl', () => ['libc.so', 'ld-musl-aarch64.so.1']],
      ['nothing tells', 'linux', {}, noReport, 'gnu', () => ['ld-linux-x86-64.so.2']],
      ['macOS', 'darwin', { '/proc/self/exe': MUSL_EXE }, noReport, null],
      ['Windows', 'win32', {}, noReport, null],
    ];
    for (const [what, os, files, report, expected, list = noList] of rows) {
      it(`${what}: ${expected}`, function () {
        assert.strictEqual(platform.detectLibc(os, reader(files), report, list), expected);
      });
    }

    it('reads as binding.js does: bytes as a plain Uint8Array (not a Buffer) tell the same', function () {
      const plain = (files) => (file, bytes, position) => {
        const buffer = reader(files)(file, bytes, position);
        return buffer === null ? null : new Uint8Array(buffer);
      };
      assert.strictEqual(platform.detectLibc('linux', plain({ '/proc/self/exe': MUSL_EXE }), noReport, noList), 'musl');
      assert.strictEqual(platform.detectLibc('linux', plain({ '/proc/self/exe': GNU_EXE, '/usr/bin/ldd': MUSL_LDD }), noReport, noList), 'gnu');
      assert.strictEqual(platform.detectLibc('linux', plain({ '/usr/bin/ldd': MUSL_LDD }), noReport, noList), 'musl');
      assert.strictEqual(platform.detectLibc('linux', plain({ '/usr/bin/ldd': GLIBC_LDD }), noReport, noList), 'gnu');
    });

    it('asks for no report when a file already told', function () {
      const report = () => assert.fail('report() called');
      const list = () => assert.fail('list() called');
      assert.strictEqual(platform.detectLibc('linux', reader({ '/proc/self/exe': MUSL_EXE }), report, list), 'musl');
      assert.strictEqual(platform.detectLibc('linux', reader({ '/usr/bin/ldd': GLIBC_LDD }), report, list), 'gnu');
    });
  });

  describe('mappedLibc: the C library a process has mapped, from its /proc/self/maps', function () {
    const line = (file) => `7f2a7b000000-7f2a7b028000 r--p 00000000 fe:00 1234                       ${file}`;
    const maps = (...files) => ['55d1c0000000-55d1c0001000 r--p 00000000 fe:00 99 /usr/bin/node', ...files.map(line), line('[stack]'), ''].join('\n');
    const rows = [
      // [what, maps, expected]
      ['glibc 2.34 and later (Debian 12, x64)', maps('/usr/lib/x86_64-linux-gnu/libc.so.6', '/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'), 'gnu'],
      ['glibc before 2.34 (ld-2.31.so, libc-2.31.so)', maps('/lib/x86_64-linux-gnu/libc-2.31.so', '/lib/x86_64-linux-gnu/ld-2.31.so'), 'gnu'],
      ['glibc on arm64 under qemu-user, from a sysroot', maps('/usr/aarch64-linux-gnu/lib/libc.so.6', '/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1'), 'gnu'],
      ['glibc whose libc was replaced since the process started', maps('/usr/lib/x86_64-linux-gnu/libc.so.6 (deleted)', '/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 (deleted)'), 'gnu'],
      ['musl on Alpine (the loader is the libc)', maps('/lib/ld-musl-x86_64.so.1'), 'musl'],
      ['musl on arm64', maps('/lib/ld-musl-aarch64.so.1'), 'musl'],
      ['a glibc Node on Alpine through gcompat: not told here', maps('/lib/libgcompat.so.0', '/lib/ld-linux-x86-64.so.2', '/lib/ld-musl-x86_64.so.1'), null],
      ['gcompat whose loader is musl\'s: not told here either', maps('/lib/libgcompat.so.0', '/lib/ld-musl-x86_64.so.1'), null],
      ['Debian\'s musl beside a path that passes through a folder named ld-linux*', maps('/usr/lib/x86_64-linux-musl/libc.so', '/tmp/ld-linux-demo/node'), null],
      ['glibc\'s loader alone (a shim may be named so): not told here', maps('/lib64/ld-linux-x86-64.so.2'), null],
      ['a file named libc.so.6.bak, or a folder named libc-2.31.so', maps('/x/libc.so.6.bak', '/y/libc-2.31.so/z'), null],
      ['both libcs mapped', maps('/lib/ld-musl-x86_64.so.1', '/usr/lib/x86_64-linux-gnu/libc.so.6'), null],
      ['Debian\'s musl, mapped as .../x86_64-linux-musl/libc.so: not told here', maps('/usr/lib/x86_64-linux-musl/libc.so'), null],
      ['a static executable: nothing mapped', maps(), null],
      ['no text (unreadable)', null, null],
    ];
    for (const [what, text, expected] of rows) {
      it(`${what}: ${expected}`, function () {
        assert.strictEqual(platform.mappedLibc(text), expected);
      });
    }

    it('this process: what its executable\'s PT_INTERP says', function () {
      if (process.platform !== 'linux') this.skip();
      const interpreter = platform.elfInterpreter(fs.readFileSync('/proc/self/exe').subarray(0, 4096));
      const libc = interpreter.includes('musl') ? 'musl' : 'gnu';
      assert.strictEqual(platform.mappedLibc(fs.readFileSync('/proc/self/maps', 'utf8')), libc);
    });

    it('detectLibc asks the maps first, and the executable only when they do not tell', function () {
      const MUSL_EXE = elfWithInterpreter('/lib/ld-musl-x86_64.so.1').toString('latin1');
      const files = reader({ '/proc/self/exe': MUSL_EXE });
      const never = () => assert.fail('read() called');
      const text = (want) => (file) => (file === '/proc/self/maps' ? want : assert.fail(`text(${file})`));
      assert.strictEqual(platform.detectLibc('linux', never, () => null, () => null, text(maps('/lib/ld-musl-x86_64.so.1'))), 'musl');
      assert.strictEqual(platform.detectLibc('linux', never, () => null, () => null, text(maps('/usr/lib/x86_64-linux-gnu/libc.so.6'))), 'gnu');
      assert.strictEqual(platform.detectLibc('linux', files, () => null, () => null, text(maps('/usr/lib/x86_64-linux-musl/libc.so'))), 'musl');
      assert.strictEqual(platform.detectLibc('linux', files, () => null, () => null, text(null)), 'musl');
      assert.strictEqual(platform.detectLibc('darwin', never, () => null, () => null, () => assert.fail('text() called')), null);
    });
  });

  describe('the binary binding.js loads: (platform, arch, libc, files present) -> path', function () {
    /** What binding.js does: the first candidate that exists (a failed load moves on; loader.spec.js covers it). */
    function loads(os, arch, libc, present, env = {}) {
      const tag = platform.platformTag(os, arch, libc);
      const list = platform.candidates(DIR, env, tag);
      const found = list.find((c) => present.includes(c.path));
      return found ? found.path : `none (tried ${list.map((c) => c.path).join(', ')})`;
    }
    const every = Object.keys(platform.SHIPPED).map(prebuilt);
    const rows = [
      // [platform, arch, libc, files present, env, expected]
      ['linux', 'x64', 'gnu', every, {}, prebuilt('linux-x64-gnu')],
      ['linux', 'arm64', 'gnu', every, {}, prebuilt('linux-arm64-gnu')],
      ['linux', 'x64', 'musl', every, {}, prebuilt('linux-x64-musl')],
      ['linux', 'arm64', 'musl', every, {}, prebuilt('linux-arm64-musl')],
      ['win32', 'x64', null, every, {}, prebuilt('win32-x64')],
      ['win32', 'arm64', null, every, {}, prebuilt('win32-arm64')],
      ['darwin', 'x64', null, every, {}, prebuilt('darwin-x64')],
      ['darwin', 'arm64', null, every, {}, prebuilt('darwin-arm64')],
      ['darwin', 'arm64', null, [LOCAL].concat(every), {}, LOCAL],
      ['linux', 'x64', 'musl', [prebuilt('linux-x64-gnu')], {}, `none (tried ${LOCAL}, ${prebuilt('linux-x64-musl')})`],
      ['freebsd', 'x64', null, every, {}, `none (tried ${LOCAL}, ${prebuilt('freebsd-x64')})`],
      ['freebsd', 'x64', null, [LOCAL], {}, LOCAL],
      ['linux', 'riscv64', 'gnu', every, {}, `none (tried ${LOCAL}, ${prebuilt('linux-riscv64-gnu')})`],
      ['win32', 'x64', null, every, { ATOMICS_WAITASYNC_BINARY: '/opt/awa.node' }, 'none (tried /opt/awa.node)'],
      ['win32', 'x64', null, every.concat('/opt/awa.node'), { ATOMICS_WAITASYNC_BINARY: '/opt/awa.node' }, '/opt/awa.node'],
    ];
    for (const [os, arch, libc, present, env, expected] of rows) {
      const files = present === every ? 'every prebuilt' : present.map((p) => path.relative(DIR, p) || p).join(', ') || 'none';
      const override = env.ATOMICS_WAITASYNC_BINARY ? ', ATOMICS_WAITASYNC_BINARY set' : '';
      it(`${os}-${arch}${libc ? `-${libc}` : ''} with ${files}${override}: ${path.relative(DIR, expected) || expected}`, function () {
        assert.strictEqual(loads(os, arch, libc, present, env), expected);
      });
    }

    it('names a folder for each platform the package ships, and the same names scripts/prebuild.js builds', function () {
      const { TARGETS } = require('../../scripts/prebuild');
      assert.deepStrictEqual(Object.keys(TARGETS).sort(), Object.keys(platform.SHIPPED).sort());
    });
  });
});
