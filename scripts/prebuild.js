#!/usr/bin/env node
'use strict';
// Builds the binaries the package ships, on a Debian 12 x86_64 machine, from
// the package registries alone (PyPI, Debian apt, crates.io), and caches
// them by what they are built from:
//
//   prebuilds/linux-x64-gnu/     ELF x86-64, glibc >= 2.17      rustup's Rust and std
//   prebuilds/linux-arm64-gnu/   ELF aarch64, glibc >= 2.17     Debian's rustc, Debian's aarch64 std
//   prebuilds/linux-x64-musl/    ELF x86-64, musl               Debian's rustc, std built from source
//   prebuilds/linux-arm64-musl/  ELF aarch64, musl              (the same)
//   prebuilds/win32-x64/         PE x86-64 DLL, Windows 10      (the same)
//   prebuilds/win32-arm64/       PE arm64 DLL, Windows 10       (the same)
//   prebuilds/darwin-x64/        Mach-O x86-64, macOS 10.15     (the same)
//   prebuilds/darwin-arm64/      Mach-O arm64, macOS 11, ad-hoc signed (the same)
//
// each named atomics-waitasync.node (lib/platform.js SHIPPED is the list
// binding.js knows).
//
// How:
//   - cargo-zigbuild + zig (PyPI: cargo-zigbuild, ziglang) link every target
//     with zig's libc stubs and SDK files (glibc 2.17 for -gnu, musl, mingw-w64,
//     macOS). They live in a venv under the project cache
//     (~/.cache/atomics-waitasync/toolchain/), installed once and reused.
//   - rustup here has only the host's std and cannot download others. Debian's
//     rustc-web carries an aarch64 glibc std as a package
//     (libstd-rust-web-dev:arm64); for every other target its std is built
//     from the sources in rust-web-src (cargo -Zbuild-std, allowed on a
//     stable rustc by RUSTC_BOOTSTRAP=1), with rust-web-llvm's rust-objcopy
//     for stripping. RUSTC points at Debian's rustc in those builds.
//   - Per-target fixes, in TARGETS: musl cdylibs link libc dynamically
//     (-crt-static); Windows is the mingw ABI with LLVM's runtime (*-gnullvm,
//     which node.exe loads like any DLL of the C ABI) and links with empty
//     libssp/libnode stubs (Debian's rustc adds -lssp, napi-build adds -lnode;
//     N-API is resolved at load time, so nothing is imported from node.exe); macOS gets its minimum version,
//     an @rpath install name and no unused dylibs; zig's Mach-O and COFF
//     linkers ignore rustc's export lists, so -Zdefault-visibility=hidden keeps
//     Rust's own symbols out of the export tables.
//   - A binary is kept in the cache under a key of everything it is built from
//     (the crate's sources, the build's arguments and variables, the compiler
//     and zig versions):
//     a clone whose sources did not change copies it instead of building. The
//     cargo target folders (std included) live in the cache too, so a fresh
//     clone rebuilds only the crate.
//   - then scripts/check-prebuilds.js checks every binary's format, CPU,
//     exports, imports, minimum OS and (darwin-arm64) signature; the binary
//     for this machine is loaded in this Node; the arm64 glibc one is
//     dlopen()ed under qemu-aarch64 when qemu-user and libc6-arm64-cross are
//     installed. scripts/test-install.js runs the others it can run (Wine,
//     a musl Node).
//
// Every install step checks first and does nothing when all is there, so CI
// can run this every time. Needs: rustup Rust, Python 3 with venv + pip, and
// root (or password-less sudo) for apt-get on a cold machine.
//
//   node scripts/prebuild.js                               every target
//   node scripts/prebuild.js --only linux-arm64-gnu,win32-x64   some (comma-separated)
//   node scripts/prebuild.js --no-cache                    build even what the cache has
//   node scripts/prebuild.js --toolchain                   only install zig; print `python <its venv's python>`

const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { cacheDir } = require('./lib/cache');
const { rootCommand } = require('./lib/apt');

const root = path.join(__dirname, '..');
const prebuildsDir = path.join(root, 'prebuilds');
const FILE = 'atomics-waitasync.node';

// Pinned: a new version is a deliberate change, and the venv's folder name
// carries the versions so that a bump installs next to the old one.
const CARGO_ZIGBUILD = '0.24.0';
const ZIGLANG = '0.17.1';
const GLIBC = '2.17';
// Debian's Rust: the compiler, the aarch64 glibc std, std's sources (for
// -Zbuild-std) and rust-objcopy (rustc strips Mach-O with it).
const DEBIAN_PACKAGES = ['rustc-web', 'libstd-rust-web-dev:arm64', 'rust-web-src', 'rust-web-llvm'];

