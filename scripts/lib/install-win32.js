'use strict';
// The win32 group of scripts/test-install.js: the packed tarball, installed
// with this machine's npm into a fresh project (the tarball holds every
// platform's binary, and no script runs), used by the Windows build of Node
// under Wine (scripts/lib/wine.js):
//
//   setup: wine            wine64, its prefix, the persistent wineserver, the ProcessPrng shim
//   win32: install         npm install of the tarball, the compat subset copied into the
//                          installed copy, and the shim placed beside its
//                          prebuilds/win32-x64/atomics-waitasync.node (that copy only)
//   win32: <node> smoke    smoke.js on Node 20 and 22 for Windows: it must load
//                          prebuilds\win32-x64\atomics-waitasync.node from the project
//   win32: <node> compat   __test__/compat/run.js, ponyfill and polyfill
//
// Node 24 for Windows does not start under Wine 8.0 (see scripts/runtimes.js).

const fs = require('fs');
const path = require('path');
const wine = require('./wine');
const { RUNTIMES: RUNTIME_INFO } = require('../runtimes');

const RUNTIMES = ['node20-win', 'node22-win'];
const TAG = 'win32-x64';

/**
 * Adds the group's tasks to test-install.js's plan: `add` and `S` (its
 * shared results), the name of its pack task, and its helpers.
 */
module.exports = function addWin32Checks({ add, S, packed, ensureRuntime, npmInstall, copyCompat, makeProject, assertSmoke, compatResult, PACKAGE, BINARY }) {
  /**
   * assertSmoke for node.exe: the binary line is a Windows path, which must
   * name prebuilds\win32-x64\<BINARY> of the package inside the project on
   * Wine's Z: drive; then the Linux form of that path goes through assertSmoke.
   */
  const assertWindowsSmoke = (output, project) => {
    const lines = output.split('\n');
    const runtime = lines.find((l) => l.startsWith('runtime '));
    if (!runtime || !runtime.endsWith(` ${TAG}`)) throw new Error(`smoke's runtime line is not ${TAG}: ${runtime}\n${output}`);
    const line = lines.find((l) => l.startsWith('binary '));
    if (!line) throw new Error(`smoke printed no "binary" line\n${output}`);
    const loaded = line.slice('binary '.length);
    const inside = `${wine.windowsPath(fs.realpathSync(project))}\\`;
    const suffix = `\\node_modules\\${PACKAGE}\\prebuilds\\${TAG}\\${BINARY}`;
    if (!loaded.startsWith(inside) || !loaded.endsWith(suffix)) {
      throw new Error(`loaded ${loaded}; expected ${inside}…${suffix}\n${output}`);
    }
    assertSmoke(lines.map((l) => (l === line ? `binary ${wine.linuxPath(loaded)}` : l)).join('\n'), project, { tag: TAG });
    return `${runtime}; ${loaded.slice(inside.length)}`;
  };

  add({
    name: 'setup: wine',
    groups: ['win32', 'setup'],
    cpu: 0,
    timeout: 900000, // a cold machine: apt-get, the prefix, zig's first Windows build
    async run() {
      S.wine = await wine.setup();
      return S.wine.note;
    },
  });
  for (const r of RUNTIMES) ensureRuntime(r);

  add({
    name: 'win32: install',
    groups: ['win32'],
    deps: [packed, 'setup: wine'],
    async run(ctx) {
      const dir = makeProject(ctx.work, 'win32');
      await npmInstall(dir, ctx.noRustEnv);
      const installed = path.join(dir, 'node_modules', PACKAGE);
      const prebuilt = path.join(installed, 'prebuilds', TAG);
      if (!fs.existsSync(path.join(prebuilt, BINARY))) {
        throw new Error(`the tarball has no prebuilds/${TAG}/${BINARY} (${path.join(prebuilt, BINARY)} is missing after npm install)`);
      }
      const shipped = fs.readdirSync(prebuilt).filter((f) => f !== BINARY);
      if (shipped.length) throw new Error(`prebuilds/${TAG} ships more than ${BINARY}: ${shipped.join(', ')}`);
      copyCompat(installed);
      // Wine 8.0 has no ProcessPrng, which Rust's std imports: the shim, in
      // this test copy only, is found first as it sits beside the addon.
      fs.copyFileSync(S.wine.shim, path.join(prebuilt, wine.SHIM_DLL));
      S.win32Dir = dir;
      return `npm, __test__/compat copied in, ${wine.SHIM_DLL} shim beside prebuilds/${TAG}/${BINARY}`;
    },
  });

  for (const r of RUNTIMES) {
    const deps = ['win32: install', `setup: ${r}`, 'setup: wine'];
    add({
      name: `win32: ${r} smoke`,
      groups: ['win32', r, 'smoke'],
      deps,
      timeout: 300000,
      async run(ctx) {
        const res = await wine.runNode(S[r], ['smoke.js'], { cwd: S.win32Dir, env: ctx.noRustEnv, timeout: 120000 });
        if (res.status !== 0) throw new Error(`exit ${res.status}\n${res.output}`);
        return assertWindowsSmoke(res.output, S.win32Dir);
      },
    });
    for (const mode of ['ponyfill', 'polyfill']) {
      add({
        name: `win32: ${r} compat ${mode}`,
        groups: ['win32', r, 'compat'],
        deps,
        timeout: 600000,
        async run(ctx) {
          const installed = path.join(S.win32Dir, 'node_modules', PACKAGE);
          const script = wine.windowsPath(path.join(installed, '__test__', 'compat', 'run.js'));
          const res = await wine.runNode(S[r], [script, '--mode', mode], { cwd: installed, env: ctx.noRustEnv, timeout: 300000 });
          const last = compatResult(res);
          const { version } = RUNTIME_INFO[r];
          if (!res.output.trim().startsWith(`# compat: node ${version}, mode ${mode}`)) throw new Error(`not node.exe ${version}?\n${res.output}`);
          return last;
        },
      });
    }
  }
};
