'use strict';
// Where the project's scripts keep what they download (runtimes, package
// managers, cross toolchains): outside the clone, so that a fresh clone (and
// CI) reuses them, and never inside node_modules or the tarball.
//
//   ATOMICS_WAITASYNC_CACHE   overrides the folder
//   default                   $XDG_CACHE_HOME/atomics-waitasync, else ~/.cache/atomics-waitasync

const fs = require('fs');
const os = require('os');
const path = require('path');

function root() {
  if (process.env.ATOMICS_WAITASYNC_CACHE) return path.resolve(process.env.ATOMICS_WAITASYNC_CACHE);
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'atomics-waitasync');
}

/** `cacheDir('runtimes', 'node14')`: that folder under the cache, created. */
function cacheDir() {
  const dir = path.join.apply(path, [root()].concat(Array.prototype.slice.call(arguments)));
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

module.exports = { cacheDir, cacheRoot: root };
