#!/usr/bin/env node
'use strict';
// Checks the prebuilt binaries before they ship, without loading them (most
// are for systems this machine cannot run). For every
// <platform>-<arch>[-<libc>]/atomics-waitasync.node under a folder:
//   - its file format is the platform's: ELF for linux, 64-bit Mach-O for
//     darwin, a PE32+ DLL for win32; and its CPU is the folder's arch;
//   - it exports napi_register_module_v1, the entry point Node and Bun look
//     up, and nothing outside ALLOWED_EXPORTS (a linker that exports all of
//     Rust's std is a build setting gone wrong, and lets two copies bind each
//     other's symbols);
//   - it links only libraries every system of its platform has (the C
//     library, libSystem, Windows' own DLLs), and in particular no node.exe
//     or libnode: N-API symbols are bound to the host's at load time (by
//     the dynamic loader on Linux, napi's dyn-symbols elsewhere), so no
//     import names the host; and (ELF) each N-API function it imports is
//     one Node 12.22 exports (scripts/lib/napi-functions.js): the loader
//     refuses a binary that imports one its host lacks;
//   - it asks for no newer system than the package promises: glibc 2.17
//     (GNU version needs) for -gnu, no glibc at all for -musl, macOS 11.0 on
//     arm64 and 10.15 on x64 (LC_BUILD_VERSION / LC_VERSION_MIN_MACOSX),
//     Windows 10 (the PE header's OS and subsystem versions);
//   - ELF: it is a shared object, with no program interpreter and a
//     non-executable stack (glibc 2.41 refuses to dlopen one that asks for
//     an executable stack);
//   - Mach-O: its install name is @rpath/..., @loader_path/... or bare (not the
//     build machine's path), and its code signature's page hashes match the
//     file: macOS on arm64 kills a process that maps unsigned or
//     mis-signed code, so darwin-arm64 must be signed (ad hoc), and darwin-x64
//     is verified when signed.
// Prints one line per binary and a last line `check-prebuilds: N passed, N failed`;
// exits 1 when any check fails or when there is no binary at all.
//
// `--self-test` proves that each check can fail: for every binary present it
// writes copies with one defect each (wrong CPU, a newer minimum OS, a flipped
// byte in a signed page, the entry point renamed, an import that is no system
// library, ...; scripts/lib/mutations.js) and expects the check to reject each
// for that reason, and to pass the unchanged binary.
//
//   node scripts/check-prebuilds.js [dir]               dir defaults to prebuilds/ in the package
//   node scripts/check-prebuilds.js --self-test [dir]
//   require('./scripts/check-prebuilds').checkPrebuilds(dir) -> [{ name, file, ok, problems, facts, ... }]
//
// Pure JavaScript (scripts/lib/elf.js, macho.js, pe.js); parses on Node 12
// (no `?.`, `??` or `node:` specifiers).

const fs = require('fs');
const os = require('os');
const path = require('path');
const elf = require('./lib/elf');
const macho = require('./lib/macho');
const pe = require('./lib/pe');

const FILE = 'atomics-waitasync.node';
const ENTRY = 'napi_register_module_v1';
// How copies of the package find each other's waiter core (src/napi/shared.rs).
const SHARED_CORE = 'atomics_waitasync_core_v1';
// Everything a binary may export, by its C name (Mach-O adds a leading `_`).
const ALLOWED_EXPORTS = [ENTRY, SHARED_CORE];
const NAPI_FUNCTIONS = require('./lib/napi-functions');
// What the toolchain exports whatever the crate says, by format, as the file
// spells it: zig's Mach-O linker exports its header and __dso_handle from
// every dylib, and compiler-rt's OS-version checks come with them; zig's
// mingw-w64 CRT and LLVM's libunwind mark some of their functions dllexport. None is
// Rust code (rustc's export lists, which zig's linkers ignore, are made up by
// -Zdefault-visibility=hidden in scripts/prebuild.js); anything else fails.
const TOOLCHAIN_EXPORTS = {
  macho: ['__mh_dylib_header', '___dso_handle', '___isOSVersionAtLeast', '___isPlatformVersionAtLeast'],
  pe: ['_CRT_INIT', '__mingw_module_is_dll', 'atexit', 'unw_getcontext', '__unw_getcontext', '__libunwind_Registers_arm64_za_disable'],
};
const MAX_GLIBC = '2.17';
// What the package promises (lib/platform.js SHIPPED): macOS 10.15 on Intel, and
// 11.0 on Apple silicon, the first macOS there is for it.
const MAX_MACOS = { x64: '10.15', arm64: '11.0' };
// The PE optional header's Major(Operating|Subsystem)Version: Windows 10 is 10.0.
const MAX_WINDOWS = 10;