/**
 * How each shipped folder is built. `std`: 'rustup' (the host's own std),
 * 'debian' (Debian's packaged std for the triple) or 'source' (-Zbuild-std).
 * `zig`: the target as cargo-zigbuild takes it (a glibc version suffix picks
 * the stubs). `env`, `rustflags` (every crate, std included), `windowsStubs`
 * (the empty libssp/libnode archives) and `darwin` (DARWIN_LINK_ARGS, the
 * final link only) are the target's fixes, explained in the header;
 * recipe() turns them into the build's command line.
 */
const TARGETS = {
  'linux-x64-gnu': { triple: 'x86_64-unknown-linux-gnu', zig: 'x86_64-unknown-linux-gnu.' + GLIBC, std: 'rustup' },
  'linux-arm64-gnu': { triple: 'aarch64-unknown-linux-gnu', zig: 'aarch64-unknown-linux-gnu.' + GLIBC, std: 'debian' },
  'linux-x64-musl': { triple: 'x86_64-unknown-linux-musl', std: 'source', rustflags: ['-C', 'target-feature=-crt-static'] },
  'linux-arm64-musl': { triple: 'aarch64-unknown-linux-musl', std: 'source', rustflags: ['-C', 'target-feature=-crt-static'] },
  // gnullvm (LLVM's libunwind, no libgcc/mingwex): 0.5 MB where x86_64-pc-windows-gnu made 1.2 MB.
  'win32-x64': { triple: 'x86_64-pc-windows-gnullvm', std: 'source', windowsStubs: true },
  'win32-arm64': { triple: 'aarch64-pc-windows-gnullvm', std: 'source', windowsStubs: true },
  'darwin-x64': { triple: 'x86_64-apple-darwin', std: 'source', env: { MACOSX_DEPLOYMENT_TARGET: '10.15' }, darwin: true },
  'darwin-arm64': { triple: 'aarch64-apple-darwin', std: 'source', env: { MACOSX_DEPLOYMENT_TARGET: '11.0' }, darwin: true },
};
const DARWIN_LINK_ARGS = ['-C', 'link-arg=-Wl,-install_name,@rpath/' + FILE, '-C', 'link-arg=-Wl,-dead_strip_dylibs'];

/** The file cargo writes for `triple`. */
function cdylibName(triple) {
  if (/-apple-/.test(triple)) return 'libatomics_waitasync.dylib';
  if (/-windows-/.test(triple)) return 'atomics_waitasync.dll';
  return 'libatomics_waitasync.so';
}

function parseArgs(argv) {
  let only = Object.keys(TARGETS);
  let cache = true;
  let toolchainOnly = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--only' || a.indexOf('--only=') === 0) {
      const value = a === '--only' ? argv[++i] : a.slice('--only='.length);
      only = String(value || '').split(',').filter(Boolean);
      for (let k = 0; k < only.length; k++) {
        if (!TARGETS[only[k]]) die('unknown target ' + only[k] + ' (known: ' + Object.keys(TARGETS).join(', ') + ')');
      }
    } else if (a === '--no-cache') {
      cache = false;
    } else if (a === '--toolchain') {
      toolchainOnly = true;
    } else if (a === '--help' || a === '-h') {
      console.log('usage: node scripts/prebuild.js [--only ' + Object.keys(TARGETS).join(',') + '] [--no-cache] [--toolchain]');
      process.exit(0);
    } else {
      die('unknown argument ' + a);
    }
  }
  return { only: only, cache: cache, toolchainOnly: toolchainOnly };
}

function log(message) {
  console.log('prebuild: ' + message);
}

function die(message) {
  console.error('prebuild: ' + message);
  process.exit(1);
}

const timings = [];
/**
 * Runs `fn`, prints how long it took and what it says (the string it returns,
 * or the `note` of the object it returns), and returns its result.
 */
function step(name, fn) {
  log(name + ' ...');
  const start = Date.now();
  const result = fn();
  const seconds = (Date.now() - start) / 1000;
  const note = typeof result === 'string' ? result : result && result.note ? result.note : '';
  timings.push({ name: name, seconds: seconds });
  log(name + ': ' + (note ? note + ', ' : '') + seconds.toFixed(1) + ' s');
  return result;
}

