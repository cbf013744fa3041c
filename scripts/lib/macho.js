'use strict';
// A small Mach-O reader, pure Node, for checking prebuilt macOS addons: which
// CPU a binary is for, its minimum macOS (LC_BUILD_VERSION or
// LC_VERSION_MIN_MACOSX), its install name (LC_ID_DYLIB), the libraries it
// loads, what it exports (the export trie dyld resolves symbols through, and
// the symbol table's external definitions), and its code signature, which
// verifyCodeSignature() checks page by page. Names come with their file
// offsets, so a test can patch exactly the bytes a check reads
// (check-prebuilds.js --self-test). Parses on Node 12 (no `?.`, `??` or
// `node:` specifiers).
//
//   const macho = require('./macho');
//   const info = macho.readMachO('prebuilds/darwin-arm64/atomics-waitasync.node');
//   info.machine                 'arm64' | 'x86_64' | ...
//   info.minOs                   { command: 'LC_BUILD_VERSION', platform: 'macos', version: '11.0', ... }
//   macho.verifyCodeSignature(buf, info).problems   []
//
// Reads thin 64-bit little-endian files, which is every macOS binary since
// 10.15 dropped 32-bit; throws an Error with code 'ERR_NOT_MACHO' on anything
// else (a universal "fat" file is named as such), and 'ERR_MACHO_TRUNCATED'
// when a command or table points past the end of the file.

const crypto = require('crypto');
const fs = require('fs');

const MH_MAGIC_64 = 0xfeedfacf;
const MH_MAGIC = 0xfeedface;
const FAT_MAGIC = 0xcafebabe;
const FAT_MAGIC_64 = 0xcafebabf;

// <mach/machine.h>: the CPU type, then the subtype (its low 24 bits; the top
// byte holds capability bits such as the arm64e pointer-authentication ABI).
const CPU_TYPE_X86_64 = 0x01000007;
const CPU_TYPE_ARM64 = 0x0100000c;
const CPU_NAMES = {};
CPU_NAMES[CPU_TYPE_X86_64] = { 3: 'x86_64', 8: 'x86_64h' };
CPU_NAMES[CPU_TYPE_ARM64] = { 0: 'arm64', 1: 'arm64v8', 2: 'arm64e' };

const FILE_TYPES = { 1: 'OBJECT', 2: 'EXECUTE', 6: 'DYLIB', 8: 'BUNDLE' };

// <mach-o/loader.h> load commands.
const LC_REQ_DYLD = 0x80000000;
const LC_SYMTAB = 0x2;
const LC_LOAD_DYLIB = 0xc;
const LC_ID_DYLIB = 0xd;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
const LC_LAZY_LOAD_DYLIB = 0x20;
const LC_DYLD_INFO = 0x22;
const LC_VERSION_MIN_MACOSX = 0x24;
const LC_VERSION_MIN_IPHONEOS = 0x25;
const LC_VERSION_MIN_TVOS = 0x2f;
const LC_VERSION_MIN_WATCHOS = 0x30;
const LC_BUILD_VERSION = 0x32;
// `>>> 0`: JavaScript's `|` gives a signed 32-bit result, the file holds unsigned ones.
const LC_LOAD_WEAK_DYLIB = (0x18 | LC_REQ_DYLD) >>> 0;
const LC_RPATH = (0x1c | LC_REQ_DYLD) >>> 0;
const LC_REEXPORT_DYLIB = (0x1f | LC_REQ_DYLD) >>> 0;
const LC_DYLD_INFO_ONLY = (0x22 | LC_REQ_DYLD) >>> 0;
const LC_LOAD_UPWARD_DYLIB = (0x23 | LC_REQ_DYLD) >>> 0;
const LC_DYLD_EXPORTS_TRIE = (0x33 | LC_REQ_DYLD) >>> 0;

// How each command that names a library loads it.
const LIBRARY_KINDS = {};
LIBRARY_KINDS[LC_LOAD_DYLIB] = 'load';
LIBRARY_KINDS[LC_LOAD_WEAK_DYLIB] = 'weak';
LIBRARY_KINDS[LC_REEXPORT_DYLIB] = 'reexport';
LIBRARY_KINDS[LC_LAZY_LOAD_DYLIB] = 'lazy';
LIBRARY_KINDS[LC_LOAD_UPWARD_DYLIB] = 'upward';

