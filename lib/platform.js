'use strict';
// Which binary fits this process: its platform tag, the libc it runs on,
// and the files binding.js tries, in order. Pure: binding.js hands
// `detectLibc` the file reads it may make, so __test__/loading/platform.spec.js
// drives it through every platform without being on it. Keeps to what Node 12.22
// parses (no `node:` prefix, no `?.`, no `??`) and spawns no process.

var path = require('path');

var FILE = 'atomics-waitasync.node';

/**
 * The prebuilds/ folders the package ships, one per (platform, arch, libc)
 * that Node reports, with the oldest system each binary loads on.
 * scripts/prebuild.js builds each, scripts/check-prebuilds.js checks each,
 * and the README's Platforms table says how each was proven.
 */
var SHIPPED = {
  'linux-x64-gnu': 'glibc 2.17',
  'linux-arm64-gnu': 'glibc 2.17',
  'linux-x64-musl': 'musl 1.2',
  'linux-arm64-musl': 'musl 1.2',
  'win32-x64': 'Windows 10',
  'win32-arm64': 'Windows 10',
  'darwin-x64': 'macOS 10.15',
  'darwin-arm64': 'macOS 11',
};

/**
 * The program interpreter an ELF executable names (PT_INTERP), or null.
 * `bytes` is the file's start, which holds the program headers; the name
 * itself may lie further on (patchelf moves it to the end of the file), where
 * `readAt(offset, size)` reads it, when given.
 */
function elfInterpreter(bytes, readAt) {
  if (!bytes || bytes.length < 64 || bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) {
    return null;
  }
  var is64 = bytes[4] === 2;
  var little = bytes[5] === 1;
  var word = is64 ? 8 : 4;
  // The unsigned integer of `size` bytes at `at`, in the file's byte order,
  // byte by byte: every load of the package runs this once, cold, and
  // Buffer's readers cost more to get going than the reading. (Offsets past
  // 4 GiB cannot be in the bytes read anyway: an 8-byte field is read as
  // its low 4.)
  function field(at, size) {
    if (size === 8) {
      size = 4;
      if (!little) at += 4;
    }
    var value = 0;
    for (var k = 0; k < size; k++) value = value * 256 + bytes[little ? at + size - 1 - k : at + k];
    return value;
  }
  var phoff = field(is64 ? 32 : 28, word);
  var phentsize = field(is64 ? 54 : 42, 2);
  var phnum = field(is64 ? 56 : 44, 2);
  for (var i = 0; i < phnum; i++) {
    var at = phoff + i * phentsize;
    if (at + phentsize > bytes.length) return null;
    if (field(at, 4) !== 3) continue; // PT_INTERP
    var offset = field(at + (is64 ? 8 : 4), word);
    var size = field(at + (is64 ? 32 : 16), word);
    if (size > 4096) return null;
    var text = offset + size <= bytes.length ? bytes.subarray(offset, offset + size) : readAt ? readAt(offset, size) : null;
    if (!text || text.length !== size) return null;
    var name = '';
    for (var j = 0; j < size && text[j] !== 0; j++) name += String.fromCharCode(text[j]);
    return name;
  }
  return null;
}

/**
 * 'musl' or 'gnu': the C library a process has mapped, from the text of its
 * /proc/self/maps; null when the text names neither or both (glibc's libc
 * beside musl's), or gcompat, or names its libc in a way not known here
 * (Debian's musl is mapped as .../x86_64-linux-musl/libc.so). Only the libc's own file
 * counts, as the last part of a mapped path: musl's is its loader,
 * ld-musl-<arch>.so.1 (or libc.musl-<arch>.so.1); glibc's is libc.so.6,
 * or libc-2.NN.so before 2.34. (Not glibc's loader: a musl process may map
 * a file named like it, gcompat's shim.) The text grows with the process's
 * threads (~60 lines a worker): binding.js reads it on the main thread only.
 */
function mappedLibc(maps) {
  // gcompat (glibc's names over musl): the executable's loader decides.
  if (typeof maps !== 'string' || maps.indexOf('/libgcompat.so') !== -1) return null;
  // (indexOf, not a regular expression: compiling one costs more here.)
  var musl = mapsName(maps, '/ld-musl-', '.so.1', true) || mapsName(maps, '/libc.musl-', '.so.1', true);
  var gnu = mapsName(maps, '/libc.so.6', '', false) || mapsName(maps, '/libc-2.', '.so', true);
  return musl === gnu ? null : musl ? 'musl' : 'gnu';
}

