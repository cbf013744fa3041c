'use strict';
// The musl C library that the musl Node runtimes of scripts/runtimes.js (PyPI
// wheels, scripts/lib/wheel.js) run on, for scripts/test-install.js:
//
//   loader    /lib/ld-musl-x86_64.so.1 for the x64 runtimes, which the kernel
//             starts them with (their PT_INTERP), so that process.execPath and
//             the children spawned with it are musl processes too: Debian's
//             `musl` package, installed with apt-get (as root) when missing
//   sysroot   for the arm64 runtime under qemu-aarch64 -L: Debian's musl:arm64
//             unpacked into the cache (scripts/lib/cache.js:
//             ~/.cache/atomics-waitasync/sysroots/aarch64-linux-musl), no root
//
// Both must be musl 1.2.4 or later. The wheels' bundled libstdc++ and libgcc_s
// were linked with packed relative relocations (DT_RELR), which musl applies
// from 1.2.4 on; on Debian 12's musl 1.2.3 node crashes before main (SIGSEGV).
// When this machine's apt offers no such musl (Debian 12), the package comes
// from Debian 13 (trixie): `apt-get download` with an apt state of its own in
// the cache, so the machine's sources stay as they are. musl has no
// dependencies, and its 1.2.5 package installs over 1.2.3 in place.

const fs = require('fs');
const os = require('os');
const path = require('path');
const { cacheDir } = require('./cache');
const { rootCommand } = require('./apt');
const { compareVersions } = require('./elf');

const MIN_VERSION = '1.2.4';
// The Debian release whose musl is new enough, used when this machine's is not.
const SUITE = 'trixie';
const ARCHES = {
  x64: { musl: 'x86_64', debian: 'amd64' },
  arm64: { musl: 'aarch64', debian: 'arm64' },
};

/** `1.2.5` from a Debian version such as `1.2.5-3.1~deb13u1` (epoch and revision dropped). */
function upstream(debianVersion) {
  return String(debianVersion).replace(/^\d+:/, '').split('-')[0];
}

function atLeast(version, min) {
  return compareVersions(String(version), min) >= 0;
}

/** The musl loader of `arch` ('x64', 'arm64') as the kernel and qemu look for it. */
function loaderName(arch) {
  return `/lib/ld-musl-${ARCHES[arch].musl}.so.1`;
}

/**
 * The version a musl loader says it is: run with no arguments it prints
 * "musl libc (x86_64)\nVersion 1.2.5\n…" and exits 1. Null when it is not there.
 */
async function loaderVersion(must, loader) {
  if (!fs.existsSync(loader)) return null;
  const out = await must(loader, [], { timeout: 60000, anyStatus: true });
  const match = /^Version (\d+\.\d+\.\d+)/m.exec(out);
  return match ? match[1] : null;
}

/** The Debian archive this machine's apt uses (a mirror stays a mirror); throws when it names none. */
function debianArchive() {
  const files = ['/etc/apt/sources.list'];
  try {
    for (const f of fs.readdirSync('/etc/apt/sources.list.d')) files.push(path.join('/etc/apt/sources.list.d', f));
  } catch (error) {
    // no such folder
  }
  for (const file of files.filter((f) => /\.(list|sources)$/.test(f))) {
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      continue;
    }
    // One-line `deb [options] URI suite …` and deb822 `URIs: URI` alike.
    const uris = [];
    for (const m of text.matchAll(/^deb\s+(?:\[[^\]]*\]\s+)?(\S+)/gm)) uris.push(m[1]);
    for (const m of text.matchAll(/^URIs:\s*(.+)$/gim)) uris.push(...m[1].trim().split(/\s+/));
    const archive = uris.find((u) => /^https?:\/\/[^ ]+\/debian\/?$/.test(u));
    if (archive) return archive.replace(/\/$/, '');
  }
  throw new Error(`no Debian archive (a URI ending in /debian) in ${files.join(', ')}: musl ${MIN_VERSION}+ cannot be fetched`);
}