// process.arch -> what each parser calls that CPU.
const ARCH_MACHINE = {
  elf: {
    x64: 'x86-64',
    arm64: 'aarch64',
    ia32: 'x86',
    arm: 'arm',
    riscv64: 'riscv',
    s390x: 's390',
    ppc64: 'ppc64',
    loong64: 'loongarch',
  },
  // x86_64h (Haswell and later only) and arm64e (pointer authentication) do not load in Node's x86_64 / arm64 process.
  macho: { x64: 'x86_64', arm64: 'arm64' },
  pe: { x64: 'x64', arm64: 'arm64', ia32: 'ia32' },
};
const ELF_PLATFORMS = ['linux', 'freebsd', 'openbsd', 'netbsd', 'android', 'sunos'];

// The libraries each platform's binaries may link. Anything else is a
// library some user lacks, and the addon fails to load there.
const SYSTEM_LIBRARIES = {
  // glibc and the parts older glibc ships as separate files (up to 2.33),
  // its dynamic loader, and libgcc_s (Rust's unwinder on -gnu; every glibc
  // system has it, Node itself links it).
  'linux-gnu': ['libc.so.6', 'libm.so.6', 'libpthread.so.0', 'libdl.so.2', 'librt.so.1', 'libgcc_s.so.1', /^ld-linux-[\w-]+\.so\.\d+$/],
  // musl is one file under several names: its loader maps a "libc.so" need
  // onto itself (ldso/dynlink.c), Alpine names it libc.musl-<arch>.so.1 and
  // /lib/ld-musl-<arch>.so.1. libgcc_s: Rust's unwinder, in Alpine's libgcc,
  // which Alpine's nodejs package depends on.
  'linux-musl': ['libc.so', /^libc\.musl-[\w-]+\.so\.1$/, /^ld-musl-[\w-]+\.so\.1$/, 'libgcc_s.so.1'],
  // libSystem is the C library; libiconv (and libcharset, linked with it)
  // come in through the libc crate's `link(name = "iconv")` on Apple. All
  // ship with macOS (in the dyld shared cache since 11), and so do the
  // public frameworks.
  darwin: [
    '/usr/lib/libSystem.B.dylib',
    '/usr/lib/libiconv.2.dylib',
    '/usr/lib/libcharset.1.dylib',
    '/usr/lib/libc++.1.dylib',
    '/usr/lib/libc++abi.dylib',
    '/usr/lib/libobjc.A.dylib',
    '/usr/lib/libresolv.9.dylib',
    /^\/System\/Library\/Frameworks\/\w+\.framework\/(Versions\/\w+\/)?\w+$/,
  ],
  // What Rust's std (rust-lang/rust library/std/src/sys/pal/windows/c/windows_sys.rs)
  // and a MinGW/UCRT runtime import, all part of Windows 10: the Win32 DLLs, the
  // API-set names (api-ms-win-*, resolved by the loader to system DLLs),
  // and both C runtimes (msvcrt.dll, ucrtbase.dll). Compared ignoring case,
  // as the Windows loader does. Not node.exe / libnode.dll (see the header),
  // nor libgcc_s_seh-1.dll / libwinpthread-1.dll / vcruntime140.dll, which
  // come with a compiler, not with Windows.
  win32: [
    'kernel32.dll',
    'ntdll.dll',
    'advapi32.dll',
    'bcrypt.dll',
    'bcryptprimitives.dll',
    'userenv.dll',
    'ws2_32.dll',
    'msvcrt.dll',
    'ucrtbase.dll',
    /^api-ms-win-crt-[\w-]+\.dll$/,
    /^api-ms-win-core-[\w-]+\.dll$/,
  ],
};

