#!/usr/bin/env node
'use strict';
// "Installs anywhere", proved on this machine from the packed tarball:
//
//   pack        node scripts/prebuild.js (every folder of lib/platform.js SHIPPED,
//               checked by scripts/check-prebuilds.js), scripts/stage.js (the package as
//               published) and npm pack in it; the tarball's file list
//               (what must and must not ship) and every .node in it (check-prebuilds:
//               format, CPU, exports, imports, minimum OS, signature), and its
//               --self-test (each check fails on a binary broken its way)
//   installs    fresh projects, each with its own package.json, installed with no
//               cargo/rustc on PATH: npm, pnpm 12, Yarn 4 (node-modules and PnP), Bun;
//               each runs __test__/install/smoke.js (worker wait/notify, AsyncLock,
//               polyfill) and must load the prebuilt binary from its own node_modules
//   runtimes    the npm-installed copy on Node 12.22, 14, 16, 18, 20, 22, 24, Bun and
//               Deno 2 (smoke), and the compat subset (__test__/compat/run.js, ponyfill
//               and polyfill) on each Node and Bun, run from inside the installed copy
//   arm64       an npm-installed copy under qemu-user (qemu-aarch64 -L
//               /usr/aarch64-linux-gnu) with linux-arm64 Node 20 and 24: smoke and
//               compat, loading prebuilds/linux-arm64-gnu
//   win32       an npm-installed copy run by Node 20 and 22 for Windows under Wine 8.0
//               (scripts/lib/install-win32.js, scripts/lib/wine.js): smoke and compat,
//               loading prebuilds/win32-x64
//   musl        an npm-installed copy run by musl Node 22 and 24 (PyPI wheels) on
//               Debian 13's musl 1.2.5 loader, and arm64 musl Node 24 under qemu-user
//               (scripts/lib/install-musl.js, scripts/lib/musl.js): each proved a musl
//               process first, then smoke and compat, loading prebuilds/linux-*-musl
//   build       `npx atomics-waitasync-build` in a fresh npm-installed copy with cargo:
//               only atomics-waitasync.node is added, no target/, its temp folder is
//               gone, and the smoke program then loads that local build
//   runners     scripts/test-runners.js (ava, mocha --parallel), when it exists
//
// Everything it needs (package managers, runtimes, qemu, Wine, musl) it installs itself into the
// cache (scripts/lib/cache.js) or with apt-get, and reuses.
//
//   node scripts/test-install.js                     everything
//   node scripts/test-install.js --only npm,pnpm     checks whose group or name start matches (and what they need)
//   node scripts/test-install.js --skip arm64,build  all but those
//   node scripts/test-install.js --list              the checks, with their groups
//   node scripts/test-install.js --jobs 3            parallel steps (default 2: the CI machine's cores)
//   node scripts/test-install.js --tarball x.tgz     test that tarball; no prebuild, no pack
//   node scripts/test-install.js --keep              keep the temporary projects
//
// Prints `ok <check> (<s> s)` or `FAIL <check>` with its output, per check, then the
// step timings and, last, `install: N passed, N failed`; exits 1 on any failure.

const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { cacheDir } = require('./lib/cache');
const { rootCommand } = require('./lib/apt');
const runtimes = require('./runtimes');
const { stage, LOAD_PATH, LATER } = require('./stage');
const { toolPaths, isInstalled, installArgs } = require('./lib/tools');

const root = path.join(__dirname, '..');
const SMOKE = path.join(root, '__test__', 'install', 'smoke.js');
const PACKAGE = 'atomics-waitasync';
const BINARY = 'atomics-waitasync.node';

// Pinned: a cached tool is the one the test was written against.
const NODE_RUNTIMES = ['node12', 'node14', 'node16', 'node18', 'node20', 'node22', 'node24'];
const ARM64_RUNTIMES = ['node20-arm64', 'node24-arm64'];
// Every folder the package ships (lib/platform.js), each checked in the tarball by scripts/check-prebuilds.js.
const PREBUILDS = Object.keys(require('../lib/platform').SHIPPED);
const QEMU = { binary: 'qemu-aarch64', sysroot: '/usr/aarch64-linux-gnu', packages: ['qemu-user', 'libc6-arm64-cross', 'libstdc++6-arm64-cross'] };
// The arguments before the arm64 program. LD_LIBRARY_PATH keeps the guest on the
// sysroot's libc: without it, ld.so (from the sysroot) follows the host's
// /etc/ld.so.cache, and where Debian's multiarch libc6:arm64 is installed too
// (/lib/aarch64-linux-gnu, another 2.36 build) it loads that libc, whose
// private ABI does not match: Node then spins forever in pthread_create.
const QEMU_ARGS = ['-L', QEMU.sysroot, '-E', `LD_LIBRARY_PATH=${QEMU.sysroot}/lib`];
// What the tarball must hold, and what it must not.
const REQUIRED = ['LICENSE', 'CHANGELOG.md', 'README.md', 'package.json', 'binding.js', 'index.js', 'polyfill.js',
  'Cargo.toml', 'Cargo.lock', 'build.rs', 'scripts/build.js', 'scripts/build-from-source.js',
  ...PREBUILDS.map((p) => `prebuilds/${p}/${BINARY}`)];
const REQUIRED_DIRS = ['lib/', 'src/'];
const FORBIDDEN_DIRS = ['__test__/', 'benchmark/', 'target/', 'tests/', '.ci/', 'node_modules/', '.github/'];
const FORBIDDEN = [BINARY];

// ---------------------------------------------------------------------------
// Processes

// The process groups still running, killed if this script is interrupted.
const live = new Set();

function killGroup(pid) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch (error) {
    // already gone
  }
}

/**
 * Runs a command; resolves with { status, signal, output } (stdout and stderr
 * interleaved), never rejects. Kills the process group after `timeout` ms.
 */
