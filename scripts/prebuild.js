#!/usr/bin/env node
'use strict';
// Builds the binaries the package ships, on a Debian 12 x86_64 machine, from
// the package registries alone (PyPI, Debian apt, crates.io):
//
//   prebuilds/linux-x64-gnu/atomics-waitasync.node     ELF x86-64
//   prebuilds/linux-arm64-gnu/atomics-waitasync.node   ELF aarch64
//
// both linked against glibc 2.17 at most, so they load on the old
// distributions where Node 12-16 users are (a plain `cargo build` here needs
// GLIBC_2.34).
//
// How:
//   - cargo-zigbuild + zig (PyPI: cargo-zigbuild, ziglang) link with zig's
//     glibc 2.17 stubs: `cargo zigbuild --target <triple>.2.17`. They live in a
//     venv under the project cache (~/.cache/atomics-waitasync/toolchain/),
//     installed once and reused.
//   - x64: rustup's Rust (its host std).
//   - arm64: rustup here has no aarch64 std and cannot download one, so the
//     Rust compiler and the aarch64 std come from Debian (rustc-web,
//     libstd-rust-web-dev:arm64, security updates of bookworm): RUSTC points
//     at Debian's rustc, in its own target dir (target/prebuild-debian) so it
//     does not invalidate the rustup build's fingerprints in target/.
//   - then scripts/check-prebuilds.js checks every binary (CPU, glibc <= 2.17,
//     napi_register_module_v1), and the binary for this machine is loaded in
//     this Node; the arm64 one is dlopen()ed under qemu-aarch64 when
//     qemu-user and libc6-arm64-cross are installed.
//
// Every install step checks first and does nothing when all is there, so CI
// can run this every time. Needs: rustup Rust, Python 3 with venv + pip, and
// root (or password-less sudo) for apt-get on a cold machine.
//
//   node scripts/prebuild.js                          both targets
//   node scripts/prebuild.js --only linux-arm64-gnu   one (comma-separated list)

const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { cacheDir } = require('./lib/cache');
const { checkPrebuilds } = require('./check-prebuilds');

const root = path.join(__dirname, '..');
const prebuildsDir = path.join(root, 'prebuilds');
const FILE = 'atomics-waitasync.node';
const LIB = 'libatomics_waitasync.so';

// Pinned: a new version is a deliberate change, and the venv's folder name
// carries the versions so that a bump installs next to the old one.
const CARGO_ZIGBUILD = '0.24.0';
const ZIGLANG = '0.17.1';
const GLIBC = '2.17';
const DEBIAN_PACKAGES = ['rustc-web', 'libstd-rust-web-dev:arm64'];

const TARGETS = {
  'linux-x64-gnu': { triple: 'x86_64-unknown-linux-gnu', rust: 'rustup' },
  'linux-arm64-gnu': { triple: 'aarch64-unknown-linux-gnu', rust: 'debian' },
};

function parseArgs(argv) {
  let only = Object.keys(TARGETS);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--only' || a.indexOf('--only=') === 0) {
      const value = a === '--only' ? argv[++i] : a.slice('--only='.length);
      only = String(value || '').split(',').filter(Boolean);
      for (let k = 0; k < only.length; k++) {
        if (!TARGETS[only[k]]) die('unknown target ' + only[k] + ' (known: ' + Object.keys(TARGETS).join(', ') + ')');
      }
    } else if (a === '--help' || a === '-h') {
      console.log('usage: node scripts/prebuild.js [--only ' + Object.keys(TARGETS).join(',') + ']');
      process.exit(0);
    } else {
      die('unknown argument ' + a);
    }
  }
  return { only: only };
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

/** apt-get and dpkg as root: directly when we are root, else through `sudo -n`. */
function asRoot(cmd, args) {
  const env = Object.assign({}, process.env, { DEBIAN_FRONTEND: 'noninteractive' });
  if (process.getuid && process.getuid() === 0) return run(cmd, args, { env: env });
  if (!which('sudo')) die('`' + [cmd].concat(args).join(' ') + '` needs root; run this script as root (or with password-less sudo)');
  return run('sudo', ['-n', 'DEBIAN_FRONTEND=noninteractive', cmd].concat(args), { env: env });
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
    return Object.assign(tool, { note: 'present in ' + dir });
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
  return Object.assign(tool, { note: 'installed cargo-zigbuild ' + CARGO_ZIGBUILD + ', zig ' + zig.stdout.trim() + ' in ' + dir });
}

/** Installed version of a Debian package, or null. */
function debianVersion(pkg) {
  const r = probe('dpkg-query', ['-W', '-f', '${db:Status-Abbrev}|${Version}', pkg]);
  if (!r.ok) return null;
  const parts = r.stdout.split('|');
  return parts[0].trim() === 'ii' ? parts[1] : null;
}