// LC_BUILD_VERSION platforms; the LC_VERSION_MIN_* commands each name one.
const PLATFORMS = {
  1: 'macos',
  2: 'ios',
  3: 'tvos',
  4: 'watchos',
  5: 'bridgeos',
  6: 'maccatalyst',
  7: 'iossimulator',
  8: 'tvossimulator',
  9: 'watchossimulator',
  10: 'driverkit',
  11: 'visionos',
  12: 'visionossimulator',
};
const VERSION_MIN_PLATFORMS = {};
VERSION_MIN_PLATFORMS[LC_VERSION_MIN_MACOSX] = 'macos';
VERSION_MIN_PLATFORMS[LC_VERSION_MIN_IPHONEOS] = 'ios';
VERSION_MIN_PLATFORMS[LC_VERSION_MIN_TVOS] = 'tvos';
VERSION_MIN_PLATFORMS[LC_VERSION_MIN_WATCHOS] = 'watchos';

// nlist_64 n_type bits.
const N_STAB = 0xe0;
const N_PEXT = 0x10;
const N_TYPE = 0x0e;
const N_EXT = 0x01;
const N_UNDF = 0x0;

// Export trie terminal flags.
const EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION = 0x04;
const EXPORT_SYMBOL_FLAGS_REEXPORT = 0x08;
const EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER = 0x10;

// Code signing (xnu osfmk/kern/cs_blobs.h); every field in these blobs is big-endian.
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const CSSLOT_CODEDIRECTORY = 0;
const CSSLOT_ALTERNATE_CODEDIRECTORIES = 0x1000;
const CSSLOT_ALTERNATE_CODEDIRECTORY_MAX = 5;
const CS_ADHOC = 0x2;
const CS_LINKER_SIGNED = 0x20000;
const CS_SUPPORTSCODELIMIT64 = 0x20300;
// hashType -> the Node hash and how many bytes of it a slot keeps.
const CS_HASH_TYPES = {
  1: { name: 'SHA-1', algorithm: 'sha1', size: 20 },
  2: { name: 'SHA-256', algorithm: 'sha256', size: 32 },
  3: { name: 'SHA-256 truncated', algorithm: 'sha256', size: 20 },
  4: { name: 'SHA-384', algorithm: 'sha384', size: 48 },
};
const CS_HASHTYPE_SHA256 = 2;

function fail(code, message) {
  const error = new Error(message);
  error.code = code;
  return error;
}

/** A bounds-checked view of the file: little-endian for Mach-O structures, big-endian for code signing blobs. */
function makeReader(buf, what) {
  function check(offset, size) {
    if (offset < 0 || offset + size > buf.length || !isFinite(offset)) {
      throw fail(
        'ERR_MACHO_TRUNCATED',
        what + ': truncated or corrupt Mach-O (wants ' + size + ' bytes at offset ' + offset + ', file has ' + buf.length + ')'
      );
    }
  }
  return {
    u8: function (o) {
      check(o, 1);
      return buf[o];
    },
    u32: function (o) {
      check(o, 4);
      return buf.readUInt32LE(o);
    },
    // 64-bit fields as Numbers: exact up to 2^53, far past any file we read.
    u64: function (o) {
      check(o, 8);
      return buf.readUInt32LE(o + 4) * 0x100000000 + buf.readUInt32LE(o);
    },
    be32: function (o) {
      check(o, 4);
      return buf.readUInt32BE(o);
    },
    be64: function (o) {
      check(o, 8);
      return buf.readUInt32BE(o) * 0x100000000 + buf.readUInt32BE(o + 4);
    },
    // ULEB128 (export trie): returns { value, next }; Number arithmetic, so no 32-bit wrap.
    uleb: function (o, end) {
      let value = 0;
      let scale = 1;
      for (let p = o; p < end; p++) {
        check(p, 1);
        const byte = buf[p];
        value += (byte & 0x7f) * scale;
        scale *= 128;
        if ((byte & 0x80) === 0) return { value: value, next: p + 1 };
        if (scale > Math.pow(2, 63)) break;
      }
      throw fail('ERR_MACHO_TRUNCATED', what + ': bad ULEB128 at offset ' + o);
    },
    check: check,
  };
}

/** A NUL-terminated string starting at `offset`, not reading at or past `end`. */
function cString(buf, offset, end) {
  const limit = Math.min(end === undefined ? buf.length : end, buf.length);
  let stop = offset;
  while (stop < limit && buf[stop] !== 0) stop++;
  return buf.toString('latin1', offset, stop);
}