function exec(command, args, options = {}) {
  return new Promise((resolve) => {
    let output = '';
    let timedOut = false;
    const child = spawn(command, args, {
      cwd: options.cwd || root,
      env: options.env || cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, so a timeout kills what it started too
    });
    if (child.pid) live.add(child.pid);
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, options.timeout || 300000);
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (error) => {
      output += `${error.message}\n`;
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      live.delete(child.pid);
      if (timedOut) output += `\n[killed after ${options.timeout || 300000} ms]\n`;
      resolve({ status, signal, output, timedOut });
    });
  });
}

/** exec, throwing with the output when it does not exit 0. */
async function must(command, args, options) {
  const r = await exec(command, args, options);
  if (r.status !== 0) {
    const line = [command].concat(args).map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ');
    throw new Error(`${line} exited ${r.signal || r.status}\n${r.output}`);
  }
  return r.output;
}

/** The environment a user's shell would have: nothing npm sets for scripts, no preloads. */
function cleanEnv(extra) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) && !/^npm_config_(registry|cache|userconfig)$/i.test(key)) continue;
    if (['NODE_OPTIONS', 'INIT_CWD', 'ATOMICS_WAITASYNC_BINARY', 'ATOMICS_WAITASYNC_TEST_POLYFILL'].includes(key)) continue;
    env[key] = value;
  }
  env.DENO_NO_UPDATE_CHECK = '1';
  return Object.assign(env, extra);
}

/** Where `name` is found on `pathList` (an executable file), or null. */
function which(name, pathList) {
  for (const dir of pathList.split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch (error) {
      // not here
    }
  }
  return null;
}

// What a Rust toolchain puts on PATH (rustup's ~/.cargo/bin, Debian's cargo/rustc packages).
const RUST_TOOL = /^(cargo|rustc|rustup|rustdoc|rustfmt|rust-[\w-]+|cargo-[\w-]+|clippy-driver|rls|rust-analyzer)$/;

/**
 * PATH with no cargo or rustc on it: a folder that holds them is replaced by
 * a folder of links to everything else in it (so /usr/bin keeps its tools when
 * Debian's cargo lives there too), or dropped when nothing else is left
 * (~/.cargo/bin).
 */
function pathWithoutRust(work) {
  const kept = [];
  let n = 0;
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (!dir || kept.includes(dir)) continue;
    if (!which('cargo', dir) && !which('rustc', dir)) {
      kept.push(dir);
      continue;
    }
    const names = fs.readdirSync(dir).filter((name) => !RUST_TOOL.test(name));
    if (!names.length) continue;
    const mirror = path.join(work, `path-without-rust-${n++}`);
    fs.mkdirSync(mirror, { recursive: true });
    for (const name of names) fs.symlinkSync(path.join(dir, name), path.join(mirror, name));
    kept.push(mirror);
  }
  return kept.join(path.delimiter);
}

// ---------------------------------------------------------------------------
// Small helpers

const seconds = (ms) => (ms / 1000).toFixed(1);

/** Every file under `dir`, relative, with its size: { 'a/b.js': 123 }. */
function snapshot(dir) {
  const out = {};
  (function walk(rel) {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = path.join(rel, entry.name);
      if (entry.isDirectory()) walk(r);
      else out[r] = entry.isFile() ? fs.statSync(path.join(dir, r)).size : -1;
    }
  })('');
  return out;
}

/** Folders named `name` anywhere under `dir`. */
function findDirs(dir, name) {
  const found = [];
  (function walk(d) {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const full = path.join(d, entry.name);
      if (entry.name === name) found.push(full);
      walk(full);
    }
  })(dir);
  return found;
}

function copyTree(from, to) {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const a = path.join(from, entry.name);
    const b = path.join(to, entry.name);
    if (entry.isDirectory()) copyTree(a, b);
    else fs.copyFileSync(a, b);
  }
}

/**
 * A fresh project folder with its own package.json ("type": "commonjs": Deno
 * runs a .js file as CommonJS only with it) and the smoke program.
 */
function makeProject(work, name, extra) {
  const dir = path.join(work, name);
  fs.mkdirSync(dir, { recursive: true });
  const manifest = Object.assign({ name: `install-check-${name}`, version: '1.0.0', private: true, type: 'commonjs' }, extra);
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  fs.copyFileSync(SMOKE, path.join(dir, 'smoke.js'));
  return dir;
}

/**
 * Checks the smoke program's output: every check ok, and the binary it
 * loaded is `expected(dir)`'s file inside `project` (realpath), never a build.
 */
function assertSmoke(output, project, { local = false, tag = 'linux-x64-gnu' } = {}) {
  const lines = output.split('\n');
  const binaryLine = lines.find((l) => l.startsWith('binary '));
  if (!lines.includes('smoke: ok')) throw new Error(`smoke did not print "smoke: ok"\n${output}`);
  for (const check of ['wait', 'lock', 'polyfill']) {
    if (!lines.some((l) => l.startsWith(`ok ${check}:`))) throw new Error(`smoke printed no "ok ${check}:" line\n${output}`);
  }
  if (!binaryLine) throw new Error(`smoke printed no "binary" line\n${output}`);
  const binary = binaryLine.slice('binary '.length);
  const real = fs.realpathSync(project);
  const suffix = local ? `/${PACKAGE}/${BINARY}` : `/${PACKAGE}/prebuilds/${tag}/${BINARY}`;
  if (!binary.startsWith(`${real}/`) || !binary.endsWith(suffix) || !binary.includes('node_modules')) {
    throw new Error(`loaded ${binary}; expected …node_modules…${suffix} inside ${real}\n${output}`);
  }
  if (!fs.existsSync(binary)) throw new Error(`the loaded binary ${binary} does not exist\n${output}`);
  return `${lines.find((l) => l.startsWith('runtime '))}; ${path.relative(real, binary)}`;
}