/** 'linux-arm64-gnu' -> { platform: 'linux', arch: 'arm64', libc: 'gnu' }; null if it is no such name. */
function parseName(name) {
  const m = /^([a-z0-9]+)-([a-z0-9]+)(?:-([a-z0-9]+))?$/.exec(name);
  return m ? { platform: m[1], arch: m[2], libc: m[3] || null } : null;
}

/** 'elf' | 'macho' | 'pe' from the first bytes, or null. */
function sniffFormat(buf) {
  if (buf.length < 4) return null;
  if (buf.readUInt32BE(0) === 0x7f454c46) return 'elf';
  // Mach-O in either byte order (macho.js names the ones it cannot read: 32-bit, big-endian, universal).
  const le = buf.readUInt32LE(0);
  const be = buf.readUInt32BE(0);
  if (le === 0xfeedfacf || le === 0xfeedface || be === 0xfeedfacf || be === 0xfeedface || be === 0xcafebabe || be === 0xcafebabf) {
    return 'macho';
  }
  if (buf[0] === 0x4d && buf[1] === 0x5a) return 'pe';
  return null;
}

const FORMAT_NAMES = { elf: 'ELF', macho: 'Mach-O', pe: 'PE' };
const A_FILE = { elf: 'an ELF file', macho: 'a Mach-O file', pe: 'a PE file' };

function formatFor(platform) {
  if (platform === 'darwin') return 'macho';
  if (platform === 'win32') return 'pe';
  if (ELF_PLATFORMS.indexOf(platform) !== -1) return 'elf';
  return null;
}

function matches(rules, name, ignoreCase) {
  const n = ignoreCase ? name.toLowerCase() : name;
  for (let i = 0; i < rules.length; i++) {
    if (typeof rules[i] === 'string' ? rules[i] === n : rules[i].test(n)) return true;
  }
  return false;
}

/** A list for a message: the first `max` items (long Rust symbols cut short), then how many more. */
function some(list, max) {
  const shown = list
    .slice(0, max)
    .map(function (item) {
      return item.length > 60 ? item.slice(0, 57) + '...' : item;
    })
    .join(', ');
  return list.length > max ? shown + ', ... (' + (list.length - max) + ' more)' : shown;
}

/**
 * The export checks every format shares: `required` must all be there, and
 * nothing outside ALLOWED_EXPORTS may be. `names` are as the file spells
 * them; `cName` turns one into its C name (Mach-O drops a leading `_`), or
 * null when it has none.
 */
function checkExports(result, names, required, cName, toolchain) {
  const cNames = names.map(cName || String);
  const made = toolchain || [];
  for (let i = 0; i < required.length; i++) {
    if (cNames.indexOf(required[i]) === -1) result.problems.push('does not export ' + required[i]);
  }
  const extra = [];
  for (let i = 0; i < names.length; i++) {
    if (ALLOWED_EXPORTS.indexOf(cNames[i]) === -1 && made.indexOf(names[i]) === -1) extra.push(names[i]);
  }
  if (extra.length) {
    result.problems.push(
      'exports ' + extra.length + ' symbol' + (extra.length === 1 ? '' : 's') + ' besides ' + ALLOWED_EXPORTS.join(' and ') + ': ' +
        // Shortest first: `rust_eh_personality` says more than the fourth hashbrown generic.
        some(
          extra.slice().sort(function (a, b) {
            return a.length - b.length || (a < b ? -1 : 1);
          }),
          4
        )
    );
  }
  result.exports = names;
  const own = names.filter(function (name) {
    return made.indexOf(name) === -1;
  });
  if (own.length && !extra.length) {
    result.facts.push('exports ' + own.join(' + ') + (own.length < names.length ? ' (+ ' + (names.length - own.length) + ' of the toolchain)' : ''));
  }
}