/** Debian's rustc with the aarch64 std; returns { rustc, version }. */
function debianRust() {
  if (!which('dpkg') || !which('apt-get')) die('the arm64 build takes its Rust std from Debian packages, and this is no Debian');
  let note = 'present';
  const versions = DEBIAN_PACKAGES.map(debianVersion);
  if (versions.indexOf(null) !== -1 || versions[0] !== versions[1]) {
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
  const stdDir = path.join(sysroot, 'lib', 'rustlib', 'aarch64-unknown-linux-gnu', 'lib');
  if (!fs.existsSync(stdDir)) die('Debian rustc at ' + rustc + ' has no aarch64 std (' + stdDir + ')');
  const release = (/^release: (.*)$/m.exec(vv.stdout) || [])[1];
  return { rustc: rustc, version: release, note: note + ': ' + rustc + ' ' + release + ' (' + debianVersion('rustc-web') + ')' };
}

// -------------------------------------------------------------------- build

function buildTarget(name, tool, debian) {
  const t = TARGETS[name];
  const baseTarget = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
  const env = Object.assign({}, process.env, {
    PATH: tool.bin + path.delimiter + process.env.PATH,
    CARGO_ZIGBUILD_PYTHON_PATH: tool.python,
  });
  let targetDir = baseTarget;
  if (t.rust === 'debian') {
    targetDir = path.join(baseTarget, 'prebuild-debian');
    env.RUSTC = debian.rustc;
    env.RUSTDOC = path.join(path.dirname(debian.rustc), 'rustdoc');
  } else {
    // rustup's toolchain, even when the caller's environment points elsewhere.
    delete env.RUSTC;
  }
  env.CARGO_TARGET_DIR = targetDir;
  run(
    tool.cargoZigbuild,
    ['zigbuild', '--release', '--lib', '--locked', '--target', t.triple + '.' + GLIBC],
    { env: env }
  );
  const from = path.join(targetDir, t.triple, 'release', LIB);
  const dir = path.join(prebuildsDir, name);
  fs.mkdirSync(dir, { recursive: true });
  const to = path.join(dir, FILE);
  // Copy and rename, so that a process with the old file mapped keeps a valid one.
  const tmp = to + '.' + process.pid + '.tmp';
  fs.copyFileSync(from, tmp);
  fs.renameSync(tmp, to);
  const size = fs.statSync(to).size;
  return path.relative(root, to) + ', ' + size + ' bytes';
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
 * napi_register_module_v1. The probe is a 10-line C program built once with zig cc.
 */
function dlopenArm64(tool) {
  const sysroot = '/usr/aarch64-linux-gnu';
  if (!which('qemu-aarch64') || !fs.existsSync(path.join(sysroot, 'lib', 'ld-linux-aarch64.so.1'))) {
    return 'skipped (apt-get install qemu-user libc6-arm64-cross to run it)';
  }
  const dir = cacheDir('toolchain', 'dlopen-probe');
  const probeBin = path.join(dir, 'dlopen-aarch64-' + ZIGLANG);
  if (!fs.existsSync(probeBin)) {
    const src = path.join(dir, 'dlopen.c');
    fs.writeFileSync(
      src,
      [
        '#include <dlfcn.h>',
        '#include <stdio.h>',
        'int main(int argc, char **argv) {',
        '  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);',
        '  if (!h) { printf("dlopen failed: %s\\n", dlerror()); return 1; }',
        '  void *f = dlsym(h, "napi_register_module_v1");',
        '  if (!f) { printf("no napi_register_module_v1\\n"); return 1; }',
        '  printf("dlopen ok, napi_register_module_v1 found\\n");',
        '  return 0;',
        '}',
        '',
      ].join('\n')
    );
    const tmp = probeBin + '.' + process.pid + '.tmp';
    run(tool.python, ['-m', 'ziglang', 'cc', '-target', 'aarch64-linux-gnu.' + GLIBC, '-o', tmp, src]);
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
  const needsDebian = args.only.some(function (n) {
    return TARGETS[n].rust === 'debian';
  });
  const debian = needsDebian ? step('Debian rustc + aarch64 std', debianRust) : null;
  for (let i = 0; i < args.only.length; i++) {
    const name = args.only[i];
    step('build ' + name, function () {
      return buildTarget(name, zig, debian);
    });
  }

  let failed = 0;
  step('check-prebuilds', function () {
    const results = checkPrebuilds(prebuildsDir);
    let passed = 0;
    for (let i = 0; i < results.length; i++) {
      const r = results[i];
      if (r.ok) passed++;
      else failed++;
      console.log(
        '  ' + (r.ok ? 'ok   ' : 'FAIL ') + r.name + ': ' +
          (r.ok ? r.machine + ', GLIBC ' + r.maxGlibc + ' <= ' + GLIBC + ', ' + r.size + ' bytes' : r.problems.join('; '))
      );
    }
    return passed + ' passed, ' + failed + ' failed';
  });
  if (failed) die('check-prebuilds found ' + failed + ' bad binary(ies)');

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

main();