/**
 * Whether a line of `maps` ends with a path whose last part starts with
 * `start` (which begins with '/') and ends with `end`, with nothing
 * between them or, where `between`, only letters, digits, '_' and '.'; or
 * with that and " (deleted)".
 */
function mapsName(maps, start, end, between) {
  for (var at = maps.indexOf(start); at !== -1; at = maps.indexOf(start, at + 1)) {
    var line = maps.indexOf('\n', at);
    if (line === -1) line = maps.length;
    var name = maps.slice(at + start.length, line);
    if (name.slice(-10) === ' (deleted)') name = name.slice(0, -10);
    if (name.slice(name.length - end.length) !== end) continue;
    var middle = name.slice(0, name.length - end.length);
    var plain = between || middle === '';
    for (var i = 0; i < middle.length && plain; i++) {
      var c = middle.charCodeAt(i);
      plain = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 46;
    }
    if (plain) return true;
  }
  return false;
}

/**
 * 'gnu' or 'musl' on Linux, null elsewhere. `read(file, bytes, position)`
 * returns up to `bytes` of the file from `position` (default 0) as a
 * Uint8Array (a Buffer is one), or null when it cannot be read; `report()`
 * returns process.report's report, or null; `list(dir)` the names in a
 * folder, or null; `text(file)`, when given, a whole file as text, or null.
 *
 * First the C library this very process has mapped (its /proc/self/maps,
 * through `text`, when given: one read that costs a fresh thread less than
 * the next step's, while the process has few threads); then the loader it
 * was started with (the executable's
 * PT_INTERP: /lib/ld-musl-x86_64.so.1 or /lib64/ld-linux-x86-64.so.2).
 * Both are right even where the system's libc is another (a musl Node on a
 * glibc host, or the reverse). Then what the system's ldd is; then Node's
 * report; then whether a musl loader exists. Assumes glibc when nothing
 * tells.
 */
function detectLibc(platform, read, report, list, text) {
  if (platform !== 'linux') return null;
  var mapped = text ? mappedLibc(text('/proc/self/maps')) : null;
  if (mapped) return mapped;
  var interpreter = elfInterpreter(read('/proc/self/exe', 4096), function (offset, size) {
    return read('/proc/self/exe', size, offset);
  });
  if (interpreter && interpreter.indexOf('musl') !== -1) return 'musl';
  if (interpreter && interpreter.indexOf('ld-linux') !== -1) return 'gnu';
  var ldd = read('/usr/bin/ldd', 65536);
  var text = ldd ? Buffer.from(ldd.buffer, ldd.byteOffset, ldd.byteLength).toString('latin1') : '';
  if (text.indexOf('musl') !== -1) return 'musl';
  if (text.indexOf('GNU C Library') !== -1 || text.indexOf('GLIBC') !== -1) return 'gnu';
  var r = report();
  if (r && r.header && r.header.glibcVersionRuntime) return 'gnu';
  var shared = r && Array.isArray(r.sharedObjects) ? r.sharedObjects : [];
  for (var i = 0; i < shared.length; i++) if (/(^|\/)(ld-musl-|libc\.musl-)[^/]*$/.test(shared[i])) return 'musl';
  var names = list('/lib') || [];
  for (var j = 0; j < names.length; j++) if (/^ld-musl-/.test(names[j])) return 'musl';
  return 'gnu';
}

/** `linux-x64-gnu`, `darwin-arm64`, `win32-x64`: the prebuilds/ folder name. */
function platformTag(platform, arch, libc) {
  return platform + '-' + arch + (libc ? '-' + libc : '');
}

/**
 * The files to try, in order, as [{ path, why }]: the explicit
 * ATOMICS_WAITASYNC_BINARY alone when it is set; else a local source build
 * in the package folder `dir`, then the prebuilt binary for this tag. A tag
 * the package does not ship is still tried (a folder a user put there).
 */
function candidates(dir, env, tag) {
  var override = env.ATOMICS_WAITASYNC_BINARY;
  if (override) return [{ path: path.resolve(override), why: 'ATOMICS_WAITASYNC_BINARY' }];
  return [
    { path: path.join(dir, FILE), why: 'local source build' },
    { path: path.join(dir, 'prebuilds', tag, FILE), why: 'prebuilt binary' },
  ];
}

module.exports = {
  FILE: FILE,
  SHIPPED: SHIPPED,
  elfInterpreter: elfInterpreter,
  mappedLibc: mappedLibc,
  detectLibc: detectLibc,
  platformTag: platformTag,
  candidates: candidates,
};