/** Runs a command, output to our stdout/stderr; dies with its status when it fails. */
function run(cmd, args, options) {
  const opts = Object.assign({ cwd: root, stdio: 'inherit' }, options || {});
  const shown = [cmd].concat(args).join(' ');
  console.log('  $ ' + shown);
  const r = spawnSync(cmd, args, opts);
  if (r.error) die(shown + ': ' + r.error.message);
  if (r.status !== 0) die(shown + ' failed (exit ' + (r.signal || r.status) + ')');
  return r;
}

/** Runs a command quietly; returns { ok, stdout, stderr }. */
function probe(cmd, args, options) {
  const r = spawnSync(cmd, args, Object.assign({ encoding: 'utf8' }, options || {}));
  return { ok: !r.error && r.status === 0, stdout: r.stdout || '', stderr: r.stderr || '', error: r.error };
}

function which(cmd) {
  const dirs = String(process.env.PATH || '').split(path.delimiter);
  for (let i = 0; i < dirs.length; i++) {
    const p = path.join(dirs[i], cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch (error) {
      // not here
    }
  }
  return null;
}

function rmrf(dir) {
  if (fs.rmSync) fs.rmSync(dir, { recursive: true, force: true });
  else spawnSync('rm', ['-rf', dir]);
}

/** apt-get and dpkg as root, one at a time with the project's other set-ups (scripts/lib/apt.js). */
function asRoot(cmd, args) {
  const c = rootCommand(cmd, args);
  return run(c.command, c.args, { env: c.env });
}

let aptUpdated = false;
function aptInstall(packages) {
  if (!aptUpdated) {
    asRoot('apt-get', ['update']);
    aptUpdated = true;
  }
  asRoot('apt-get', ['install', '-y', '--no-install-recommends'].concat(packages));
}

// ---------------------------------------------------------------- toolchain

/** cargo-zigbuild and zig in a venv under the project cache; returns its paths. */
function zigbuildToolchain() {
  const dir = cacheDir('toolchain', 'zigbuild-' + CARGO_ZIGBUILD + '-zig-' + ZIGLANG);
  const bin = path.join(dir, 'bin');
  const tool = {
    dir: dir,
    bin: bin,
    python: path.join(bin, 'python'),
    cargoZigbuild: path.join(bin, 'cargo-zigbuild'),
  };
  const stamp = path.join(dir, '.installed');
  if (fs.existsSync(stamp) && fs.existsSync(tool.cargoZigbuild) && fs.existsSync(tool.python)) {
    return Object.assign(tool, { zigVersion: JSON.parse(fs.readFileSync(stamp, 'utf8')).zig, note: 'present in ' + dir });
  }
  // A venv is not relocatable: build it in place, and mark it done last.
  rmrf(dir);
  const python = process.env.PYTHON || 'python3';
  let venv = probe(python, ['-m', 'venv', dir]);
  if (!venv.ok && which('apt-get')) {
    // Debian's own python3 ships venv/ensurepip separately.
    process.stderr.write(venv.stderr);
    log(python + ' -m venv failed; installing python3-venv');
    rmrf(dir);
    aptInstall(['python3-venv']);
    venv = probe(python, ['-m', 'venv', dir]);
  }
  if (!venv.ok) die(python + ' -m venv ' + dir + ' failed:\n' + venv.stderr + (venv.error ? venv.error.message : ''));
  run(tool.python, [
    '-m',
    'pip',
    'install',
    '--disable-pip-version-check',
    '--no-input',
    'cargo-zigbuild==' + CARGO_ZIGBUILD,
    'ziglang==' + ZIGLANG,
  ]);
  const zig = probe(tool.python, ['-m', 'ziglang', 'version']);
  if (!zig.ok) die('zig does not run: ' + zig.stderr);
  fs.writeFileSync(stamp, JSON.stringify({ cargoZigbuild: CARGO_ZIGBUILD, ziglang: ZIGLANG, zig: zig.stdout.trim() }) + '\n');
  return Object.assign(tool, { zigVersion: zig.stdout.trim(), note: 'installed cargo-zigbuild ' + CARGO_ZIGBUILD + ', zig ' + zig.stdout.trim() + ' in ' + dir });
}

/** Installed version of a Debian package, or null. */
function debianVersion(pkg) {
  const r = probe('dpkg-query', ['-W', '-f', '${db:Status-Abbrev}|${Version}', pkg]);
  if (!r.ok) return null;
  const parts = r.stdout.split('|');
  return parts[0].trim() === 'ii' ? parts[1] : null;
}

/**
 * Debian's rustc with the aarch64 glibc std, std's sources and rust-objcopy;
 * returns { rustc, version, sysroot }.
 */
function debianRust() {
  if (!which('dpkg') || !which('apt-get')) die('the cross builds take their Rust from Debian packages, and this is no Debian');
  let note = 'present';
  const versions = DEBIAN_PACKAGES.map(debianVersion);
  if (versions.indexOf(null) !== -1 || versions.some((v) => v !== versions[0])) {
    const foreign = probe('dpkg', ['--print-foreign-architectures']).stdout.split(/\s+/);
    if (foreign.indexOf('arm64') === -1) asRoot('dpkg', ['--add-architecture', 'arm64']);
    aptInstall(DEBIAN_PACKAGES);
    note = 'installed';
  }
  const files = probe('dpkg', ['-L', 'rustc-web']).stdout.split('\n');
  const rustc = files.filter(function (f) {
    return /\/bin\/rustc$/.test(f);
  })[0];
  if (!rustc) die('rustc-web is installed but `dpkg -L rustc-web` lists no bin/rustc');
  const vv = probe(rustc, ['-vV']);
  if (!vv.ok) die(rustc + ' -vV failed: ' + vv.stderr);
  const sysroot = probe(rustc, ['--print', 'sysroot']).stdout.trim();
  const need = [
    path.join(sysroot, 'lib', 'rustlib', 'aarch64-unknown-linux-gnu', 'lib'),
    path.join(sysroot, 'lib', 'rustlib', 'src', 'rust', 'library', 'std', 'Cargo.toml'),
  ];
  for (let i = 0; i < need.length; i++) if (!fs.existsSync(need[i])) die('Debian rustc at ' + rustc + ' lacks ' + need[i]);
  const release = (/^release: (.*)$/m.exec(vv.stdout) || [])[1];
  return { rustc: rustc, version: vv.stdout.trim(), sysroot: sysroot, note: note + ': ' + rustc + ' ' + release + ' (' + debianVersion('rustc-web') + ')' };
}

/**
 * Empty libssp, libssp_nonshared and libnode archives (and an empty
 * libnode.dll, which napi-build looks for on LIBNODE_PATH) for the Windows
 * links: Debian's rustc asks for -lssp, napi-build for -lnode, and the DLL
 * needs neither (N-API is resolved from the host process at load time).
 */
function windowsStubs() {
  const dir = cacheDir('toolchain', 'windows-gnu-stubs');
  const ar = Buffer.from('!<arch>\n', 'latin1'); // an empty ar archive
  const files = { 'libssp.a': ar, 'libssp_nonshared.a': ar, 'libnode.a': ar, 'libnode.dll': Buffer.alloc(0) };
  Object.keys(files).forEach(function (name) {
    const file = path.join(dir, name);
    if (!fs.existsSync(file)) fs.writeFileSync(file, files[name]);
  });
  return dir;
}

/** Hashes every file the crate is built from (as build.rs's source hash does) into `hash`. */
function hashSources(hash) {
  const list = [];
  (function walk(rel) {
    const entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true });
    for (let i = 0; i < entries.length; i++) {
      const r = rel ? rel + '/' + entries[i].name : entries[i].name;
      if (entries[i].isDirectory()) walk(r);
      else list.push(r);
    }
  })('src');
  list.push('build.rs', 'Cargo.toml', 'Cargo.lock');
  list.sort();
  for (let i = 0; i < list.length; i++) {
    hash.update(list[i] + '\0');
    hash.update(fs.readFileSync(path.join(root, list[i])));
    hash.update('\0');
  }
}

