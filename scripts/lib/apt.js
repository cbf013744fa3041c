'use strict';
// apt-get (and dpkg) as root, for the scripts that install what the tests
// need (scripts/prebuild.js, scripts/test-install.js, scripts/lib/wine.js,
// scripts/lib/musl.js): directly when this is root, else through `sudo -n`;
// and one at a time across all of this project's processes, which run
// several set-ups at once (flock on a file in the project cache), with
// dpkg's own lock waited for too, against anything else on the machine.
//
//   rootCommand('apt-get', ['install', '-y', 'wine64'])
//     -> { command, args, env }: spawn `command args` with `env`

const path = require('path');
const { cacheDir } = require('./cache');

// How long a command waits for the lock: another step's install on a cold machine.
const LOCK_WAIT_S = 1800;

/**
 * The command line that runs `tool` (apt-get, apt-cache or dpkg) with
 * `args` as root, after this project's other root commands, noninteractive
 * (not root: through `sudo -n`, which fails at once where it would ask).
 */
function rootCommand(tool, args) {
  const env = Object.assign({}, process.env, { DEBIAN_FRONTEND: 'noninteractive' });
  const waitDpkg = tool === 'apt-get' ? ['-o', `DPkg::Lock::Timeout=${LOCK_WAIT_S}`] : [];
  const line = ['flock', '-w', String(LOCK_WAIT_S), path.join(cacheDir(), 'apt.lock'), tool].concat(waitDpkg, args);
  if (process.getuid && process.getuid() === 0) return { command: line[0], args: line.slice(1), env };
  return { command: 'sudo', args: ['-n', 'DEBIAN_FRONTEND=noninteractive'].concat(line), env };
}

module.exports = { rootCommand };
