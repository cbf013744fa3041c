'use strict';
// Loads the compiled addon. Kept apart from the API so that a missing or
// unloadable binary fails here, with one clear message. Runs on every runtime
// the package supports, so it keeps to what Node 12.22 parses (no `node:`
// prefix, no `?.`, no `??`) and spawns no process.
//
// The order, first that loads wins:
//   1. ATOMICS_WAITASYNC_BINARY       an explicit path; when set, nothing else is tried
//   2. ./atomics-waitasync.node       a local source build (npm install in a clone,
//                                     or `npx atomics-waitasync-build`)
//   3. ./prebuilds/<platform>-<arch>[-<libc>]/atomics-waitasync.node
//                                     the binary shipped for this platform
// When none loads, the Error (code ERR_ATOMICS_WAITASYNC_NO_BINARY) names the
// platform, every path tried with its own load error, and the build command.
// When one loads but another copy of the package in this process, loaded
// first, has a waiter core it cannot share, the next candidate is tried; if
// none loads, the first such Error (code ERR_ATOMICS_WAITASYNC_ABI_MISMATCH)
// is thrown, with every path tried (its `tried`, and in its message).

var fs = require('fs');
var platform = require('./lib/platform.js');
var isMainThread = require('./lib/describe.js').isMainThread;

var BUILD_COMMAND = 'npx atomics-waitasync-build';
// Where tests and diagnostics can read which file was loaded.
var LOADED_FROM = Symbol.for('atomics-waitasync.binaryPath');
// The code of the Error a copy of the package fails to load with when
// another copy, loaded first, has a waiter core of another ABI.
var ABI_MISMATCH = 'ERR_ATOMICS_WAITASYNC_ABI_MISMATCH';

/**
 * Up to `bytes` of a file from `position` (default 0) as a Uint8Array, or
 * null when it cannot be read. (Not a Buffer: every load reads the ELF
 * header of /proc/self/exe, and a thread's first Buffer costs more than the
 * read, its pool and all.)
 */
function readFile(file, bytes, position) {
  var fd;
  try {
    fd = fs.openSync(file, 'r');
    var buffer = new Uint8Array(bytes);
    var read = fs.readSync(fd, buffer, 0, bytes, position || 0);
    return buffer.subarray(0, read);
  } catch (error) {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * A whole file as text, or null when it cannot be read. (The module loader
 * reads each file this way: the code it runs is compiled already.)
 */
function readText(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    return null;
  }
}

/** The names in a folder, or null when it cannot be read. */
function listDir(dir) {
  try {
    return fs.readdirSync(dir);
  } catch (error) {
    return null;
  }
}

/** Node's diagnostic report, or null (Bun, Deno, a policy that forbids it). */
function report() {
  try {
    var r = process.report && typeof process.report.getReport === 'function' ? process.report.getReport() : null;
    return r && typeof r === 'string' ? JSON.parse(r) : r; // Node 12 returns JSON text
  } catch (error) {
    return null;
  }
}

/** The first line of a load error, which is where the dynamic loader says why. */
function reason(error) {
  var message = error && error.message ? String(error.message) : String(error);
  return message.split('\n')[0];
}

/** 'Tried, in order:' and one line per path tried, for an error message. */
function triedLines(tried) {
  var lines = ['Tried, in order:'];
  for (var i = 0; i < tried.length; i++) {
    lines.push('  ' + tried[i].path + ' (' + tried[i].why + '): ' + tried[i].error);
  }
  return lines;
}

function noBinaryError(libc, tag, tried, last) {
  var where = process.platform + '-' + process.arch + (libc ? ' (' + (libc === 'gnu' ? 'glibc' : libc) + ')' : '');
  var lines = [
    'atomics-waitasync: no native addon loads on ' + where + '.',
  ].concat(triedLines(tried));
  if (!Object.prototype.hasOwnProperty.call(platform.SHIPPED, tag)) {
    lines.push(
      'The package ships no binary for ' + tag + ' (it ships ' + Object.keys(platform.SHIPPED).join(', ') + '). ' +
        'Build one from source, once, in the project that depends on the package ' +
        '(needs Rust and cargo: https://rustup.rs):'
    );
  } else {
    lines.push(
      'The binary for ' + tag + ' needs ' + platform.SHIPPED[tag] + ' or later. If the prebuilt binary is missing or ' +
        'cannot load here, build one from source, once, in the project that depends on the package ' +
        '(needs Rust and cargo: https://rustup.rs):'
    );
  }
  lines.push('  ' + BUILD_COMMAND);
  var error = new Error(lines.join('\n'));
  error.code = 'ERR_ATOMICS_WAITASYNC_NO_BINARY';
  error.platform = process.platform;
  error.arch = process.arch;
  error.libc = libc;
  error.tried = tried;
  if (last) error.cause = last;
  return error;
}

function load() {
  // /proc/self/maps grows with the process's threads (~60 lines each): a
  // worker of a pool of 64 would read 200 kB. Workers read the executable's
  // ELF header instead, whose cost stays put.
  var libc = platform.detectLibc(process.platform, readFile, report, listDir, isMainThread ? readText : undefined);
  var tag = platform.platformTag(process.platform, process.arch, libc);
  var tried = [];
  var last = null;
  var mismatch = null;
  var list = platform.candidates(__dirname, process.env, tag);
  for (var i = 0; i < list.length; i++) {
    var candidate = list[i];
    if (!fs.existsSync(candidate.path)) {
      tried.push({ path: candidate.path, why: candidate.why, error: 'not found' });
      continue;
    }
    try {
      var addon = require(candidate.path);
      Object.defineProperty(addon, LOADED_FROM, { value: candidate.path, configurable: true });
      return addon;
    } catch (error) {
      // It loaded, but another copy of the package loaded first with a
      // waiter core it cannot share (src/napi/shared.rs). This copy's next
      // binary may have one it can (a stale local build before a matching
      // prebuilt one): go on, and throw this error if nothing loads.
      if (error && error.code === ABI_MISMATCH && !mismatch) mismatch = error;
      last = error;
      tried.push({ path: candidate.path, why: candidate.why, error: reason(error) });
    }
  }
  if (mismatch) throw mismatchError(mismatch, tried);
  throw noBinaryError(libc, tag, tried, last);
}

/** The first ABI mismatch, with every path tried (its `tried`, and in its message). */
function mismatchError(error, tried) {
  var lines = [error.message].concat(triedLines(tried));
  try {
    error.message = lines.join('\n');
  } catch (ignored) {
    // A frozen error: its own message still says what to do.
  }
  error.tried = tried;
  return error;
}

module.exports = load();