/**
 * `libraries`: [{ name, kind }] from a parser; a kind other than the plain
 * one ('weak', 'delay', ...) is shown next to the name.
 */
function checkLibraries(result, libraries, rules, ignoreCase, label) {
  const shown = libraries.map(function (l) {
    return l.kind && l.kind !== 'load' && l.kind !== 'import' ? l.name + ' (' + l.kind + ')' : l.name;
  });
  result.libraries = shown;
  const bad = [];
  for (let i = 0; i < libraries.length; i++) if (!matches(rules, libraries[i].name, ignoreCase)) bad.push(shown[i]);
  for (let i = 0; i < bad.length; i++) result.problems.push('links ' + bad[i] + ', not a system library of ' + label);
  if (!bad.length) result.facts.push(shown.length ? 'links ' + shown.join(' ') : 'links no library');
}

function checkMachine(result, machine, format, arch) {
  result.machine = machine;
  const wanted = ARCH_MACHINE[format][arch];
  if (!wanted) result.problems.push('unknown arch "' + arch + '" in the folder name for a ' + FORMAT_NAMES[format] + ' file');
  else if (machine !== wanted) result.problems.push('CPU is ' + machine + ', the folder says ' + arch + ' (' + wanted + ')');
}

function checkElf(buf, file, target, options, result) {
  const info = elf.parseElf(buf, file);
  const maxGlibc = (options && options.maxGlibc) || MAX_GLIBC;
  result.maxGlibc = info.maxGlibc;
  result.glibc = info.glibc;
  checkMachine(result, info.machine, 'elf', target.arch);
  result.facts.push('ELF ' + info.machine);
  if (info.type !== 'DYN') result.problems.push('an ELF of type ' + info.type + ', not a shared object (DYN)');
  if (info.interp) result.problems.push('names a program interpreter (PT_INTERP ' + info.interp + '): an executable, not a library');
  if (info.executableStack !== false) {
    result.problems.push(
      (info.executableStack ? 'asks for an executable stack (PT_GNU_STACK has PF_X)' : 'has no PT_GNU_STACK, so the loader assumes an executable stack') +
        ': glibc 2.41 and later refuse to dlopen it, and musl never gives one'
    );
  }
  if (target.libc === 'gnu') {
    if (info.maxGlibc && elf.compareVersions(info.maxGlibc, maxGlibc) > 0) {
      const newer = info.glibc.filter(function (v) {
        return elf.compareVersions(v, maxGlibc) > 0;
      });
      result.problems.push('needs GLIBC_' + newer.join(', GLIBC_') + ' (at most ' + maxGlibc + ' allowed)');
    } else {
      result.facts.push('GLIBC ' + (info.maxGlibc || 'none') + ' <= ' + maxGlibc);
    }
  } else if (target.libc === 'musl') {
    if (info.glibc.length) result.problems.push('a musl binary that needs glibc (GLIBC_' + info.maxGlibc + ')');
    else result.facts.push('no GLIBC versions');
  }
  const rules = target.platform === 'linux' ? SYSTEM_LIBRARIES['linux-' + target.libc] : null;
  if (rules) checkLibraries(result, info.libraries, rules, false, target.platform + '-' + target.libc);
  else result.problems.push('no list of system libraries for ' + target.platform + (target.libc ? '-' + target.libc : '') + ' (linux-gnu and linux-musl have one)');
  // On Linux the copies meet through SHARED_CORE: a binary without it keeps a registry of its own.
  checkExports(result, info.exports, target.platform === 'linux' ? [ENTRY, SHARED_CORE] : [ENTRY]);
  const napi = info.imports.filter(function (name) {
    return /^(napi_|node_api_)/.test(name);
  });
  const missing = napi.filter(function (name) {
    return NAPI_FUNCTIONS.indexOf(name) === -1;
  });
  if (missing.length) result.problems.push('imports N-API ' + missing.join(', ') + ', which Node 12.22 does not export: it would not load there');
  else if (napi.length) result.facts.push(napi.length + ' N-API imports, all in Node 12.22');
}

