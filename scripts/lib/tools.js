'use strict';
// Command-line tools the tests install from the npm registry into the
// project's cache (scripts/lib/cache.js: ~/.cache/atomics-waitasync/tools),
// pinned, and reuse while the pinned version is there: the package managers
// of scripts/test-install.js and tsx for
// __test__/polyfill/forced-install-node-loader.spec.js.

const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { cacheDir } = require('./cache');

const TOOLS = {
  // pnpm 12 is a native binary (@pnpm/exe.linux-x64, an optional dependency); bin/pnpm.mjs runs it.
  pnpm: { package: 'pnpm', version: '12.21.0', bin: 'bin/pnpm.mjs' },
  yarn: { package: '@yarnpkg/cli-dist', version: '4.18.1', bin: 'bin/yarn.js' },
  tsx: { package: 'tsx', version: '4.23.15', bin: 'dist/cli.mjs' },
};

/** Where `name` lives in the cache: `{ tool, prefix, packageDir, bin }`. */
function toolPaths(name) {
  const tool = TOOLS[name];
  if (!tool) throw new Error(`unknown tool "${name}"; known: ${Object.keys(TOOLS).join(', ')}`);
  const prefix = cacheDir('tools', `${name}-${tool.version}`);
  const packageDir = path.join(prefix, 'node_modules', tool.package);
  return { tool, prefix, packageDir, bin: path.join(packageDir, tool.bin) };
}

/** Whether the cache holds the pinned version of `name`. */
function isInstalled(name) {
  const { tool, packageDir, bin } = toolPaths(name);
  try {
    return JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')).version === tool.version &&
      fs.existsSync(bin);
  } catch (error) {
    return false;
  }
}

/** The npm command line that installs `name` into its cache folder. */
function installArgs(name) {
  const { tool, prefix } = toolPaths(name);
  fs.writeFileSync(path.join(prefix, 'package.json'), '{"private":true}\n');
  return ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund',
    '--ignore-scripts', '--loglevel=error', `${tool.package}@${tool.version}`];
}

/** Installs `name` unless cached (synchronously); returns `toolPaths(name)`. */
function ensureTool(name, env = process.env) {
  if (!isInstalled(name)) {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const run = spawnSync(npm, installArgs(name), { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] });
    if (!isInstalled(name)) {
      throw new Error(`npm ${installArgs(name).join(' ')} failed (exit ${run.status}):\n${run.stderr}${run.stdout}`);
    }
  }
  return toolPaths(name);
}

module.exports = { TOOLS, toolPaths, isInstalled, installArgs, ensureTool };