// -------------------------------------------------------------------- build

/** `rustc -vV` of the compiler a target builds with. */
function rustcVersion(name, debian) {
  if (TARGETS[name].std !== 'rustup') return debian.version;
  const env = Object.assign({}, process.env);
  delete env.RUSTC;
  const vv = probe('rustc', ['-vV'], { env: env });
  if (!vv.ok) die('rustc -vV failed: ' + vv.stderr);
  return vv.stdout.trim();
}

/**
 * How one target is built: cargo-zigbuild's arguments, the variables the
 * build sets (`env`) and those it removes (`unset`). Everything here goes
 * into the cache key, so a change to it builds anew.
 */
function recipe(name, debian) {
  const t = TARGETS[name];
  const env = Object.assign({}, t.env || {});
  const unset = ['CARGO_ENCODED_RUSTFLAGS'];
  const args = ['rustc', '--release', '--lib', '--locked', '--target', t.zig || t.triple];
  const rustflags = (t.rustflags || []).slice();
  if (t.std === 'rustup') {
    // rustup's toolchain, even when the caller's environment points elsewhere.
    unset.push('RUSTC', 'RUSTDOC');
  } else {
    env.RUSTC = debian.rustc;
    env.RUSTDOC = path.join(path.dirname(debian.rustc), 'rustdoc');
  }
  if (t.std === 'source') {
    env.RUSTC_BOOTSTRAP = '1';
    // No "backtrace" feature: a panic's message still prints, without the
    // symbolizer (~280 kB of the Windows DLL).
    args.push('-Zbuild-std=std,panic_unwind', '-Zbuild-std-features=panic-unwind');
    rustflags.push('-Zdefault-visibility=hidden');
  }
  if (t.windowsStubs) {
    const stubs = windowsStubs();
    env.LIBNODE_PATH = stubs;
    rustflags.push('-L', 'native=' + stubs);
  }
  if (rustflags.some((f) => /\s/.test(f))) die('a flag with white space cannot go in RUSTFLAGS: ' + rustflags.join(' '));
  env.RUSTFLAGS = rustflags.join(' ');
  if (t.darwin) args.push('--', ...DARWIN_LINK_ARGS);
  return { args: args, env: env, unset: unset };
}