function checkMachO(buf, file, target, options, result) {
  const info = macho.parseMachO(buf, file);
  checkMachine(result, info.machine, 'macho', target.arch);
  result.facts.push('Mach-O ' + info.machine + ' ' + String(info.fileType).toLowerCase());
  if (info.fileType !== 'DYLIB' && info.fileType !== 'BUNDLE') {
    result.problems.push('a Mach-O of type ' + info.fileType + ', not a dylib or bundle');
  }

  const maxMacos = (options && options.maxMacos) || MAX_MACOS[target.arch];
  if (!info.minOs) {
    result.problems.push('names no minimum macOS (no LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX)');
  }
  for (let i = 0; i < info.minOsCommands.length; i++) {
    const m = info.minOsCommands[i];
    if (m.platform !== 'macos') result.problems.push('built for ' + m.platform + ' (' + m.command + '), not macOS');
    else if (maxMacos && elf.compareVersions(m.version, maxMacos) > 0) {
      result.problems.push('minimum macOS ' + m.version + ' (' + m.command + '), at most ' + maxMacos + ' allowed');
    } else if (maxMacos) result.facts.push('macOS ' + m.version + ' <= ' + maxMacos);
  }

  // An absolute install name is the build machine's path: it leaks, and a
  // binary linked against this one would look for it there.
  if (info.installName) {
    const id = info.installName.name;
    if (/^(@rpath|@loader_path)\//.test(id) || id.indexOf('/') === -1) result.facts.push('id ' + id);
    else result.problems.push('install name ' + id + ' (LC_ID_DYLIB) is not @rpath/..., @loader_path/... or a bare name');
  } else if (info.fileType === 'DYLIB') {
    result.problems.push('a dylib without an install name (LC_ID_DYLIB)');
  }

  checkLibraries(result, info.libraries, SYSTEM_LIBRARIES.darwin, false, 'macOS');

  // dyld finds symbols through the export trie (dlsym, Node's lookup of the
  // entry point); the symbol table's externals are what nm shows. Both must
  // hold only the allowed names, and the entry point must be in the trie.
  function cName(n) {
    return n.charAt(0) === '_' ? n.slice(1) : null;
  }
  const symtabOnly = info.symtabExports.filter(function (n) {
    return info.exports.indexOf(n) === -1;
  });
  checkExports(result, info.exports.concat(symtabOnly), [], cName, TOOLCHAIN_EXPORTS.macho);
  if (info.exports.indexOf('_' + ENTRY) === -1) {
    result.problems.push('does not export ' + ENTRY + (info.exportTrie ? ' in its export trie' : ' (no export trie, no such external symbol)'));
  }

  const sig = info.codeSignature;
  if (sig) {
    const verified = macho.verifyCodeSignature(buf, info);
    for (let i = 0; i < verified.problems.length; i++) result.problems.push('code signature: ' + verified.problems[i]);
    const cd = verified.sha256 || sig.codeDirectories[0];
    if (cd) {
      const kind = [cd.adhoc ? 'ad hoc' : 'with a certificate (its CMS blob is not checked here)'];
      if (cd.linkerSigned) kind.push('linker-signed');
      if (!verified.problems.length) result.facts.push('signed ' + kind.join(', ') + ', ' + cd.hashName + ', ' + verified.pages + ' page hashes match');
      if (target.arch === 'arm64' && !cd.adhoc) result.problems.push('code signature: not ad hoc (CS_ADHOC), and a certificate signature cannot be verified here');
    }
  } else if (target.arch === 'arm64') {
    result.problems.push('no code signature (LC_CODE_SIGNATURE): macOS on arm64 refuses unsigned code');
  } else {
    result.facts.push('unsigned');
  }
}

function checkPe(buf, file, target, options, result) {
  const info = pe.parsePe(buf, file);
  checkMachine(result, info.machine, 'pe', target.arch);
  result.facts.push(info.format + ' ' + (info.isDll ? 'DLL' : 'EXE') + ' ' + info.machine);
  if (!info.isDll) result.problems.push('not a DLL (IMAGE_FILE_DLL is not set)');
  const wantedFormat = target.arch === 'ia32' ? 'PE32' : 'PE32+';
  if (info.format !== wantedFormat) result.problems.push('a ' + info.format + ' image, ' + target.arch + ' needs ' + wantedFormat);

  const maxWindows = (options && options.maxWindows) || MAX_WINDOWS;
  if (info.majorOperatingSystemVersion > maxWindows) {
    result.problems.push('OS version ' + info.osVersion + ' in the PE header, at most ' + maxWindows + ' allowed');
  }
  if (info.majorSubsystemVersion > maxWindows) {
    result.problems.push('subsystem version ' + info.subsystemVersion + ' in the PE header, at most ' + maxWindows + ' allowed');
  }
  if (info.majorOperatingSystemVersion <= maxWindows && info.majorSubsystemVersion <= maxWindows) {
    result.facts.push('OS ' + info.osVersion + ' / subsystem ' + info.subsystemVersion + ' <= ' + maxWindows);
  }

  checkLibraries(result, info.libraries, SYSTEM_LIBRARIES.win32, true, 'Windows');

  const names = info.exports.concat(
    info.unnamedExports.map(function (ordinal) {
      return '#' + ordinal + ' (by ordinal only)';
    })
  );
  checkExports(result, names, [ENTRY], null, TOOLCHAIN_EXPORTS.pe);
  for (let i = 0; i < info.exportSymbols.length; i++) {
    const s = info.exportSymbols[i];
    if (s.name === ENTRY && s.forwarder) result.problems.push(ENTRY + ' is forwarded to ' + s.forwarder + ', not defined here');
  }
}

const CHECKERS = { elf: checkElf, macho: checkMachO, pe: checkPe };

/**
 * Checks one binary against what its folder `target` says; returns
 * { ok, problems, facts, format, machine, maxGlibc, glibc, exports, libraries, size }.
 * `options`: { maxGlibc, maxMacos, maxWindows } override the package's limits.
 */
function checkBinary(file, target, options) {
  const result = {
    ok: false,
    problems: [],
    facts: [],
    format: null,
    machine: null,
    maxGlibc: null,
    glibc: [],
    exports: [],
    libraries: [],
    size: null,
  };
  let buf;
  try {
    buf = fs.readFileSync(file);
  } catch (error) {
    result.problems.push(error.message);
    return result;
  }
  result.size = buf.length;
  const wanted = formatFor(target.platform);
  const found = sniffFormat(buf);
  result.format = found;
  if (!wanted) {
    result.problems.push('unknown platform "' + target.platform + '" in the folder name');
    return result;
  }
  if (found !== wanted) {
    result.problems.push(
      (found ? A_FILE[found] : 'no known binary format') + ', ' + target.platform + ' binaries are ' + FORMAT_NAMES[wanted]
    );
    return result;
  }
  try {
    CHECKERS[found](buf, file, target, options, result);
  } catch (error) {
    result.problems.push(error.message);
  }
  result.facts.push(Math.round(buf.length / 1024) + ' KiB');
  result.ok = result.problems.length === 0;
  return result;
}

/**
 * Checks every <platform>-<arch>[-<libc>]/atomics-waitasync.node under `dir`.
 * A platform folder without the binary is a failure too. Returns one result
 * per folder: { name, file, platform, arch, libc, ok, problems, facts, machine, maxGlibc, glibc, size, ... };
 * an empty array when `dir` has no platform folder (or does not exist).
 */
function checkPrebuilds(dir, options) {
  const root = path.resolve(dir || path.join(__dirname, '..', 'prebuilds'));
  let names = [];
  try {
    names = fs.readdirSync(root).sort();
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  const results = [];
  for (let i = 0; i < names.length; i++) {
    const target = parseName(names[i]);
    if (!target || !fs.statSync(path.join(root, names[i])).isDirectory()) continue;
    const file = path.join(root, names[i], FILE);
    let result;
    if (!fs.existsSync(file)) result = { ok: false, problems: ['no ' + FILE + ' in this folder'], facts: [] };
    else result = checkBinary(file, target, options);
    results.push(
      Object.assign({ name: names[i], file: file, platform: target.platform, arch: target.arch, libc: target.libc }, result)
    );
  }
  return results;
}

function describe(r) {
  const label = r.name + '/' + FILE;
  if (!r.ok) return 'FAIL ' + label + ': ' + r.problems.join('; ');
  return 'ok   ' + label + ': ' + r.facts.join(', ');
}

/**
 * For every binary under `dir`, checks mutated copies (scripts/lib/mutations.js):
 * the unchanged copy must pass, and each mutation must add a problem matching
 * its `expect` that the unchanged copy did not have (so a defect the binary
 * already has proves nothing). Calls `log` with one line per case; returns
 * { passed, failed }.
 */
function selfTest(dir, log) {
  const mutations = require('./lib/mutations');
  const results = checkPrebuilds(dir);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'check-prebuilds-'));
  let passed = 0;
  let failed = 0;
  function report(ok, line) {
    log((ok ? 'ok   ' : 'FAIL ') + line);
    if (ok) passed++;
    else failed++;
  }
  try {
    for (let i = 0; i < results.length; i++) {
      const r = results[i];
      if (!fs.existsSync(r.file)) {
        report(false, r.name + ': no ' + FILE + ' to mutate');
        continue;
      }
      const original = fs.readFileSync(r.file);
      const target = { platform: r.platform, arch: r.arch, libc: r.libc };
      let cases;
      try {
        cases = mutations.casesFor(original, r.format, target, { entry: ENTRY, sharedCore: SHARED_CORE });
      } catch (error) {
        report(false, r.name + ': cannot make mutated copies: ' + error.message);
        continue;
      }
      let baseline = [];
      for (let k = 0; k < cases.length; k++) {
        const c = cases[k];
        const copy = path.join(work, r.name + '-' + k + '.node');
        fs.writeFileSync(copy, c.bytes);
        const checked = checkBinary(copy, c.target || target);
        const label = r.name + ' ' + c.name;
        if (!c.expect) {
          baseline = checked.problems;
          if (checked.ok) report(true, label + ': passes');
          else report(false, label + ': should pass, fails: ' + checked.problems.join('; '));
          continue;
        }
        const hit = checked.problems.filter(function (p) {
          return c.expect.test(p) && baseline.indexOf(p) === -1;
        });
        if (checked.ok) report(false, label + ': passed the check');
        else if (!hit.length) report(false, label + ': no new problem matching ' + c.expect + ', only: ' + checked.problems.join('; '));
        else report(true, label + ': fails: ' + hit[0]);
      }
    }
  } finally {
    if (fs.rmSync) fs.rmSync(work, { recursive: true, force: true });
    else fs.rmdirSync(work, { recursive: true });
  }
  if (results.length === 0) report(false, dir + ': no <platform>-<arch>[-<libc>]/' + FILE + ' to test with');
  return { passed: passed, failed: failed };
}

function main(argv) {
  const self = argv[0] === '--self-test';
  const rest = self ? argv.slice(1) : argv;
  const dir = rest[0] ? path.resolve(rest[0]) : path.join(__dirname, '..', 'prebuilds');
  if (self) {
    const t = selfTest(dir, console.log);
    console.log('self-test: ' + t.passed + ' passed, ' + t.failed + ' failed');
    return t.failed ? 1 : 0;
  }
  const results = checkPrebuilds(dir);
  let passed = 0;
  let failed = 0;
  for (let i = 0; i < results.length; i++) {
    console.log(describe(results[i]));
    if (results[i].ok) passed++;
    else failed++;
  }
  if (results.length === 0) {
    console.log('FAIL ' + dir + ': no <platform>-<arch>[-<libc>]/' + FILE + ' found (run `node scripts/prebuild.js`)');
    failed++;
  }
  console.log('check-prebuilds: ' + passed + ' passed, ' + failed + ' failed');
  return failed ? 1 : 0;
}

module.exports = {
  checkPrebuilds,
  checkBinary,
  parseName,
  selfTest,
  MAX_GLIBC,
  MAX_MACOS,
  MAX_WINDOWS,
};

if (require.main === module) process.exitCode = main(process.argv.slice(2));