/**
 * A compat subset run's closing line (`N passed, 0 failed, N skipped`) when
 * it exited 0 with nothing failed; else throws with its output.
 */
function compatResult(res) {
  if (res.status !== 0) throw new Error(`exit ${res.signal || res.status}\n${res.output}`);
  const last = res.output.trim().split('\n').slice(-1)[0];
  if (!/^\d+ passed, 0 failed/.test(last)) throw new Error(res.output);
  return last;
}

/**
 * In the installed copy at `installed` only, the compat cases' children
 * (`execPath file.js`) are spawned through `command` with `args` before
 * them: qemu-user runs one arm64 process, and the kernel here cannot exec
 * an arm64 child without binfmt_misc.
 */
function spawnCompatChildrenThrough(installed, command, args) {
  const context = path.join(installed, '__test__', 'compat', 'context.js');
  const source = fs.readFileSync(context, 'utf8');
  const spawnChild = 'spawn(process.execPath, args, {';
  if (!source.includes(spawnChild)) throw new Error(`${context} no longer has "${spawnChild}"; update scripts/test-install.js`);
  fs.writeFileSync(context, source.replace(spawnChild,
    `spawn(${JSON.stringify(command)}, ${JSON.stringify(args)}.concat([process.execPath], args), {`));
}

// ---------------------------------------------------------------------------
// The tasks: { name, groups, deps, cpu, timeout, run(ctx) → note }

