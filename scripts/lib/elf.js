'use strict';
// A small ELF reader, pure Node, for checking prebuilt addons: which machine a
// binary is for, which glibc symbol versions it needs (the GNU version-needs
// section, SHT_GNU_verneed), which libraries it needs (DT_NEEDED), its
// program interpreter and stack flags (program headers), and what its dynamic
// symbol table imports and exports. Names come with their file offsets, so a
// test can patch exactly the bytes a check reads (check-prebuilds.js
// --self-test). Parses on Node 12 (no `?.`, `??` or `node:` specifiers).
//
//   const elf = require('./elf');
//   const info = elf.readElf('prebuilds/linux-x64-gnu/atomics-waitasync.node');
//   info.machine      'x86-64' | 'aarch64' | ... | <e_machine number>
//   info.maxGlibc     '2.17'
//
// Handles 32- and 64-bit, little- and big-endian files. Throws an Error with
// code 'ERR_NOT_ELF' on anything that is not an ELF file, and 'ERR_ELF_TRUNCATED'
// when a header or table points past the end of the file.

const fs = require('fs');

const SHT_STRTAB = 3;
const SHT_DYNAMIC = 6;
const SHT_DYNSYM = 11;
const SHT_GNU_VERDEF = 0x6ffffffd;
const SHT_GNU_VERNEED = 0x6ffffffe;
const SHT_GNU_VERSYM = 0x6fffffff;

const DT_NEEDED = 1;
const DT_SONAME = 14;

const PT_INTERP = 3;
const PT_GNU_STACK = 0x6474e551;
const PF_X = 1;

const EM_X86_64 = 62;
const EM_AARCH64 = 183;
const MACHINES = {
  3: 'x86',
  8: 'mips',
  20: 'ppc',
  21: 'ppc64',
  22: 's390',
  40: 'arm',
  [EM_X86_64]: 'x86-64',
  [EM_AARCH64]: 'aarch64',
  243: 'riscv',
  258: 'loongarch',
};

const TYPES = { 0: 'NONE', 1: 'REL', 2: 'EXEC', 3: 'DYN', 4: 'CORE' };
const SYM_TYPES = { 0: 'NOTYPE', 1: 'OBJECT', 2: 'FUNC', 3: 'SECTION', 4: 'FILE', 5: 'COMMON', 6: 'TLS', 10: 'IFUNC' };
const SYM_BINDS = { 0: 'LOCAL', 1: 'GLOBAL', 2: 'WEAK', 10: 'UNIQUE' };
const SYM_VISIBILITY = ['DEFAULT', 'INTERNAL', 'HIDDEN', 'PROTECTED'];

function fail(code, message) {
  const error = new Error(message);
  error.code = code;
  return error;
}

/** A bounds-checked view of the file in the ELF's byte order and class. */
function makeReader(buf, little, is64, what) {
  function check(offset, size) {
    if (offset < 0 || offset + size > buf.length || !isFinite(offset)) {
      throw fail(
        'ERR_ELF_TRUNCATED',
        what + ': truncated or corrupt ELF (wants ' + size + ' bytes at offset ' + offset + ', file has ' + buf.length + ')'
      );
    }
  }
  const r = {
    u8: function (o) {
      check(o, 1);
      return buf[o];
    },
    u16: function (o) {
      check(o, 2);
      return little ? buf.readUInt16LE(o) : buf.readUInt16BE(o);
    },
    u32: function (o) {
      check(o, 4);
      return little ? buf.readUInt32LE(o) : buf.readUInt32BE(o);
    },
    // 64-bit fields as Numbers: exact up to 2^53, far past any file we read.
    u64: function (o) {
      check(o, 8);
      const lo = little ? buf.readUInt32LE(o) : buf.readUInt32BE(o + 4);
      const hi = little ? buf.readUInt32LE(o + 4) : buf.readUInt32BE(o);
      return hi * 0x100000000 + lo;
    },
    // An address- or offset-sized field: 8 bytes in ELF64, 4 in ELF32.
    word: function (o) {
      return is64 ? r.u64(o) : r.u32(o);
    },
    check: check,
  };
  return r;
}

function cString(buf, offset) {
  if (offset >= buf.length) return '';
  let end = offset;
  while (end < buf.length && buf[end] !== 0) end++;
  return buf.toString('latin1', offset, end);
}