/** The cache key of a target's binary: its recipe, the tools' versions and the crate's sources, hashed. */
function cacheKey(name, build, rustc, zig) {
  const hash = require('crypto').createHash('sha256');
  hash.update(JSON.stringify({ name: name, triple: TARGETS[name].triple, build: build, rustc: rustc, zig: zig, zigbuild: CARGO_ZIGBUILD }));
  hashSources(hash);
  return hash.digest('hex').slice(0, 20);
}

/** Builds one target into prebuilds/<name>/, or copies it from the cache. */
function buildTarget(name, tool, debian, useCache) {
  const t = TARGETS[name];
  const build = recipe(name, debian);
  const key = cacheKey(name, build, rustcVersion(name, debian), tool.zigVersion);
  const cached = path.join(cacheDir('prebuilds', name), key, FILE);
  const dir = path.join(prebuildsDir, name);
  fs.mkdirSync(dir, { recursive: true });
  const to = path.join(dir, FILE);
  if (useCache && fs.existsSync(cached)) {
    install(cached, to);
    return path.relative(root, to) + ', ' + fs.statSync(to).size + ' bytes, from the cache (' + key + ')';
  }
  const env = Object.assign({}, process.env, build.env, {
    PATH: tool.bin + path.delimiter + process.env.PATH,
    CARGO_ZIGBUILD_PYTHON_PATH: tool.python,
    // Cargo's own output and std's build live in the cache, shared by every clone.
    CARGO_TARGET_DIR: cacheDir('cargo-target', t.std),
  });
  for (let i = 0; i < build.unset.length; i++) delete env[build.unset[i]];
  run(tool.cargoZigbuild, build.args, { env: env });
  const from = path.join(env.CARGO_TARGET_DIR, t.triple, 'release', cdylibName(t.triple));
  install(from, cached);
  install(cached, to);
  return path.relative(root, to) + ', ' + fs.statSync(to).size + ' bytes, built';
}

/** Copies to a temporary name and renames, so a process with the old file mapped keeps a valid one. */
function install(from, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  const tmp = to + '.' + process.pid + '.tmp';
  fs.copyFileSync(from, tmp);
  fs.renameSync(tmp, to);
}

// -------------------------------------------------------------------- smoke

/** Loads the binary built for this machine in this Node, in a child process. */
function loadHere(name) {
  const file = path.join(prebuildsDir, name, FILE);
  const code = 'const b = require(' + JSON.stringify(file) + '); console.log(Object.keys(b).sort().join(" "))';
  const r = probe(process.execPath, ['-e', code]);
  if (!r.ok) die('loading ' + file + ' in Node ' + process.version + ' failed:\n' + r.stderr);
  const names = r.stdout.trim().split(' ').filter(Boolean);
  return 'Node ' + process.version + ' loads it: ' + names.length + ' exports (' + names.slice(0, 6).join(', ') + (names.length > 6 ? ', ...' : '') + ')';
}