function plan(options) {
  const tasks = [];
  const add = (task) => {
    tasks.push(Object.assign({ deps: [], groups: [], cpu: 1, long: false }, task));
    return task.name;
  };
  const S = {}; // results shared between tasks

  /** Runs scripts/<file> on this Node; its last line of output is the step's result. */
  async function runScript(file, timeout) {
    const script = path.join(root, 'scripts', file);
    if (!fs.existsSync(script)) throw new Error(`scripts/${file} does not exist`);
    const out = await must(process.execPath, [script], { timeout });
    return out.trim().split('\n').slice(-1)[0];
  }

  // --- pack -------------------------------------------------------------
  if (options.tarball) {
    add({
      name: 'pack: use --tarball',
      groups: ['pack'],
      cpu: 0,
      async run() {
        S.tarball = path.resolve(options.tarball);
        if (!fs.existsSync(S.tarball)) throw new Error(`${S.tarball} does not exist`);
        return S.tarball;
      },
    });
  } else {
    add({
      name: 'pack: prebuild',
      groups: ['pack'],
      cpu: 2,
      // Cold, std included, the eight took 677 s here; prebuild.js ends with check-prebuilds.
      timeout: 1800000,
      run: () => runScript('prebuild.js', 1800000),
    });
    add({
      name: 'pack: npm pack',
      groups: ['pack'],
      deps: ['pack: prebuild'],
      async run(ctx) {
        const dest = path.join(ctx.work, 'pack');
        fs.mkdirSync(dest, { recursive: true });
        // The package as published (scripts/stage.js: index.bundle.js is the load path in one file), packed.
        const staged = stage(path.join(ctx.work, 'stage'));
        // --ignore-scripts: `prepare` would rebuild the addon (not shipped).
        const out = await must('npm', ['pack', '--ignore-scripts', '--json', '--loglevel=error', '--pack-destination', dest],
          { timeout: 120000, env: cleanEnv(), cwd: staged });
        const info = JSON.parse(out.slice(out.indexOf('[')))[0];
        S.tarball = path.join(dest, info.filename);
        S.packInfo = info;
        return `${info.filename}: ${(info.size / 1024).toFixed(0)} kB packed, ${(info.unpackedSize / 1024).toFixed(0)} kB unpacked, ${info.entryCount} files`;
      },
    });
  }
  const packed = options.tarball ? 'pack: use --tarball' : 'pack: npm pack';

  add({
    name: 'pack: file list',
    groups: ['pack'],
    deps: [packed],
    async run(ctx) {
      const list = await must('tar', ['-tzf', S.tarball]);
      const files = list.split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
      const problems = [];
      for (const f of REQUIRED) if (!files.includes(f)) problems.push(`missing ${f}`);
      for (const d of REQUIRED_DIRS) if (!files.some((f) => f.startsWith(d))) problems.push(`missing ${d}`);
      for (const d of FORBIDDEN_DIRS) {
        const hit = files.filter((f) => f.startsWith(d));
        if (hit.length) problems.push(`ships ${d} (${hit.slice(0, 3).join(', ')}${hit.length > 3 ? ', …' : ''})`);
      }
      for (const f of FORBIDDEN) if (files.includes(f)) problems.push(`ships ${f} (a local build)`);
      if (problems.length) throw new Error(`${problems.join('\n')}\n\nfiles:\n${files.join('\n')}`);
      const docs = files.filter((f) => f.startsWith('docs/')).length;
      const size = fs.statSync(S.tarball).size;
      const unpacked = S.packInfo ? S.packInfo.unpackedSize : null;
      ctx.summary.push(`tarball ${path.basename(S.tarball)}: ${(size / 1024).toFixed(0)} kB${unpacked ? `, ${(unpacked / 1024).toFixed(0)} kB unpacked` : ''}, ${files.length} files${docs ? ` (docs/: ${docs})` : ' (no docs/)'}`);
      S.extracted = path.join(ctx.work, 'extracted');
      fs.mkdirSync(S.extracted, { recursive: true });
      await must('tar', ['-xzf', S.tarball, '-C', S.extracted]);
      // index.bundle.js is the load path in one file, which index.js compiles with its code
      // cache (scripts/stage.js), unless a tarball given to test is a plain `npm pack`.
      const bundleFile = path.join(S.extracted, 'package', 'index.bundle.js');
      const index = fs.existsSync(bundleFile) ? fs.readFileSync(bundleFile, 'utf8') : '';
      const bundled = LOAD_PATH.filter((name) => index.includes(`sources[${JSON.stringify(name)}] = (function`));
      if (!options.tarball && bundled.length !== LOAD_PATH.length) {
        throw new Error(`the packed index.bundle.js holds ${bundled.length} of the ${LOAD_PATH.length} files of the load path (${LOAD_PATH.join(', ')})`);
      }
      // lib.bundle.js: the family's files, which index.js compiles at a thread's first class.
      const laterFile = path.join(S.extracted, 'package', 'lib.bundle.js');
      const later = fs.existsSync(laterFile) ? fs.readFileSync(laterFile, 'utf8') : '';
      const laterBundled = LATER.filter((name) => later.includes(`later[${JSON.stringify(name)}] = (function`));
      if (!options.tarball && laterBundled.length !== LATER.length) {
        throw new Error(`the packed lib.bundle.js holds ${laterBundled.length} of the ${LATER.length} files of the family (${LATER.join(', ')})`);
      }
      if (files.some((f) => f.startsWith('.code-cache/'))) throw new Error('the tarball ships a .code-cache/ (a local load\'s)');
      return `${files.length} files, ${(size / 1024).toFixed(0)} kB, ${bundled.length ? `index.bundle.js bundles ${bundled.length} files, lib.bundle.js ${laterBundled.length}` : 'index.js as in the repository'}${docs ? `, docs/ shipped (${docs} files)` : ''}`;
    },
  });

  add({
    name: 'pack: prebuilt binaries',
    groups: ['pack'],
    deps: ['pack: file list'],
    cpu: 0,
    async run() {
      // The binaries as a user gets them: from the tarball, every shipped folder and no other.
      const dir = path.join(S.extracted, 'package', 'prebuilds');
      const folders = fs.readdirSync(dir).sort();
      const problems = [];
      for (const folder of PREBUILDS) if (!folders.includes(folder)) problems.push(`no prebuilds/${folder}`);
      for (const folder of folders) if (!PREBUILDS.includes(folder)) problems.push(`unexpected folder prebuilds/${folder}`);
      const out = await exec(process.execPath, [path.join(__dirname, 'check-prebuilds.js'), dir]);
      if (out.status !== 0) problems.push(out.output);
      if (problems.length) throw new Error(problems.join('\n'));
      return out.output.trim().split('\n').slice(-1)[0];
    },
  });
  add({
    name: 'pack: check-prebuilds self-test',
    groups: ['pack'],
    deps: ['pack: file list'],
    cpu: 0,
    async run() {
      // Each check fails on a binary broken in the way it looks for.
      const dir = path.join(S.extracted, 'package', 'prebuilds');
      const out = await exec(process.execPath, [path.join(__dirname, 'check-prebuilds.js'), '--self-test', dir]);
      const last = out.output.trim().split('\n').slice(-1)[0];
      if (out.status !== 0 || !/ 0 failed/.test(last)) throw new Error(out.output);
      return last;
    },
  });

  // --- tools --------------------------------------------------------------
  const ensureRuntime = (name) =>
    add({
      name: `setup: ${name}`,
      groups: ['setup', name],
      cpu: 0,
      timeout: 600000,
      async run() {
        const out = await must(process.execPath, [path.join(__dirname, 'runtimes.js'), name], { timeout: 600000, env: cleanEnv() });
        S[name] = runtimes.binaryPath(name);
        // runtimes.js prints "name<TAB>version<TAB>path<TAB>(cached | installed in N s)".
        const fields = out.trim().split('\n').slice(-1)[0].split('\t');
        return `${fields[1]} ${fields[3] || ''}`;
      },
    });
  const ensureTool = (name) =>
    add({
      name: `setup: ${name}`,
      groups: ['setup', name],
      cpu: 0,
      timeout: 600000,
      async run() {
        const { tool, bin } = toolPaths(name);
        S[name] = bin;
        if (isInstalled(name)) return `${tool.version}, cached`;
        await must('npm', installArgs(name), { timeout: 600000, env: cleanEnv() });
        if (!isInstalled(name)) throw new Error(`${tool.package}@${tool.version} did not install ${bin}`);
        return `${tool.version}, installed`;
      },
    });

  // --- fresh projects, installed without Rust -----------------------------
  /** Installs into a fresh project with `install(dir, env)`, then runs the smoke program there. */
  const manager = ({ name, groups, deps, project, install, smoke, note }) => {
    add({
      name: `${name}: install`,
      groups: groups.concat('install'),
      deps: [packed].concat(deps),
      timeout: 300000,
      async run(ctx) {
        const dir = makeProject(ctx.work, name, project && project(S));
        S[`${name}:dir`] = dir;
        await install(dir, ctx.noRustEnv);
        const installedDir = path.join(dir, 'node_modules', PACKAGE);
        if (name !== 'yarn-pnp' && !fs.existsSync(path.join(installedDir, 'package.json'))) {
          throw new Error(`${installedDir} is missing after the install`);
        }
        if (name !== 'yarn-pnp' && fs.existsSync(path.join(installedDir, BINARY))) {
          throw new Error(`the install built ${path.join(installedDir, BINARY)}`);
        }
        const targets = findDirs(dir, 'target').filter((d) => !/\/node_modules\/\.cache\//.test(d));
        if (targets.length) throw new Error(`the install left target/ folders: ${targets.join(', ')}`);
        return note ? note(dir) : '';
      },
    });
    add({
      name: `${name}: smoke`,
      groups: groups.concat('smoke'),
      deps: [`${name}: install`].concat(deps),
      async run(ctx) {
        const dir = S[`${name}:dir`];
        const [command, args] = smoke(dir);
        const r = await exec(command, args, { cwd: dir, env: ctx.noRustEnv, timeout: 120000 });
        if (r.status !== 0) throw new Error(`exit ${r.signal || r.status}\n${r.output}`);
        return assertSmoke(r.output, dir);
      },
    });
  };

  const npmInstall = async (dir, env) => {
    await must('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', S.tarball], { cwd: dir, env });
  };

  ensureTool('pnpm');
  ensureTool('yarn');
  for (const r of NODE_RUNTIMES.concat(['bun', 'deno'])) ensureRuntime(r);
  for (const r of ARM64_RUNTIMES) ensureRuntime(r);

  manager({
    name: 'npm',
    groups: ['npm'],
    deps: [],
    install: npmInstall,
    smoke: () => [process.execPath, ['smoke.js']],
  });
  manager({
    name: 'pnpm',
    groups: ['pnpm'],
    deps: ['setup: pnpm'],
    install: async (dir, env) => {
      const out = await must(process.execPath, [S.pnpm, 'add', S.tarball], { cwd: dir, env, timeout: 300000 });
      if (/ERR_PNPM_IGNORED_BUILDS|Ignored build scripts/i.test(out)) throw new Error(`pnpm reports ignored builds\n${out}`);
    },
    note: (dir) => path.relative(dir, fs.realpathSync(path.join(dir, 'node_modules', PACKAGE))),
    smoke: () => [process.execPath, ['smoke.js']],
  });
  const yarnrc = (linker) =>
    [`nodeLinker: ${linker}`, 'npmRegistryServer: "https://registry.npmjs.org"', 'enableTelemetry: false',
      'enableGlobalCache: true', ''].join('\n');
  for (const [name, linker] of [['yarn-nm', 'node-modules'], ['yarn-pnp', 'pnp']]) {
    manager({
      name,
      groups: ['yarn', name],
      deps: ['setup: yarn'],
      install: async (dir, env) => {
        fs.writeFileSync(path.join(dir, '.yarnrc.yml'), yarnrc(linker));
        fs.writeFileSync(path.join(dir, 'yarn.lock'), '');
        await must(process.execPath, [S.yarn, 'add', `${PACKAGE}@file:${S.tarball}`], {
          cwd: dir,
          // CI=true makes Yarn refuse to write the lockfile of this fresh project.
          env: Object.assign({}, env, { YARN_ENABLE_IMMUTABLE_INSTALLS: 'false' }),
          timeout: 300000,
        });
      },
      note: (dir) => (linker === 'pnp' ? `PnP: ${fs.existsSync(path.join(dir, '.pnp.cjs')) ? '.pnp.cjs' : 'no .pnp.cjs!'}` : ''),
      smoke: () => (linker === 'pnp' ? [process.execPath, [S.yarn, 'node', 'smoke.js']] : [process.execPath, ['smoke.js']]),
    });
  }
  manager({
    name: 'bun',
    groups: ['bun'],
    deps: ['setup: bun'],
    install: async (dir, env) => {
      await must(S.bun, ['add', S.tarball], { cwd: dir, env, timeout: 300000 });
    },
    smoke: () => [S.bun, ['smoke.js']],
  });

  // --- the npm-installed copy on every runtime ----------------------------
  const COMPAT_FILES = ['compat', 'fixtures'];
  /** Copies the compat subset into the installed package, so everything it loads is that copy. */
  const copyCompat = (installed) => {
    for (const d of COMPAT_FILES) copyTree(path.join(root, '__test__', d), path.join(installed, '__test__', d));
    fs.copyFileSync(path.join(root, '__test__', 'helpers.js'), path.join(installed, '__test__', 'helpers.js'));
  };
  add({
    name: 'runtimes: copy compat',
    groups: ['npm', 'runtimes', 'compat'],
    deps: ['npm: install'],
    cpu: 0,
    async run() {
      // The npm project of the "npm" check is the copy every runtime runs.
      S.runtimesDir = S['npm:dir'];
      copyCompat(path.join(S.runtimesDir, 'node_modules', PACKAGE));
      return 'the npm-installed copy, __test__/compat copied into it';
    },
  });
  for (const r of NODE_RUNTIMES.concat(['bun', 'deno'])) {
    add({
      name: `runtimes: ${r} smoke`,
      groups: ['npm', 'runtimes', r, 'smoke'],
      deps: ['runtimes: copy compat', `setup: ${r}`],
      async run(ctx) {
        const args = r === 'deno' ? ['run', '-A', '--node-modules-dir=manual', 'smoke.js'] : ['smoke.js'];
        const res = await exec(S[r], args, { cwd: S.runtimesDir, env: ctx.noRustEnv, timeout: 120000 });
        if (res.status !== 0) throw new Error(`exit ${res.signal || res.status}\n${res.output}`);
        return assertSmoke(res.output, S.runtimesDir);
      },
    });
    if (r === 'deno') continue; // compat's child-process cases spawn `execPath file.js`, which Deno does not run
    for (const mode of ['ponyfill', 'polyfill']) {
      add({
        name: `runtimes: ${r} compat ${mode}`,
        groups: ['npm', 'runtimes', r, 'compat'],
        deps: ['runtimes: copy compat', `setup: ${r}`],
        async run(ctx) {
          const installed = path.join(S.runtimesDir, 'node_modules', PACKAGE);
          return compatResult(await exec(S[r], [path.join(installed, '__test__', 'compat', 'run.js'), '--mode', mode],
            { cwd: installed, env: ctx.noRustEnv, timeout: 300000 }));
        },
      });
    }
  }

  // --- win32-x64 under Wine (scripts/lib/install-win32.js) -----------------
  require('./lib/install-win32')({ add, S, packed, ensureRuntime, npmInstall, copyCompat, makeProject, assertSmoke, compatResult, PACKAGE, BINARY });

  // --- musl Node, as on Alpine (scripts/lib/install-musl.js) ----------------
  require('./lib/install-musl')({ add, S, packed, ensureRuntime, npmInstall, copyCompat, makeProject, assertSmoke, compatResult, spawnCompatChildrenThrough, exec, cleanEnv, which, QEMU, PACKAGE, BINARY });

  // --- arm64 under qemu-user ----------------------------------------------
  add({
    name: 'setup: qemu-user',
    groups: ['arm64', 'setup'],
    cpu: 0,
    timeout: 900000,
    async run() {
      const ready = () =>
        which(QEMU.binary, process.env.PATH || '') &&
        fs.existsSync(path.join(QEMU.sysroot, 'lib', 'ld-linux-aarch64.so.1')) &&
        fs.existsSync(path.join(QEMU.sysroot, 'lib', 'libstdc++.so.6'));
      if (ready()) return 'installed already';
      if (!which('apt-get', process.env.PATH || '')) throw new Error(`needs ${QEMU.packages.join(', ')} and there is no apt-get`);
      for (const args of [['update'], ['install', '-y', '--no-install-recommends'].concat(QEMU.packages)]) {
        const c = rootCommand('apt-get', args);
        await must(c.command, c.args, { env: c.env, timeout: 1800000 });
      }
      if (!ready()) throw new Error('qemu-aarch64 or the arm64 libraries are still missing after apt-get install');
      return `apt-get install ${QEMU.packages.join(' ')}`;
    },
  });
  // Measured here: arm64 Node starts in 2-4 s under qemu (x64: 0.05 s); the compat
  // subset takes 35-70 s (x64: 2-4 s). The hang guards get 300 s per case.
  const QEMU_PROBE_MS = 90000;
  add({
    name: 'arm64: install',
    groups: ['arm64'],
    long: true, // first: the qemu runs wait on it
    deps: [packed],
    async run(ctx) {
      const dir = makeProject(ctx.work, 'arm64');
      await npmInstall(dir, ctx.noRustEnv);
      S.arm64Dir = dir;
      const installed = path.join(dir, 'node_modules', PACKAGE);
      copyCompat(installed);
      spawnCompatChildrenThrough(installed, which(QEMU.binary, process.env.PATH || '') || QEMU.binary, QEMU_ARGS);
      return 'npm, compat children spawned through qemu-aarch64';
    },
  });
  // One arm64 Node started under qemu before the long runs: when it cannot even
  // print its arch, every arm64 check would only wait out its timeout.
  add({
    name: 'arm64: node starts under qemu',
    groups: ['arm64'],
    long: true,
    deps: ['setup: qemu-user', `setup: ${ARM64_RUNTIMES[0]}`],
    timeout: 200000,
    async run() {
      const node = S[ARM64_RUNTIMES[0]];
      const version = await exec(QEMU.binary, QEMU_ARGS.concat([node, '--version']), { timeout: 60000 });
      const t0 = Date.now();
      const probe = await exec(QEMU.binary, QEMU_ARGS.concat([node, '-e', 'console.log(process.arch)']), { timeout: QEMU_PROBE_MS });
      if (probe.status !== 0 || probe.output.trim() !== 'arm64') {
        throw new Error(
          `${QEMU.binary} ${QEMU_ARGS.join(' ')} node -e 'console.log(process.arch)' ` +
            (probe.timedOut ? `printed nothing in ${QEMU_PROBE_MS / 1000} s (node --version: ${version.output.trim() || version.status})` : `exited ${probe.signal || probe.status}`) +
            `\n${probe.output}`
        );
      }
      return `node ${version.output.trim()} arm64 starts in ${seconds(Date.now() - t0)} s`;
    },
  });
  for (const r of ARM64_RUNTIMES) {
    const qemuArgs = (rest) => QEMU_ARGS.concat([S[r]], rest);
    add({
      name: `arm64: ${r} smoke`,
      groups: ['arm64', r, 'smoke'],
      long: true,
      deps: ['arm64: install', `setup: ${r}`, 'setup: qemu-user', 'arm64: node starts under qemu'],
      timeout: 600000,
      async run(ctx) {
        const env = Object.assign({}, ctx.noRustEnv, { SMOKE_TIMEOUT_MS: String(300000) });
        const res = await exec(QEMU.binary, qemuArgs(['smoke.js']), { cwd: S.arm64Dir, env, timeout: 600000 });
        if (res.status !== 0) throw new Error(`exit ${res.signal || res.status}\n${res.output}`);
        if (!/linux-arm64/.test(res.output)) throw new Error(`not an arm64 process?\n${res.output}`);
        return assertSmoke(res.output, S.arm64Dir, { tag: 'linux-arm64-gnu' });
      },
    });
    for (const mode of ['ponyfill', 'polyfill']) {
      add({
        name: `arm64: ${r} compat ${mode}`,
        groups: ['arm64', r, 'compat'],
        long: true,
        deps: ['arm64: install', `setup: ${r}`, 'setup: qemu-user', 'arm64: node starts under qemu'],
        timeout: 900000,
        async run(ctx) {
          const installed = path.join(S.arm64Dir, 'node_modules', PACKAGE);
          const env = Object.assign({}, ctx.noRustEnv, { ATOMICS_WAITASYNC_COMPAT_HANG_MS: String(300000) });
          const res = await exec(QEMU.binary, qemuArgs([path.join(installed, '__test__', 'compat', 'run.js'), '--mode', mode]),
            { cwd: installed, env, timeout: 900000 });
          const last = compatResult(res);
          if (!/linux-arm64-gnu/.test(fs.readdirSync(path.join(installed, 'prebuilds')).join(' '))) throw new Error('no linux-arm64-gnu prebuild');
          return last;
        },
      });
    }
  }

  // --- build from source on request ----------------------------------------
  add({
    name: 'build: npx atomics-waitasync-build',
    groups: ['build'],
    long: true,
    deps: [packed],
    cpu: 2,
    timeout: 900000,
    async run(ctx) {
      const dir = makeProject(ctx.work, 'build');
      await npmInstall(dir, ctx.noRustEnv);
      const installed = path.join(dir, 'node_modules', PACKAGE);
      const before = snapshot(dir);
      // A private temp folder, so the check of what the build left there sees only this build.
      const tmp = path.join(ctx.work, 'build-tmp');
      fs.mkdirSync(tmp);
      const env = cleanEnv({ TMPDIR: tmp });
      if (!which('cargo', env.PATH || '')) throw new Error('cargo is not on PATH: the build-from-source check needs Rust');
      const t0 = Date.now();
      const out = await must('npx', ['--no-install', 'atomics-waitasync-build'], { cwd: dir, env, timeout: 900000 });
      const buildMs = Date.now() - t0;
      const problems = [];
      if (!fs.existsSync(path.join(installed, BINARY))) problems.push(`no ${path.join(installed, BINARY)}`);
      const after = snapshot(dir);
      const added = Object.keys(after).filter((f) => !(f in before));
      const removed = Object.keys(before).filter((f) => !(f in after));
      const changed = Object.keys(before).filter((f) => f in after && after[f] !== before[f]);
      const expected = path.join('node_modules', PACKAGE, BINARY);
      if (added.join() !== expected) problems.push(`files added: ${added.join(', ') || 'none'} (expected only ${expected})`);
      if (removed.length) problems.push(`files removed: ${removed.join(', ')}`);
      if (changed.length) problems.push(`files changed: ${changed.join(', ')}`);
      const targets = findDirs(dir, 'target');
      if (targets.length) problems.push(`target/ left: ${targets.join(', ')}`);
      const leftovers = fs.readdirSync(tmp).filter((f) => f.startsWith('atomics-waitasync-build-'));
      if (leftovers.length) problems.push(`temp folders left in $TMPDIR: ${leftovers.join(', ')}`);
      if (problems.length) throw new Error(`${problems.join('\n')}\n${out}`);
      // The smoke program, without Rust on PATH, now loads the local build.
      const res = await exec(process.execPath, ['smoke.js'], { cwd: dir, env: ctx.noRustEnv, timeout: 120000 });
      if (res.status !== 0) throw new Error(`smoke after the build: exit ${res.signal || res.status}\n${res.output}`);
      const note = assertSmoke(res.output, dir, { local: true });
      const size = fs.statSync(path.join(installed, BINARY)).size;
      return `cargo build ${seconds(buildMs)} s, ${(size / 1024).toFixed(0)} kB; ${note}`;
    },
  });

  // --- test runners (scripts/test-runners.js, written elsewhere) ----------
  add({
    name: 'runners',
    groups: ['runners'],
    long: true,
    deps: [packed],
    timeout: 900000,
    optional: () => !fs.existsSync(path.join(__dirname, 'test-runners.js')),
    async run(ctx) {
      const lines = [];
      const log = (line) => lines.push(String(line));
      const results = await require('./test-runners').run({ tarball: S.tarball, log });
      for (const r of results) ctx.report(`runners: ${r.name}`, r.ok, r.ms, r.output);
      if (!results.length) throw new Error(`test-runners.js returned no results\n${lines.join('\n')}`);
      return null; // its results are the checks
    },
  });

  return tasks;
}