/** Compares dotted versions numerically: '2.17' > '2.3.4' > '2.2.5'. */
function compareVersions(a, b) {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] || 0;
    const y = pb[i] || 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * Parses an ELF image held in a Buffer. `name` only labels error messages.
 * Returns {
 *   class: 32 | 64, endian: 'little' | 'big', type: 'DYN' | ..., machine, machineNumber,
 *   sections: [{ name, type, offset, size, link, info, entsize }],
 *   programHeaders: [{ type, flags, flagsOffset, offset, filesz }] (flagsOffset: where p_flags is in the file),
 *   interp: '/lib64/ld-linux-x86-64.so.2' | null (PT_INTERP: set in executables, not in libraries),
 *   executableStack: true | false | null (PT_GNU_STACK has PF_X; null: no PT_GNU_STACK),
 *   needed: ['libc.so.6', ...], soname,
 *   libraries: [{ name, offset }] (DT_NEEDED, with the file offset of each name),
 *   versionNeeds: [{ file, versions: [{ name, nameOffset, index, flags, hash }] }],
 *   versionDefs: [{ index, flags, names }],
 *   dynamicSymbols: [{ name, type, bind, visibility, defined, value, size, version, hidden }],
 *   exports: [names of defined GLOBAL/WEAK/UNIQUE symbols with default or protected visibility],
 *   exportSymbols: [{ name, nameEnd }] (the same, nameEnd: file offset just past the name's last byte),
 *   imports: [names of undefined non-local symbols],
 *   importSymbols: [{ name, nameEnd }] (the same, nameEnd: file offset just past the name's last byte),
 *   glibc: ['2.2.5', '2.3', ...] (GLIBC_x.y from version needs, numeric only, ascending),
 *   maxGlibc: '2.17' | null,
 * }
 */
function parseElf(buf, name) {
  const what = name || 'buffer';
  if (!Buffer.isBuffer(buf)) throw new TypeError('parseElf: expected a Buffer');
  if (buf.length < 16) throw fail('ERR_NOT_ELF', what + ': not an ELF file (' + buf.length + ' bytes, shorter than an ELF identification)');
  if (buf[0] !== 0x7f || buf[1] !== 0x45 || buf[2] !== 0x4c || buf[3] !== 0x46) {
    throw fail('ERR_NOT_ELF', what + ': not an ELF file (no \\x7fELF magic at offset 0)');
  }
  const eiClass = buf[4];
  const eiData = buf[5];
  if (eiClass !== 1 && eiClass !== 2) throw fail('ERR_NOT_ELF', what + ': unknown ELF class ' + eiClass);
  if (eiData !== 1 && eiData !== 2) throw fail('ERR_NOT_ELF', what + ': unknown ELF data encoding ' + eiData);
  const is64 = eiClass === 2;
  const little = eiData === 1;
  const r = makeReader(buf, little, is64, what);

  // ELF header: e_ident[16], e_type, e_machine, e_version, e_entry, e_phoff,
  // e_shoff, e_flags, e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx.
  const W = is64 ? 8 : 4;
  const eType = r.u16(16);
  const eMachine = r.u16(18);
  const ePhoff = r.word(24 + W);
  const eShoff = r.word(24 + 2 * W);
  const after = 24 + 3 * W + 4; // past e_flags
  const ePhentsize = r.u16(after + 2);
  const ePhnum = r.u16(after + 4);
  const eShentsize = r.u16(after + 6);
  let eShnum = r.u16(after + 8);
  let eShstrndx = r.u16(after + 10);

  // Program headers: Elf64_Phdr { p_type u32, p_flags u32, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align }
  // (words), Elf32_Phdr { p_type, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_flags, p_align } (all u32).
  const programHeaders = [];
  if (ePhoff !== 0 && ePhnum !== 0) {
    if (ePhentsize < (is64 ? 56 : 32)) throw fail('ERR_ELF_TRUNCATED', what + ': bad program header size ' + ePhentsize);
    r.check(ePhoff, ePhnum * ePhentsize);
    for (let i = 0; i < ePhnum; i++) {
      const o = ePhoff + i * ePhentsize;
      programHeaders.push({
        type: r.u32(o),
        flagsOffset: is64 ? o + 4 : o + 24,
        flags: is64 ? r.u32(o + 4) : r.u32(o + 24),
        offset: is64 ? r.u64(o + 8) : r.u32(o + 4),
        filesz: is64 ? r.u64(o + 32) : r.u32(o + 16),
      });
    }
  }
  let interp = null;
  let executableStack = null;
  for (let i = 0; i < programHeaders.length; i++) {
    const ph = programHeaders[i];
    if (ph.type === PT_INTERP) {
      r.check(ph.offset, ph.filesz);
      interp = cString(buf, ph.offset);
    } else if (ph.type === PT_GNU_STACK) {
      executableStack = (ph.flags & PF_X) !== 0;
    }
  }

  const sections = [];
  if (eShoff !== 0) {
    // Extended numbering: a count or string-table index too large for the
    // header lives in section 0's sh_size / sh_link.
    if (eShnum === 0) eShnum = r.word(eShoff + 8 + 3 * W);
    if (eShstrndx === 0xffff) eShstrndx = r.u32(eShoff + 8 + 4 * W);
    if (eShentsize < (is64 ? 64 : 40)) throw fail('ERR_ELF_TRUNCATED', what + ': bad section header size ' + eShentsize);
    r.check(eShoff, eShnum * eShentsize);
    for (let i = 0; i < eShnum; i++) {
      const o = eShoff + i * eShentsize;
      // sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info, sh_addralign, sh_entsize
      sections.push({
        nameOffset: r.u32(o),
        type: r.u32(o + 4),
        offset: r.word(o + 8 + 2 * W),
        size: r.word(o + 8 + 3 * W),
        link: r.u32(o + 8 + 4 * W),
        info: r.u32(o + 12 + 4 * W),
        entsize: r.word(o + 16 + 5 * W),
      });
    }
    const shstr = sections[eShstrndx];
    for (let i = 0; i < sections.length; i++) {
      const s = sections[i];
      s.name = shstr && shstr.type === SHT_STRTAB ? cString(buf, shstr.offset + s.nameOffset) : '';
      delete s.nameOffset;
    }
  }

  /** The file offset of string `offset` in string table section `tableIndex`. */
  function stringOffset(tableIndex, offset) {
    const t = sections[tableIndex];
    if (!t) throw fail('ERR_ELF_TRUNCATED', what + ': string table ' + tableIndex + ' does not exist');
    if (offset >= t.size) throw fail('ERR_ELF_TRUNCATED', what + ': string offset ' + offset + ' past its table');
    r.check(t.offset, t.size);
    return t.offset + offset;
  }

  function stringAt(tableIndex, offset) {
    return cString(buf, stringOffset(tableIndex, offset));
  }

  function firstOfType(type) {
    for (let i = 0; i < sections.length; i++) if (sections[i].type === type) return sections[i];
    return null;
  }

  // Version needs: Elf_Verneed { vn_version u16, vn_cnt u16, vn_file u32, vn_aux u32, vn_next u32 }
  // followed by Elf_Vernaux { vna_hash u32, vna_flags u16, vna_other u16, vna_name u32, vna_next u32 },
  // the same layout in ELF32 and ELF64. sh_info is the number of Verneed entries.
  const versionNames = {}; // versym index -> version name, for dynamicSymbols[].version
  const versionNeeds = [];
  const verneed = firstOfType(SHT_GNU_VERNEED);
  if (verneed) {
    let o = verneed.offset;
    for (let n = 0; n < verneed.info; n++) {
      const cnt = r.u16(o + 2);
      const entry = { file: stringAt(verneed.link, r.u32(o + 4)), versions: [] };
      let a = o + r.u32(o + 8);
      for (let k = 0; k < cnt; k++) {
        const nameOffset = stringOffset(verneed.link, r.u32(a + 8));
        const v = {
          name: cString(buf, nameOffset),
          nameOffset: nameOffset,
          index: r.u16(a + 6) & 0x7fff,
          flags: r.u16(a + 4),
          hash: r.u32(a),
        };
        entry.versions.push(v);
        versionNames[v.index] = v.name;
        const nextAux = r.u32(a + 12);
        if (nextAux === 0) break;
        a += nextAux;
      }
      versionNeeds.push(entry);
      const next = r.u32(o + 12);
      if (next === 0) break;
      o += next;
    }
  }

  // Version definitions (shared libraries that define versions, like libc):
  // Elf_Verdef { vd_version u16, vd_flags u16, vd_ndx u16, vd_cnt u16, vd_hash u32, vd_aux u32, vd_next u32 },
  // Elf_Verdaux { vda_name u32, vda_next u32 }. The first name is the version's own.
  const versionDefs = [];
  const verdef = firstOfType(SHT_GNU_VERDEF);
  if (verdef) {
    let o = verdef.offset;
    for (let n = 0; n < verdef.info; n++) {
      const def = { index: r.u16(o + 4), flags: r.u16(o + 2), names: [] };
      const cnt = r.u16(o + 6);
      let a = o + r.u32(o + 12);
      for (let k = 0; k < cnt; k++) {
        def.names.push(stringAt(verdef.link, r.u32(a)));
        const nextAux = r.u32(a + 4);
        if (nextAux === 0) break;
        a += nextAux;
      }
      if (def.names.length) versionNames[def.index] = def.names[0];
      versionDefs.push(def);
      const next = r.u32(o + 16);
      if (next === 0) break;
      o += next;
    }
  }

  // Dynamic symbols. Elf64_Sym: st_name u32, st_info u8, st_other u8, st_shndx u16, st_value u64, st_size u64.
  // Elf32_Sym: st_name u32, st_value u32, st_size u32, st_info u8, st_other u8, st_shndx u16.
  const dynamicSymbols = [];
  const exportsList = [];
  const exportSymbols = [];
  const imports = [];
  const importSymbols = [];
  const dynsym = firstOfType(SHT_DYNSYM);
  if (dynsym) {
    const size = dynsym.entsize || (is64 ? 24 : 16);
    const count = Math.floor(dynsym.size / size);
    const versym = firstOfType(SHT_GNU_VERSYM);
    r.check(dynsym.offset, count * size);
    for (let i = 0; i < count; i++) {
      const o = dynsym.offset + i * size;
      const nameOff = r.u32(o);
      const info = is64 ? r.u8(o + 4) : r.u8(o + 12);
      const other = is64 ? r.u8(o + 5) : r.u8(o + 13);
      const shndx = is64 ? r.u16(o + 6) : r.u16(o + 14);
      const value = is64 ? r.u64(o + 8) : r.u32(o + 4);
      const symSize = is64 ? r.u64(o + 16) : r.u32(o + 8);
      const bindNum = info >> 4;
      const typeNum = info & 0xf;
      const nameOffset = nameOff ? stringOffset(dynsym.link, nameOff) : null;
      const sym = {
        name: nameOffset === null ? '' : cString(buf, nameOffset),
        type: SYM_TYPES[typeNum] || typeNum,
        bind: SYM_BINDS[bindNum] || bindNum,
        visibility: SYM_VISIBILITY[other & 3],
        defined: shndx !== 0,
        value: value,
        size: symSize,
        version: null,
        hidden: false,
      };
      if (versym) {
        const raw = r.u16(versym.offset + i * 2);
        const idx = raw & 0x7fff;
        sym.hidden = (raw & 0x8000) !== 0;
        // 0 is *local*, 1 is *global* (unversioned); others name a version.
        if (idx > 1) sym.version = versionNames[idx] || null;
      }
      dynamicSymbols.push(sym);
      if (i === 0 || !sym.name || bindNum === 0) continue;
      if (!sym.defined) {
        imports.push(sym.name);
        importSymbols.push({ name: sym.name, nameEnd: nameOffset + sym.name.length });
      }
      else if (sym.visibility === 'DEFAULT' || sym.visibility === 'PROTECTED') {
        exportsList.push(sym.name);
        exportSymbols.push({ name: sym.name, nameEnd: nameOffset + sym.name.length });
      }
    }
  }

  // DT_NEEDED and DT_SONAME from the dynamic section (d_tag, d_val: two words each).
  const libraries = [];
  let soname = null;
  const dynamic = firstOfType(SHT_DYNAMIC);
  if (dynamic) {
    const size = 2 * W;
    for (let o = dynamic.offset; o + size <= dynamic.offset + dynamic.size; o += size) {
      const tag = r.word(o);
      if (tag === 0) break;
      if (tag === DT_NEEDED) {
        const offset = stringOffset(dynamic.link, r.word(o + W));
        libraries.push({ name: cString(buf, offset), offset: offset });
      }
      else if (tag === DT_SONAME) soname = stringAt(dynamic.link, r.word(o + W));
    }
  }

  const glibcSet = {};
  for (let i = 0; i < versionNeeds.length; i++) {
    const vs = versionNeeds[i].versions;
    for (let k = 0; k < vs.length; k++) {
      const m = /^GLIBC_(\d+(?:\.\d+)*)$/.exec(vs[k].name);
      if (m) glibcSet[m[1]] = true;
    }
  }
  const glibc = Object.keys(glibcSet).sort(compareVersions);

  return {
    class: is64 ? 64 : 32,
    endian: little ? 'little' : 'big',
    type: TYPES[eType] || eType,
    machine: MACHINES[eMachine] || eMachine,
    machineNumber: eMachine,
    sections: sections,
    programHeaders: programHeaders,
    interp: interp,
    executableStack: executableStack,
    needed: libraries.map(function (l) {
      return l.name;
    }),
    libraries: libraries,
    soname: soname,
    versionNeeds: versionNeeds,
    versionDefs: versionDefs,
    dynamicSymbols: dynamicSymbols,
    exports: exportsList,
    exportSymbols: exportSymbols,
    imports: imports,
    importSymbols: importSymbols,
    glibc: glibc,
    maxGlibc: glibc.length ? glibc[glibc.length - 1] : null,
  };
}

/** Reads and parses an ELF file (see parseElf). */
function readElf(file) {
  return parseElf(fs.readFileSync(file), file);
}

module.exports = { readElf, parseElf, compareVersions, MACHINES, EM_X86_64, EM_AARCH64, PT_GNU_STACK, PF_X };
