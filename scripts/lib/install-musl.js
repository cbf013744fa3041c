'use strict';
// The `musl` group of scripts/test-install.js: the packed package on musl Node,
// as on Alpine, here on a glibc machine.
//
//   setup       musl 1.2.4+ at /lib/ld-musl-x86_64.so.1, and an aarch64 musl sysroot
//               for qemu-aarch64 -L (scripts/lib/musl.js); the musl Node runtimes of
//               scripts/runtimes.js (PyPI wheels: every runtime there with libc 'musl')
//   is musl     each runtime started as a user would: /proc/self/maps holds musl's
//               loader and no glibc, process.report has no glibcVersionRuntime, and
//               a child spawned with process.execPath is the same (x64)
//   install     a fresh project installed with this machine's npm from the tarball,
//               __test__/compat copied into the installed copy
//   smoke       __test__/install/smoke.js loads prebuilds/linux-<arch>-musl
//   compat      __test__/compat/run.js --mode ponyfill and --mode polyfill
//
// The x64 runtimes run natively: the kernel starts them with musl's loader, so
// the compat cases' children (`process.execPath file.js`) are musl processes
// too. The arm64 runtime runs under qemu-user with the sysroot, and in its copy
// of the package the compat children go through qemu as well.
//
// Its export, addMuslTasks(kit), is called from plan() with what the other groups use.

const fs = require('fs');
const path = require('path');
const runtimes = require('../runtimes');
const musl = require('./musl');


// Written next to the projects and run with each musl Node: what tells a user
// which C library a process runs on. `--child` adds the same for a child
// spawned with process.execPath.
const PROBE = `'use strict';
const fs = require('fs');
function probe() {
  const files = new Set();
  for (const line of fs.readFileSync('/proc/self/maps', 'utf8').split('\\n')) {
    const file = line.split(/\\s+/)[5];
    if (file && file[0] === '/') files.add(file);
  }
  let report = process.report.getReport();
  if (typeof report === 'string') report = JSON.parse(report);
  return {
    version: process.version,
    arch: process.arch,
    execPath: process.execPath,
    glibcVersionRuntime: report.header.glibcVersionRuntime || null,
    libc: Array.from(files).filter((f) => /(^|\\/)(ld-musl-[^/]*|libc\\.musl-[^/]*|[^/]*-linux-musl\\/libc\\.so|libc\\.so\\.6|ld-linux[^/]*)$/.test(f)),
  };
}
const result = probe();
if (process.argv.includes('--child')) {
  const out = require('child_process').execFileSync(process.execPath, [__filename], { encoding: 'utf8' });
  result.child = JSON.parse(out);
}
console.log(JSON.stringify(result));
`;
const MUSL_FILE = /(^|\/)(ld-musl-[^/]*|libc\.musl-[^/]*|[^/]*-linux-musl\/libc\.so)$/;
const GLIBC_FILE = /(^|\/)(libc\.so\.6|ld-linux[^/]*)$/;

/** Problems with one probe result of runtime `name`, [] when it is a musl process of that runtime. */
function probeProblems(result, name, execPath) {
  const runtime = runtimes.RUNTIMES[name];
  const problems = [];
  if (result.version !== `v${runtime.version}`) problems.push(`version ${result.version}, expected v${runtime.version}`);
  if (result.arch !== (runtime.arch || 'x64')) problems.push(`process.arch ${result.arch}`);
  if (fs.realpathSync(result.execPath) !== fs.realpathSync(execPath)) problems.push(`process.execPath ${result.execPath}, expected ${execPath}`);
  if (result.glibcVersionRuntime) problems.push(`process.report names glibc ${result.glibcVersionRuntime}`);
  if (!result.libc.some((f) => MUSL_FILE.test(f))) problems.push(`no musl loader in /proc/self/maps (libc files: ${result.libc.join(', ') || 'none'})`);
  const glibc = result.libc.filter((f) => GLIBC_FILE.test(f));
  if (glibc.length) problems.push(`glibc mapped: ${glibc.join(', ')}`);
  return problems;
}