// ---------------------------------------------------------------------------
// The scheduler: each task starts when its dependencies passed and its CPU
// weight fits in --jobs (downloads and installs weigh 0).

/** Whether `o` names the task: one of its groups ("npm", "node14", "compat"), or the start of its name. */
const matches = (t, o) => t.groups.includes(o) || t.name.startsWith(o);

function select(tasks, only, skip) {
  if (skip) tasks = tasks.filter((t) => !skip.some((o) => matches(t, o)));
  if (!only) return tasks;
  const byName = new Map(tasks.map((t) => [t.name, t]));
  const picked = new Set();
  const pick = (t) => {
    if (picked.has(t)) return;
    picked.add(t);
    for (const d of t.deps) if (byName.has(d)) pick(byName.get(d));
  };
  for (const t of tasks) {
    if (only.some((o) => matches(t, o))) pick(t);
  }
  return tasks.filter((t) => picked.has(t));
}

async function schedule(tasks, ctx, jobs) {
  const state = new Map(tasks.map((t) => [t.name, 'waiting']));
  let cpuInUse = 0;
  let ioInUse = 0;
  const IO_JOBS = 4; // downloads and installs at once
  return new Promise((resolve) => {
    const tick = () => {
      let running = 0;
      // The long ones (qemu, cargo, the runners) first, once they may start: they set the total.
      for (const t of tasks.filter((x) => x.long).concat(tasks.filter((x) => !x.long))) {
        const s = state.get(t.name);
        if (s === 'running') running++;
        if (s !== 'waiting') continue;
        const deps = t.deps.filter((d) => state.has(d)).map((d) => state.get(d));
        const broken = t.deps.find((d) => ['failed', 'blocked'].includes(state.get(d)));
        if (broken) {
          state.set(t.name, 'blocked');
          ctx.report(t.name, false, 0, `not run: ${broken} failed`);
          continue;
        }
        if (!deps.every((s2) => s2 === 'passed' || s2 === 'skipped')) continue;
        const weight = Math.min(t.cpu, jobs);
        if (weight > 0 && cpuInUse + weight > jobs) continue;
        if (weight === 0 && ioInUse >= IO_JOBS) continue;
        cpuInUse += weight;
        if (weight === 0) ioInUse++;
        state.set(t.name, 'running');
        running++;
        const t0 = Date.now();
        ctx.steps.push({ name: t.name, start: t0 - ctx.started });
        const step = ctx.steps[ctx.steps.length - 1];
        Promise.resolve()
          .then(() => {
            if (t.optional && t.optional()) return { skipped: true };
            // A minute past the task's own limit, which its commands take too: a command
            // killed at that limit reports what it printed; this is the backstop.
            return withTimeout(t.run(ctx), (t.timeout || 600000) + 60000, t.name).then((note) => ({ note }));
          })
          .then(
            (r) => {
              step.ms = Date.now() - t0;
              if (r.skipped) {
                state.set(t.name, 'skipped');
                console.log(`skip ${t.name} (its script is not in this checkout)`);
              } else {
                state.set(t.name, 'passed');
                if (r.note !== null) ctx.report(t.name, true, step.ms, r.note);
              }
            },
            (error) => {
              step.ms = Date.now() - t0;
              state.set(t.name, 'failed');
              ctx.report(t.name, false, step.ms, (error && error.message) || String(error));
            }
          )
          .then(() => {
            cpuInUse -= weight;
            if (weight === 0) ioInUse--;
            tick();
          });
      }
      if (running === 0 && ![...state.values()].includes('running')) resolve(state);
    };
    tick();
  });
}