/**
 * dlopen()s the arm64 binary under qemu-aarch64 with Debian's aarch64 glibc
 * (libc6-arm64-cross): proves the dynamic loader accepts it and finds
 * napi_register_module_v1. The probe is a small C program built once with
 * zig cc. It stands in for Node as the binary's host: the binary imports the
 * N-API functions it calls from the program that loads it (Cargo.toml), so
 * the probe exports every function Node 12.22 does (scripts/lib/napi-functions.js),
 * each a stub the probe never calls.
 */
function dlopenArm64(tool) {
  const sysroot = '/usr/aarch64-linux-gnu';
  if (!which('qemu-aarch64') || !fs.existsSync(path.join(sysroot, 'lib', 'ld-linux-aarch64.so.1'))) {
    return 'skipped (apt-get install qemu-user libc6-arm64-cross to run it)';
  }
  const dir = cacheDir('toolchain', 'dlopen-probe');
  const probeBin = path.join(dir, 'dlopen-aarch64-napi-host-' + ZIGLANG);
  if (!fs.existsSync(probeBin)) {
    const src = path.join(dir, 'dlopen.c');
    const stubs = require('./lib/napi-functions').map((name) => 'void ' + name + '(void) { abort(); }');
    const lines = ['#include <dlfcn.h>', '#include <stdio.h>', '#include <stdlib.h>'].concat(stubs, [
      'int main(int argc, char **argv) {',
      '  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);',
      '  if (!h) { printf("dlopen failed: %s\\n", dlerror()); return 1; }',
      '  void *f = dlsym(h, "napi_register_module_v1");',
      '  if (!f) { printf("no napi_register_module_v1\\n"); return 1; }',
      '  printf("dlopen ok, napi_register_module_v1 found\\n");',
      '  return 0;',
      '}',
      '',
    ]);
    fs.writeFileSync(src, lines.join('\n'));
    const tmp = probeBin + '.' + process.pid + '.tmp';
    // -rdynamic: the stubs are in the dynamic symbol table, where the binary's imports find them.
    run(tool.python, ['-m', 'ziglang', 'cc', '-target', 'aarch64-linux-gnu.' + GLIBC, '-rdynamic', '-o', tmp, src]);
    fs.renameSync(tmp, probeBin);
  }
  const file = path.join(prebuildsDir, 'linux-arm64-gnu', FILE);
  const r = probe('qemu-aarch64', ['-L', sysroot, probeBin, file], { timeout: 120000 });
  if (!r.ok) die('qemu-aarch64 dlopen of ' + file + ' failed:\n' + r.stdout + r.stderr);
  return r.stdout.trim() + ' (qemu-aarch64, ' + sysroot + ')';
}

// --------------------------------------------------------------------- main

function main() {
  const args = parseArgs(process.argv.slice(2));
  const start = Date.now();
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    log('warning: written for Debian 12 on x86_64; this is ' + process.platform + '-' + process.arch);
  }
  const zig = step('cargo-zigbuild + zig toolchain', zigbuildToolchain);
  if (args.toolchainOnly) {
    // For other scripts that need zig (scripts/lib/wine.js): the venv's python, last.
    console.log('python ' + zig.python);
    return;
  }
  const needsDebian = args.only.some(function (n) {
    return TARGETS[n].std !== 'rustup';
  });
  const debian = needsDebian ? step('Debian rustc, aarch64 std, std sources', debianRust) : null;
  for (let i = 0; i < args.only.length; i++) {
    const name = args.only[i];
    step('build ' + name, function () {
      return buildTarget(name, zig, debian, args.cache);
    });
  }

  step('check-prebuilds', function () {
    run(process.execPath, [path.join(__dirname, 'check-prebuilds.js'), prebuildsDir]);
    return '';
  });

  const here = process.platform + '-' + process.arch + '-gnu';
  if (args.only.indexOf(here) !== -1) step('load ' + here + ' here', function () { return loadHere(here); });
  if (args.only.indexOf('linux-arm64-gnu') !== -1) {
    step('dlopen linux-arm64-gnu under qemu', function () { return dlopenArm64(zig); });
  }

  log('done in ' + ((Date.now() - start) / 1000).toFixed(1) + ' s:');
  for (let i = 0; i < timings.length; i++) {
    console.log('  ' + (timings[i].seconds.toFixed(1) + ' s').padStart(8) + '  ' + timings[i].name);
  }
}

module.exports = { TARGETS };

if (require.main === module) main();