/** A fixed 16-byte name field (segment and section names), NUL-padded. */
function fixedName(buf, offset) {
  return cString(buf, offset, offset + 16);
}

/** xxxx.yy.zz packed in a u32 -> '11.0' or '10.15.4' (the patch only when not 0). */
function formatVersion(v) {
  const major = Math.floor(v / 65536);
  const minor = (v >> 8) & 0xff;
  const patch = v & 0xff;
  return major + '.' + minor + (patch ? '.' + patch : '');
}

/**
 * Walks an export trie at file offsets [start, start + size). Every node is
 * { terminal size (ULEB), terminal info, child count (u8), children: edge
 * string (C string) + child offset (ULEB, from the trie start) }; a symbol's
 * name is the concatenation of the edges to its terminal node. Returns
 * [{ name, nameEnd, flags, weak, reexport, address }], nameEnd being the file
 * offset just past the name's last byte (the end of its last edge).
 */
function readExportTrie(buf, r, start, size, what) {
  const end = start + size;
  r.check(start, size);
  const symbols = [];
  const visited = {};
  const stack = [{ offset: start, prefix: '', nameEnd: null }];
  while (stack.length) {
    const node = stack.pop();
    if (visited[node.offset]) throw fail('ERR_MACHO_TRUNCATED', what + ': export trie loops back to offset ' + node.offset);
    visited[node.offset] = true;
    if (node.offset >= end) throw fail('ERR_MACHO_TRUNCATED', what + ': export trie node past the trie (offset ' + node.offset + ')');
    const terminal = r.uleb(node.offset, end);
    let p = terminal.next;
    if (terminal.value > 0) {
      const flags = r.uleb(p, end);
      const symbol = {
        name: node.prefix,
        nameEnd: node.nameEnd,
        flags: flags.value,
        weak: (flags.value & EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION) !== 0,
        reexport: (flags.value & EXPORT_SYMBOL_FLAGS_REEXPORT) !== 0,
        address: null,
      };
      if (!symbol.reexport) {
        const address = r.uleb(flags.next, end);
        symbol.address = address.value;
        if (flags.value & EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER) r.uleb(address.next, end);
      }
      symbols.push(symbol);
    }
    p = terminal.next + terminal.value;
    const childCount = r.u8(p);
    p++;
    const children = [];
    for (let i = 0; i < childCount; i++) {
      const edge = cString(buf, p, end);
      const edgeEnd = p + edge.length;
      if (edgeEnd >= end) throw fail('ERR_MACHO_TRUNCATED', what + ': export trie edge runs past the trie');
      const child = r.uleb(edgeEnd + 1, end);
      children.push({ offset: start + child.value, prefix: node.prefix + edge, nameEnd: edgeEnd });
      p = child.next;
    }
    // Reversed onto the stack, so names come out in trie order.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return symbols;
}

/**
 * Parses the code signature (an embedded-signature SuperBlob at
 * LC_CODE_SIGNATURE's dataoff) into its blobs and code directories, without
 * checking any hash (verifyCodeSignature does). Returns {
 *   offset, size, blobs: [{ type, offset, magic, length }],
 *   codeDirectories: [{ slot, version, flags, adhoc, linkerSigned, hashType, hashName, hashSize,
 *                       pageSize, codeLimit, nCodeSlots, nSpecialSlots, identifier, hashesOffset, offset }],
 * }. hashesOffset is the file offset of code slot 0's hash; special slot k's is k hashes before it.
 */
function readCodeSignature(buf, r, offset, size, what) {
  r.check(offset, size);
  const magic = r.be32(offset);
  if (magic !== CSMAGIC_EMBEDDED_SIGNATURE) {
    throw fail('ERR_MACHO_TRUNCATED', what + ': code signature magic 0x' + magic.toString(16) + ', not an embedded signature (0xfade0cc0)');
  }
  const length = r.be32(offset + 4);
  const count = r.be32(offset + 8);
  if (length > size) throw fail('ERR_MACHO_TRUNCATED', what + ': code signature SuperBlob (' + length + ' bytes) larger than LC_CODE_SIGNATURE says (' + size + ')');
  r.check(offset + 12, count * 8);
  const blobs = [];
  const codeDirectories = [];
  for (let i = 0; i < count; i++) {
    const type = r.be32(offset + 12 + i * 8);
    const blobOffset = offset + r.be32(offset + 16 + i * 8);
    if (blobOffset + 8 > offset + length) throw fail('ERR_MACHO_TRUNCATED', what + ': code signature blob ' + type + ' past the SuperBlob');
    const blob = { type: type, offset: blobOffset, magic: r.be32(blobOffset), length: r.be32(blobOffset + 4) };
    if (blob.offset + blob.length > offset + length) {
      throw fail('ERR_MACHO_TRUNCATED', what + ': code signature blob ' + type + ' (' + blob.length + ' bytes) runs past the SuperBlob');
    }
    blobs.push(blob);
    const isDirectory =
      type === CSSLOT_CODEDIRECTORY ||
      (type >= CSSLOT_ALTERNATE_CODEDIRECTORIES && type < CSSLOT_ALTERNATE_CODEDIRECTORIES + CSSLOT_ALTERNATE_CODEDIRECTORY_MAX);
    if (!isDirectory) continue;
    if (blob.magic !== CSMAGIC_CODEDIRECTORY) {
      throw fail('ERR_MACHO_TRUNCATED', what + ': code directory slot 0x' + type.toString(16) + ' holds magic 0x' + blob.magic.toString(16));
    }
    // CS_CodeDirectory: magic, length, version, flags, hashOffset, identOffset,
    // nSpecialSlots, nCodeSlots, codeLimit (u32s), hashSize, hashType, platform,
    // pageSize (log2) (u8s), spare2, then per version: scatterOffset (0x20100),
    // teamOffset (0x20200), spare3 + codeLimit64 (0x20300), execSeg* (0x20400).
    const cd = blob.offset;
    const version = r.be32(cd + 8);
    const flags = r.be32(cd + 12);
    const hashType = r.u8(cd + 37);
    const pageShift = r.u8(cd + 39);
    let codeLimit = r.be32(cd + 32);
    if (version >= CS_SUPPORTSCODELIMIT64 && codeLimit === 0) codeLimit = r.be64(cd + 56);
    const known = CS_HASH_TYPES[hashType];
    codeDirectories.push({
      slot: type,
      offset: cd,
      version: version,
      flags: flags,
      adhoc: (flags & CS_ADHOC) !== 0,
      linkerSigned: (flags & CS_LINKER_SIGNED) !== 0,
      hashType: hashType,
      hashName: known ? known.name : 'hash type ' + hashType,
      hashSize: r.u8(cd + 36),
      // 0 means one page for everything up to codeLimit.
      pageSize: pageShift ? Math.pow(2, pageShift) : 0,
      codeLimit: codeLimit,
      nCodeSlots: r.be32(cd + 28),
      nSpecialSlots: r.be32(cd + 24),
      identifier: cString(buf, cd + r.be32(cd + 20), cd + blob.length),
      hashesOffset: cd + r.be32(cd + 16),
    });
  }
  return { offset: offset, size: size, blobs: blobs, codeDirectories: codeDirectories };
}

/**
 * Parses a Mach-O image held in a Buffer. `name` only labels error messages.
 * Returns {
 *   machine: 'arm64' | 'arm64e' | 'x86_64' | 'x86_64h' | 'cputype 0x...', cputype, cpusubtype,
 *   fileType: 'DYLIB' | 'BUNDLE' | ..., flags,
 *   segments: [{ name, fileoff, filesize, sections: [{ name, offset, size }] }],
 *   installName: { name, offset } | null (LC_ID_DYLIB),
 *   libraries: [{ name, offset, kind: 'load' | 'weak' | 'reexport' | 'lazy' | 'upward' }],
 *   rpaths: ['@loader_path/..', ...],
 *   minOs: { command, platform, version, sdk, offset } | null (offset: file offset of the packed minimum version),
 *   minOsCommands: [every LC_BUILD_VERSION / LC_VERSION_MIN_* in the file, as minOs],
 *   exportTrie: [{ name, nameEnd, flags, weak, reexport, address }] | null (no trie),
 *   symtabExports: [names of external, defined, not private-external nlist symbols],
 *   exports: [the trie's names, else the symbol table's],
 *   codeSignature: (see readCodeSignature) | null,
 * }
 */
function parseMachO(buf, name) {
  const what = name || 'buffer';
  if (!Buffer.isBuffer(buf)) throw new TypeError('parseMachO: expected a Buffer');
  if (buf.length < 32) throw fail('ERR_NOT_MACHO', what + ': not a Mach-O file (' + buf.length + ' bytes, shorter than a Mach-O header)');
  const magic = buf.readUInt32LE(0);
  const magicBE = buf.readUInt32BE(0);
  if (magicBE === FAT_MAGIC || magicBE === FAT_MAGIC_64) {
    throw fail('ERR_NOT_MACHO', what + ': a universal (fat) Mach-O; a prebuild folder holds one architecture, so a thin file');
  }
  if (magic === MH_MAGIC) throw fail('ERR_NOT_MACHO', what + ': a 32-bit Mach-O (MH_MAGIC), not 64-bit');
  if (magic !== MH_MAGIC_64) {
    const swapped = magicBE === MH_MAGIC_64 || magicBE === MH_MAGIC;
    throw fail('ERR_NOT_MACHO', what + ': not a Mach-O file (' + (swapped ? 'big-endian Mach-O' : 'no 0xfeedfacf magic at offset 0') + ')');
  }
  const r = makeReader(buf, what);

  // mach_header_64: magic, cputype, cpusubtype, filetype, ncmds, sizeofcmds, flags, reserved.
  const cputype = r.u32(4);
  const cpusubtype = r.u32(8);
  const fileType = r.u32(12);
  const ncmds = r.u32(16);
  const sizeofcmds = r.u32(20);
  const flags = r.u32(24);
  const names = CPU_NAMES[cputype];
  const machine = (names && names[cpusubtype & 0xffffff]) || 'cputype 0x' + cputype.toString(16) + ' subtype ' + (cpusubtype & 0xffffff);
  r.check(32, sizeofcmds);

  const segments = [];
  const libraries = [];
  const rpaths = [];
  const minOsCommands = [];
  let installName = null;
  let symtab = null;
  let trie = null;
  let signature = null;
  let o = 32;
  for (let i = 0; i < ncmds; i++) {
    const cmd = r.u32(o);
    const cmdsize = r.u32(o + 4);
    if (cmdsize < 8 || o + cmdsize > 32 + sizeofcmds) {
      throw fail('ERR_MACHO_TRUNCATED', what + ': load command ' + i + ' (0x' + cmd.toString(16) + ', ' + cmdsize + ' bytes) runs past the commands');
    }
    const end = o + cmdsize;
    if (cmd === LC_SEGMENT_64) {
      // segment_command_64: segname[16] @8, vmaddr, vmsize, fileoff, filesize (u64) @24..,
      // maxprot, initprot, nsects, flags (u32) @56..; then nsects section_64 of 80 bytes:
      // sectname[16], segname[16], addr, size (u64), offset (u32) @48, ...
      const segment = { name: fixedName(buf, o + 8), fileoff: r.u64(o + 40), filesize: r.u64(o + 48), sections: [] };
      const nsects = r.u32(o + 64);
      if (72 + nsects * 80 > cmdsize) throw fail('ERR_MACHO_TRUNCATED', what + ': segment ' + segment.name + ' has more sections than fit its command');
      for (let k = 0; k < nsects; k++) {
        const s = o + 72 + k * 80;
        segment.sections.push({ name: fixedName(buf, s), offset: r.u32(s + 48), size: r.u64(s + 40) });
      }
      segments.push(segment);
    } else if (cmd === LC_ID_DYLIB || LIBRARY_KINDS[cmd]) {
      // dylib_command: name offset (from the command's start) @8, timestamp, current_version, compatibility_version.
      const nameOffset = o + r.u32(o + 8);
      if (nameOffset >= end) throw fail('ERR_MACHO_TRUNCATED', what + ': library name outside its load command');
      const entry = { name: cString(buf, nameOffset, end), offset: nameOffset };
      if (cmd === LC_ID_DYLIB) installName = entry;
      else libraries.push(Object.assign(entry, { kind: LIBRARY_KINDS[cmd] }));
    } else if (cmd === LC_RPATH) {
      rpaths.push(cString(buf, o + r.u32(o + 8), end));
    } else if (cmd === LC_BUILD_VERSION) {
      // build_version_command: platform @8, minos @12, sdk @16, ntools @20.
      const platform = r.u32(o + 8);
      minOsCommands.push({
        command: 'LC_BUILD_VERSION',
        platform: PLATFORMS[platform] || 'platform ' + platform,
        version: formatVersion(r.u32(o + 12)),
        sdk: formatVersion(r.u32(o + 16)),
        offset: o + 12,
      });
    } else if (VERSION_MIN_PLATFORMS[cmd]) {
      // version_min_command: version @8, sdk @12.
      minOsCommands.push({
        command: cmd === LC_VERSION_MIN_MACOSX ? 'LC_VERSION_MIN_MACOSX' : 'LC_VERSION_MIN_' + VERSION_MIN_PLATFORMS[cmd].toUpperCase(),
        platform: VERSION_MIN_PLATFORMS[cmd],
        version: formatVersion(r.u32(o + 8)),
        sdk: formatVersion(r.u32(o + 12)),
        offset: o + 8,
      });
    } else if (cmd === LC_SYMTAB) {
      // symtab_command: symoff, nsyms, stroff, strsize.
      symtab = { symoff: r.u32(o + 8), nsyms: r.u32(o + 12), stroff: r.u32(o + 16), strsize: r.u32(o + 20) };
    } else if (cmd === LC_DYLD_INFO || cmd === LC_DYLD_INFO_ONLY) {
      // dyld_info_command: rebase, bind, weak_bind, lazy_bind, export (offset, size pairs).
      const size = r.u32(o + 44);
      if (size) trie = { offset: r.u32(o + 40), size: size };
    } else if (cmd === LC_DYLD_EXPORTS_TRIE) {
      // linkedit_data_command: dataoff, datasize (binaries with chained fixups).
      const size = r.u32(o + 12);
      if (size) trie = { offset: r.u32(o + 8), size: size };
    } else if (cmd === LC_CODE_SIGNATURE) {
      signature = { offset: r.u32(o + 8), size: r.u32(o + 12) };
    }
    o = end;
  }

  const symtabExports = [];
  if (symtab) {
    // nlist_64: n_strx u32, n_type u8, n_sect u8, n_desc u16, n_value u64.
    r.check(symtab.symoff, symtab.nsyms * 16);
    r.check(symtab.stroff, symtab.strsize);
    for (let i = 0; i < symtab.nsyms; i++) {
      const s = symtab.symoff + i * 16;
      const type = r.u8(s + 4);
      const isExported = (type & N_STAB) === 0 && (type & N_EXT) !== 0 && (type & N_PEXT) === 0 && (type & N_TYPE) !== N_UNDF;
      if (!isExported) continue;
      const strx = r.u32(s);
      if (strx >= symtab.strsize) throw fail('ERR_MACHO_TRUNCATED', what + ': symbol ' + i + ' names string ' + strx + ', past the string table');
      symtabExports.push(cString(buf, symtab.stroff + strx, symtab.stroff + symtab.strsize));
    }
  }
  const exportTrie = trie ? readExportTrie(buf, r, trie.offset, trie.size, what) : null;

  return {
    machine: machine,
    cputype: cputype,
    cpusubtype: cpusubtype,
    fileType: FILE_TYPES[fileType] || fileType,
    flags: flags,
    segments: segments,
    installName: installName,
    libraries: libraries,
    rpaths: rpaths,
    minOs: minOsCommands.length ? minOsCommands[0] : null,
    minOsCommands: minOsCommands,
    exportTrie: exportTrie,
    symtabExports: symtabExports,
    exports: exportTrie
      ? exportTrie.map(function (s) {
          return s.name;
        })
      : symtabExports,
    codeSignature: signature ? readCodeSignature(buf, r, signature.offset, signature.size, what) : null,
  };
}

/**
 * The hash code directory `cd` should hold for page `page` of `buf`: the
 * page's bytes (the last page cut at codeLimit), hashed with the directory's
 * hash and cut to its hashSize. null for a hash type this reader does not know.
 */
function pageHash(buf, cd, page) {
  const known = CS_HASH_TYPES[cd.hashType];
  if (!known) return null;
  const pageSize = cd.pageSize || cd.codeLimit;
  const start = page * pageSize;
  const end = Math.max(start, Math.min(start + pageSize, cd.codeLimit));
  return crypto.createHash(known.algorithm).update(buf.slice(start, end)).digest().slice(0, cd.hashSize);
}

/**
 * Checks a parsed file's code signature against its bytes, as the kernel does
 * page by page when it maps them: in every code directory, each code slot
 * must hold the hash of its page of the file (pageSize bytes, the last one
 * cut at codeLimit), codeLimit must reach the signature itself (no unsigned
 * bytes before it), and each special slot must hold the hash of the blob of
 * that type in the signature, or zeros when there is none. The CMS blob of a
 * certificate signature is not checked (an ad-hoc signature has none).
 * Returns { problems: [], sha256: the first SHA-256 code directory or null,
 * pages: code slots checked }.
 */
function verifyCodeSignature(buf, info) {
  const sig = info.codeSignature;
  const problems = [];
  let sha256 = null;
  let pages = 0;
  if (!sig) return { problems: ['no code signature (LC_CODE_SIGNATURE)'], sha256: null, pages: 0 };
  if (!sig.codeDirectories.length) problems.push('code signature has no code directory');
  for (let i = 0; i < sig.codeDirectories.length; i++) {
    const cd = sig.codeDirectories[i];
    const label = 'code directory 0x' + cd.slot.toString(16) + ' (' + cd.hashName + ')';
    const known = CS_HASH_TYPES[cd.hashType];
    if (!known) {
      problems.push(label + ': unknown hash type, cannot verify');
      continue;
    }
    if (cd.hashSize !== known.size) {
      problems.push(label + ': hash size ' + cd.hashSize + ', ' + known.name + ' has ' + known.size);
      continue;
    }
    if (cd.codeLimit !== sig.offset) {
      problems.push(label + ': signs ' + cd.codeLimit + ' bytes, the signature starts at ' + sig.offset);
    }
    if (cd.codeLimit > buf.length) {
      problems.push(label + ': signs ' + cd.codeLimit + ' bytes, past the end of the file');
      continue;
    }
    const pageSize = cd.pageSize || cd.codeLimit;
    const wanted = pageSize ? Math.ceil(cd.codeLimit / pageSize) : 0;
    if (cd.nCodeSlots !== wanted) {
      problems.push(label + ': ' + cd.nCodeSlots + ' page hashes for ' + wanted + ' pages');
    }
    if (cd.hashesOffset - cd.nSpecialSlots * cd.hashSize < cd.offset || cd.hashesOffset + cd.nCodeSlots * cd.hashSize > buf.length) {
      problems.push(label + ': hash slots outside the file');
      continue;
    }
    const bad = [];
    for (let page = 0; page < cd.nCodeSlots; page++) {
      const stored = buf.slice(cd.hashesOffset + page * cd.hashSize, cd.hashesOffset + (page + 1) * cd.hashSize);
      if (!pageHash(buf, cd, page).equals(stored)) bad.push(page);
    }
    pages += cd.nCodeSlots;
    if (bad.length) {
      problems.push(
        label + ': ' + bad.length + ' of ' + cd.nCodeSlots + ' page hashes do not match the file (page ' +
          bad.slice(0, 5).join(', ') + (bad.length > 5 ? ', ...' : '') + ')'
      );
    }
    for (let slot = 1; slot <= cd.nSpecialSlots; slot++) {
      const at = cd.hashesOffset - slot * cd.hashSize;
      const stored = buf.slice(at, at + cd.hashSize);
      let blob = null;
      for (let k = 0; k < sig.blobs.length; k++) if (sig.blobs[k].type === slot) blob = sig.blobs[k];
      if (blob) {
        const digest = crypto.createHash(known.algorithm).update(buf.slice(blob.offset, blob.offset + blob.length)).digest();
        if (!digest.slice(0, cd.hashSize).equals(stored)) problems.push(label + ': special slot ' + slot + ' does not match its blob');
      } else if (stored.some(function (b) {
        return b !== 0;
      })) {
        problems.push(label + ': special slot ' + slot + ' hashes something outside the signature (cannot verify)');
      }
    }
    if (cd.hashType === CS_HASHTYPE_SHA256 && !sha256) sha256 = cd;
  }
  if (sig.codeDirectories.length && !sha256) problems.push('no SHA-256 code directory (macOS on arm64 wants one)');
  return { problems: problems, sha256: sha256, pages: pages };
}

/** Reads and parses a Mach-O file (see parseMachO). */
function readMachO(file) {
  return parseMachO(fs.readFileSync(file), file);
}

module.exports = {
  readMachO,
  parseMachO,
  verifyCodeSignature,
  pageHash,
  CPU_TYPE_X86_64,
  CPU_TYPE_ARM64,
};