function withTimeout(promise, ms, name) {
  let timer;
  return Promise.race([
    promise,
    new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`${name}: no result after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------

function parseArgs(argv) {
  const options = { only: null, skip: null, jobs: 2, keep: false, tarball: null, list: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--only') options.only = argv[++i].split(',').map((s) => s.trim()).filter(Boolean);
    else if (a.startsWith('--only=')) options.only = a.slice(7).split(',').filter(Boolean);
    else if (a === '--skip') options.skip = argv[++i].split(',').map((s) => s.trim()).filter(Boolean);
    else if (a.startsWith('--skip=')) options.skip = a.slice(7).split(',').filter(Boolean);
    else if (a === '--jobs') options.jobs = Math.max(1, Number(argv[++i]) || 1);
    else if (a === '--keep') options.keep = true;
    else if (a === '--tarball') options.tarball = argv[++i];
    else if (a === '--list') options.list = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return options;
}

const MAX_OUTPUT_LINES = 150;

function indent(text) {
  let lines = String(text).replace(/\s+$/, '').split('\n');
  if (lines.length > MAX_OUTPUT_LINES) {
    lines = [`… ${lines.length - MAX_OUTPUT_LINES} lines cut …`].concat(lines.slice(-MAX_OUTPUT_LINES));
  }
  return lines.map((l) => `    ${l}`).join('\n');
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  let tasks = plan(options);
  if (options.list) {
    for (const t of tasks) console.log(`${t.name}\t[${t.groups.join(', ')}]`);
    return;
  }
  if (!(process.platform === 'linux' && process.arch === 'x64')) {
    console.log(`test-install: skipped: it needs linux-x64 (this is ${process.platform}-${process.arch})`);
    console.log('install: 0 passed, 0 failed');
    return;
  }
  tasks = select(tasks, options.only, options.skip);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'atomics-waitasync-install-'));
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      for (const pid of live) killGroup(pid);
      if (!options.keep) fs.rmSync(work, { recursive: true, force: true });
      console.log(`install: interrupted (${signal})`);
      process.exit(130);
    });
  }
  const noRustPath = pathWithoutRust(work);
  const counts = { passed: 0, failed: 0 };
  const ctx = {
    work,
    started: Date.now(),
    steps: [],
    summary: [],
    noRustEnv: cleanEnv({ PATH: noRustPath, CARGO: '', RUSTC: '' }),
    report(name, ok, ms, note) {
      if (ok) {
        counts.passed++;
        console.log(`ok ${name} (${seconds(ms)} s)${note ? ` ${String(note).split('\n')[0]}` : ''}`);
      } else {
        counts.failed++;
        console.log(`FAIL ${name}${ms ? ` (${seconds(ms)} s)` : ''}\n${indent(note)}`);
      }
    },
  };
  delete ctx.noRustEnv.CARGO;
  delete ctx.noRustEnv.RUSTC;
  console.log(`# test-install: ${tasks.length} steps, --jobs ${options.jobs}, work folder ${work}, cache ${cacheDir()}`);
  for (const tool of ['cargo', 'rustc']) {
    const found = which(tool, noRustPath);
    if (found) {
      ctx.report(`PATH without Rust`, false, 0, `${tool} is still on it: ${found}\nPATH=${noRustPath}`);
      console.log(`install: ${counts.passed} passed, ${counts.failed} failed`);
      process.exitCode = 1;
      return;
    }
  }
  ctx.report('PATH without Rust', true, 0, `cargo and rustc not found on the installs' PATH=${noRustPath}`);

  await schedule(tasks, ctx, options.jobs);

  const total = Date.now() - ctx.started;
  console.log('\n# step timings (start → end, s)');
  for (const s of ctx.steps.sort((a, b) => a.start - b.start)) {
    console.log(`#   ${seconds(s.start).padStart(6)} → ${seconds(s.start + (s.ms || 0)).padStart(6)}  ${seconds(s.ms || 0).padStart(6)}  ${s.name}`);
  }
  for (const line of ctx.summary) console.log(`# ${line}`);
  console.log(`# total ${seconds(total)} s`);
  if (options.keep) console.log(`# kept ${work}`);
  else fs.rmSync(work, { recursive: true, force: true });
  console.log(`install: ${counts.passed} passed, ${counts.failed} failed`);
  process.exitCode = counts.failed === 0 ? 0 : 1;
}

main().catch((error) => {
  console.log(`FAIL test-install: ${(error && error.stack) || error}`);
  console.log('install: 0 passed, 1 failed');
  process.exitCode = 1;
});