/** apt-get's options for an apt state of its own, under the cache, that sees only SUITE. */
function aptOptions() {
  const dir = cacheDir('apt', SUITE);
  for (const d of ['lists/partial', 'cache/archives/partial', 'sources.list.d']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  const list = path.join(dir, 'sources.list');
  fs.writeFileSync(list, `deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${debianArchive()} ${SUITE} main\n`);
  const options = {
    'Dir::Etc::SourceList': list,
    'Dir::Etc::SourceParts': path.join(dir, 'sources.list.d'),
    'Dir::State::Lists': path.join(dir, 'lists'),
    'Dir::Cache': path.join(dir, 'cache'),
    'APT::Architectures::': Object.values(ARCHES).map((a) => a.debian),
    'Acquire::Languages': 'none',
    'Acquire::IndexTargets::deb::DEP-11::DefaultEnabled': 'false',
    // The cache belongs to this user: apt's _apt sandbox user could not write it.
    'APT::Sandbox::User': os.userInfo().username,
  };
  const args = [];
  for (const [key, value] of Object.entries(options)) {
    for (const v of [].concat(value)) args.push('-o', `${key}=${v}`);
  }
  return args;
}

// The apt runs on the private state one at a time (they share its locks),
// and its lists are updated once per process.
let aptQueue = Promise.resolve();
let suiteUpdated = false;

/**
 * Debian SUITE's musl package for `arch` as a .deb in the cache, downloaded
 * unless a new enough one is there: { deb, version }.
 */
function fetchDeb(must, arch) {
  const next = aptQueue.then(() => fetchDebNow(must, arch));
  aptQueue = next.catch(() => {});
  return next;
}

async function fetchDebNow(must, arch) {
  const { debian } = ARCHES[arch];
  const dir = cacheDir('musl', 'debs');
  const cached = [];
  for (const f of fs.readdirSync(dir).filter((name) => name.startsWith('musl_') && name.endsWith(`_${debian}.deb`))) {
    const deb = path.join(dir, f);
    const version = (await must('dpkg-deb', ['--field', deb, 'Version'], { timeout: 60000 })).trim();
    if (atLeast(upstream(version), MIN_VERSION)) cached.push({ deb, version });
  }
  if (cached.length) return cached[0];
  if (!suiteUpdated) {
    await must('apt-get', aptOptions().concat(['update']), { timeout: 600000 });
    suiteUpdated = true;
  }
  await must('apt-get', aptOptions().concat(['download', `musl:${debian}`]), { cwd: dir, timeout: 600000 });
  const got = fs.readdirSync(dir).filter((name) => name.startsWith('musl_') && name.endsWith(`_${debian}.deb`));
  if (!got.length) throw new Error(`apt-get download musl:${debian} left no .deb in ${dir}`);
  const deb = path.join(dir, got[0]);
  const version = (await must('dpkg-deb', ['--field', deb, 'Version'], { timeout: 60000 })).trim();
  if (!atLeast(upstream(version), MIN_VERSION)) throw new Error(`${SUITE}'s musl is ${version}, older than ${MIN_VERSION}`);
  return { deb, version };
}

/** The musl version this machine's apt would install (`1.2.3-1`), or null. */
async function aptCandidate(must) {
  const out = await must('apt-cache', ['policy', 'musl'], { timeout: 60000, anyStatus: true });
  const match = /Candidate:\s*(\S+)/.exec(out);
  return match && match[1] !== '(none)' ? match[1] : null;
}

/**
 * Makes /lib/ld-musl-<arch>.so.1 a musl loader of MIN_VERSION or later,
 * installing Debian's musl package when it is missing or older: from this
 * machine's apt when it has one new enough, else SUITE's .deb.
 * `must(command, args, options)` runs a command and resolves with its output
 * (with options.anyStatus, whatever its exit status). Returns { version, note }.
 */
async function ensureLoader(must, arch = process.arch) {
  const loader = loaderName(arch);
  const before = await loaderVersion(must, loader);
  if (before && atLeast(before, MIN_VERSION)) return { loader, version: before, note: `musl ${before} at ${loader}, installed already` };
  // Never remove a package (musl-dev, pinned to the old musl) to make room.
  const apt = (args) => {
    const c = rootCommand('apt-get', ['-y', '--no-install-recommends', '--no-remove'].concat(args));
    return must(c.command, c.args, { timeout: 1800000, env: c.env });
  };
  let from;
  const candidate = await aptCandidate(must);
  if (candidate && atLeast(upstream(candidate), MIN_VERSION)) {
    await apt(['install', 'musl']);
    from = `Debian's musl ${candidate} (this machine's apt sources)`;
  } else {
    const { deb, version } = await fetchDeb(must, arch);
    await apt(['install', deb]);
    from = `Debian ${SUITE}'s musl ${version} (apt-get download; this machine's apt offers ${candidate || 'none'})`;
  }
  const after = await loaderVersion(must, loader);
  if (!after || !atLeast(after, MIN_VERSION)) {
    throw new Error(`${loader} is musl ${after || 'missing'} after installing ${from}; need ${MIN_VERSION} or later`);
  }
  return { loader, version: after, note: `musl ${after} at ${loader}: installed ${from}${before ? `, was ${before}` : ''}` };
}

/**
 * A sysroot for `qemu-<arch> -L` holding musl's loader of `arch` (Debian
 * SUITE's musl package unpacked, with lib -> usr/lib as on the merged-/usr
 * systems the package is built for), made once in the cache. Returns
 * { dir, version, note }.
 */
async function ensureSysroot(must, arch) {
  const dir = path.join(cacheDir('sysroots'), `${ARCHES[arch].musl}-linux-musl`);
  const marker = path.join(dir, '.debian-musl-version'); // written last: a complete sysroot
  const loader = path.join(dir, loaderName(arch));
  if (fs.existsSync(marker) && fs.existsSync(loader)) {
    const version = fs.readFileSync(marker, 'utf8').trim();
    if (atLeast(upstream(version), MIN_VERSION)) return { dir, version: upstream(version), note: `musl ${version} in ${dir}, cached` };
  }
  const { deb, version } = await fetchDeb(must, arch);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  await must('dpkg-deb', ['--extract', deb, dir], { timeout: 120000 });
  if (!fs.existsSync(path.join(dir, 'lib'))) fs.symlinkSync('usr/lib', path.join(dir, 'lib'));
  if (!fs.existsSync(loader)) throw new Error(`${path.basename(deb)} holds no ${loaderName(arch)}`);
  fs.writeFileSync(marker, `${version}\n`);
  return { dir, version: upstream(version), note: `musl ${version} (Debian ${SUITE}) unpacked into ${dir}` };
}

module.exports = { MIN_VERSION, ARCHES, loaderName, loaderVersion, ensureLoader, ensureSysroot };