function addMuslTasks({ add, S, packed, ensureRuntime, npmInstall, copyCompat, makeProject, assertSmoke, compatResult, spawnCompatChildrenThrough, exec, cleanEnv, which, QEMU, PACKAGE, BINARY }) {
  const names = Object.keys(runtimes.RUNTIMES).filter((n) => runtimes.RUNTIMES[n].libc === 'musl');
  const x64 = names.filter((n) => !runtimes.RUNTIMES[n].arch);
  const arm64 = names.filter((n) => runtimes.RUNTIMES[n].arch === 'arm64');

  /** musl.js's command runner over test-install's exec. */
  const run = async (command, args, options = {}) => {
    const r = await exec(command, args, Object.assign({ env: cleanEnv() }, options));
    if (r.status !== 0 && !options.anyStatus) {
      throw new Error(`${[command].concat(args).join(' ')} exited ${r.signal || r.status}\n${r.output}`);
    }
    return r.output;
  };

  /** Checks `<node> musl-probe.js` (through `prefix`, e.g. qemu); returns its note. */
  async function probe(ctx, name, prefix, args) {
    const file = path.join(ctx.work, 'musl-probe.js');
    if (!fs.existsSync(file)) fs.writeFileSync(file, PROBE);
    const command = prefix.length ? prefix[0] : S[name];
    const argv = prefix.slice(1).concat(prefix.length ? [S[name]] : [], [file], args);
    const res = await exec(command, argv, { cwd: ctx.work, env: ctx.noRustEnv, timeout: 120000 });
    if (res.status !== 0) throw new Error(`exit ${res.signal || res.status}\n${res.output}`);
    const result = JSON.parse(res.output.trim().split('\n').slice(-1)[0]);
    const problems = probeProblems(result, name, S[name]);
    if (args.includes('--child')) {
      if (!result.child) problems.push('the child spawned with process.execPath printed nothing');
      else problems.push(...probeProblems(result.child, name, S[name]).map((p) => `child: ${p}`));
    }
    if (problems.length) throw new Error(`${problems.join('\n')}\n${res.output}`);
    const loader = result.libc.find((f) => MUSL_FILE.test(f));
    return `${result.version} ${result.arch}, ${loader} mapped, no glibc, no glibcVersionRuntime${result.child ? '; its execPath child the same' : ''}`;
  }

  /** Runs compat/run.js from the installed copy in `dir`; returns its closing line. */
  async function compat(ctx, dir, mode, command, prefix, extraEnv, timeout) {
    const installed = path.join(dir, 'node_modules', PACKAGE);
    const env = Object.assign({}, ctx.noRustEnv, extraEnv);
    return compatResult(await exec(command, prefix.concat([path.join(installed, '__test__', 'compat', 'run.js'), '--mode', mode]),
      { cwd: installed, env, timeout }));
  }

  /** Throws unless the installed copy in `dir` ships prebuilds/<tag>. */
  function assertShipped(dir, tag) {
    const prebuilds = path.join(dir, 'node_modules', PACKAGE, 'prebuilds');
    if (!fs.existsSync(path.join(prebuilds, tag, BINARY))) {
      const folders = fs.existsSync(prebuilds) ? fs.readdirSync(prebuilds).join(', ') : 'none';
      throw new Error(`the tarball ships no prebuilds/${tag}/${BINARY} (prebuilds/: ${folders})`);
    }
  }

  // --- setup ----------------------------------------------------------------
  add({
    name: 'setup: musl loader',
    groups: ['musl', 'setup'],
    cpu: 0,
    timeout: 900000,
    async run() {
      return (await musl.ensureLoader(run, 'x64')).note;
    },
  });
  if (arm64.length) {
    add({
      name: 'setup: musl arm64 sysroot',
      groups: ['musl', 'arm64', 'setup'],
      cpu: 0,
      timeout: 900000,
      async run() {
        const sysroot = await musl.ensureSysroot(run, 'arm64');
        S.muslSysroot = sysroot.dir;
        return sysroot.note;
      },
    });
  }
  for (const r of names) ensureRuntime(r);

  // --- x64: natively on the musl loader ---------------------------------------
  add({
    name: 'musl: install',
    groups: ['musl'],
    deps: [packed],
    async run(ctx) {
      const dir = makeProject(ctx.work, 'musl');
      await npmInstall(dir, ctx.noRustEnv);
      copyCompat(path.join(dir, 'node_modules', PACKAGE));
      S.muslDir = dir;
      return `npm ${process.version} (this machine's), __test__/compat copied into the installed copy`;
    },
  });
  for (const r of x64) {
    add({
      name: `musl: ${r} is musl`,
      groups: ['musl', r],
      deps: ['setup: musl loader', `setup: ${r}`],
      run: (ctx) => probe(ctx, r, [], ['--child']),
    });
    add({
      name: `musl: ${r} smoke`,
      groups: ['musl', r, 'smoke'],
      deps: ['musl: install', `musl: ${r} is musl`],
      async run(ctx) {
        assertShipped(S.muslDir, 'linux-x64-musl');
        const res = await exec(S[r], ['smoke.js'], { cwd: S.muslDir, env: ctx.noRustEnv, timeout: 120000 });
        if (res.status !== 0) throw new Error(`exit ${res.signal || res.status}\n${res.output}`);
        return assertSmoke(res.output, S.muslDir, { tag: 'linux-x64-musl' });
      },
    });
    for (const mode of ['ponyfill', 'polyfill']) {
      add({
        name: `musl: ${r} compat ${mode}`,
        groups: ['musl', r, 'compat'],
        deps: ['musl: install', `musl: ${r} is musl`],
        async run(ctx) {
          assertShipped(S.muslDir, 'linux-x64-musl');
          return compat(ctx, S.muslDir, mode, S[r], [], {}, 300000);
        },
      });
    }
  }

  // --- arm64: under qemu-user with the musl sysroot ------------------------------
  if (!arm64.length) return;
  const qemuArgs = () => ['-L', S.muslSysroot];
  add({
    name: 'musl: arm64 install',
    groups: ['musl', 'arm64'],
    long: true, // first: the qemu runs wait on it
    deps: [packed, 'setup: musl arm64 sysroot'],
    async run(ctx) {
      const dir = makeProject(ctx.work, 'musl-arm64');
      await npmInstall(dir, ctx.noRustEnv);
      const installed = path.join(dir, 'node_modules', PACKAGE);
      copyCompat(installed);
      spawnCompatChildrenThrough(installed, which(QEMU.binary, process.env.PATH || '') || QEMU.binary, qemuArgs());
      S.muslArm64Dir = dir;
      return `npm, compat children spawned through ${QEMU.binary} -L ${S.muslSysroot}`;
    },
  });
  for (const r of arm64) {
    const deps = ['setup: qemu-user', 'setup: musl arm64 sysroot', `setup: ${r}`];
    add({
      name: `musl: ${r} is musl`,
      groups: ['musl', 'arm64', r],
      long: true,
      deps,
      timeout: 200000,
      run: (ctx) => probe(ctx, r, [QEMU.binary].concat(qemuArgs()), []),
    });
    add({
      name: `musl: ${r} smoke`,
      groups: ['musl', 'arm64', r, 'smoke'],
      long: true,
      deps: ['musl: arm64 install', `musl: ${r} is musl`],
      timeout: 600000,
      async run(ctx) {
        assertShipped(S.muslArm64Dir, 'linux-arm64-musl');
        const env = Object.assign({}, ctx.noRustEnv, { SMOKE_TIMEOUT_MS: String(300000) });
        const res = await exec(QEMU.binary, qemuArgs().concat([S[r], 'smoke.js']), { cwd: S.muslArm64Dir, env, timeout: 600000 });
        if (res.status !== 0) throw new Error(`exit ${res.signal || res.status}\n${res.output}`);
        if (!/linux-arm64/.test(res.output)) throw new Error(`not an arm64 process?\n${res.output}`);
        return assertSmoke(res.output, S.muslArm64Dir, { tag: 'linux-arm64-musl' });
      },
    });
    for (const mode of ['ponyfill', 'polyfill']) {
      add({
        name: `musl: ${r} compat ${mode}`,
        groups: ['musl', 'arm64', r, 'compat'],
        long: true,
        deps: ['musl: arm64 install', `musl: ${r} is musl`],
        timeout: 900000,
        async run(ctx) {
          assertShipped(S.muslArm64Dir, 'linux-arm64-musl');
          return compat(ctx, S.muslArm64Dir, mode, QEMU.binary, qemuArgs().concat([S[r]]),
            { ATOMICS_WAITASYNC_COMPAT_HANG_MS: String(300000) }, 900000);
        },
      });
    }
  }
}

module.exports = addMuslTasks;
