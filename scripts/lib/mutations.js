'use strict';
// Broken copies of a real binary, one defect each, for
// `check-prebuilds.js --self-test`: a check that never fails proves
// nothing, so each of these must make it fail, with the problem `expect`
// matches. Every defect is patched into the very bytes the check reads
// (offsets from scripts/lib/elf.js, macho.js, pe.js), not searched for in
// the file, so a check reading the wrong table would not fail and would be
// caught. Mach-O copies other than the flipped-page one get their page hashes
// recomputed, so that their signature stays valid and only the intended
// check can fail. Parses on Node 12 (no `?.`, `??` or `node:` specifiers).
//
//   casesFor(buffer, 'elf' | 'macho' | 'pe', { platform, arch, libc }, { entry, sharedCore })
//     -> [{ name, expect: RegExp | null (must pass), bytes: Buffer, target?: checked as this folder instead }]

const path = require('path');
const elf = require('./elf');
const macho = require('./macho');
const pe = require('./pe');

const { EM_X86_64, EM_AARCH64, PT_GNU_STACK, PF_X } = elf;
// A minimum macOS / Windows no limit of the package allows.
const MACOS_14 = 14 << 16;
const WINDOWS_11 = 11;

/** Overwrites the NUL-terminated string at `offset` (`length` bytes now) with a shorter or equal one. */
function writeString(buf, offset, length, text) {
  if (text.length > length) throw new Error('cannot write "' + text + '" over a ' + length + '-byte string');
  buf.write(text, offset, 'latin1');
  if (text.length < length) buf[offset + text.length] = 0;
}

/** The name's last character, replaced: napi_register_module_v1 -> ..._v2. */
function renameLast(buf, nameEnd, character) {
  buf[nameEnd - 1] = character.charCodeAt(0);
}

function find(list, name) {
  for (let i = 0; i < list.length; i++) if (list[i].name === name) return list[i];
  return null;
}

/** Recomputes every code slot of every code directory, as a re-signing would. */
function rehashPages(buf) {
  const info = macho.parseMachO(buf, 'mutated copy');
  const sig = info.codeSignature;
  if (!sig) return;
  for (let i = 0; i < sig.codeDirectories.length; i++) {
    const cd = sig.codeDirectories[i];
    for (let page = 0; page < cd.nCodeSlots; page++) {
      const digest = macho.pageHash(buf, cd, page);
      if (digest) digest.copy(buf, cd.hashesOffset + page * cd.hashSize);
    }
  }
}

/**
 * The export cases of a format whose export names sit in the file as plain
 * strings (ELF's .dynstr, PE's export directory): the entry point renamed
 * `..._v2`, and the shared core's export renamed `..._v9`, an export beyond
 * the allowed ones.
 */
function exportCases(exportSymbols, where, symbols, add) {
  const entry = find(exportSymbols, symbols.entry);
  if (entry) {
    add('entry point renamed ' + where, new RegExp('^does not export ' + symbols.entry), function (buf) {
      renameLast(buf, entry.nameEnd, '2');
    });
  }
  const core = find(exportSymbols, symbols.sharedCore);
  if (core) {
    add('an export beyond the allowed ones', /^exports \d+ symbols? besides /, function (buf) {
      renameLast(buf, core.nameEnd, '9');
    });
  }
}

function elfCases(original, target, symbols, add) {
  const info = elf.parseElf(original, 'original');
  const little = info.endian === 'little';
  add('wrong CPU (e_machine)', /^CPU is /, function (buf) {
    const other = info.machineNumber === EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
    if (little) buf.writeUInt16LE(other, 18);
    else buf.writeUInt16BE(other, 18);
  });
  exportCases(info.exportSymbols, 'in .dynstr', symbols, add);
  const napiImport = info.importSymbols.filter(function (s) {
    return /^napi_/.test(s.name);
  })[0];
  if (napiImport) {
    const renamed = napiImport.name.slice(0, -1) + 'Z';
    add('an N-API import Node 12.22 lacks (' + napiImport.name + ' -> ' + renamed + ')', /^imports N-API /, function (buf) {
      renameLast(buf, napiImport.nameEnd, 'Z');
    });
  }
  const library = info.libraries[0];
  if (library) {
    const name = library.name.length >= 'libnode.so'.length ? 'libnode.so' : 'libnode';
    if (library.name.length >= name.length) {
      add('extra import (DT_NEEDED ' + library.name + ' -> ' + name + ')', new RegExp('^links ' + name + ', not a system library'), function (buf) {
        writeString(buf, library.offset, library.name.length, name);
      });
    }
  }
  for (let i = 0; i < info.programHeaders.length; i++) {
    const ph = info.programHeaders[i];
    if (ph.type !== PT_GNU_STACK) continue;
    add('executable stack (PF_X on PT_GNU_STACK)', /executable stack/, function (buf) {
      if (little) buf.writeUInt32LE(ph.flags | PF_X, ph.flagsOffset);
      else buf.writeUInt32BE(ph.flags | PF_X, ph.flagsOffset);
    });
  }
  if (target.libc === 'gnu') {
    // GLIBC_2.34 is as long as GLIBC_2.17 and fits over GLIBC_2.2.5 too.
    const newer = 'GLIBC_2.34';
    let version = null;
    for (let i = 0; i < info.versionNeeds.length && !version; i++) {
      const vs = info.versionNeeds[i].versions;
      for (let k = 0; k < vs.length; k++) {
        if (/^GLIBC_/.test(vs[k].name) && vs[k].name.length >= newer.length) {
          version = vs[k];
          break;
        }
      }
    }
    if (version) {
      add('newer glibc (' + version.name + ' -> ' + newer + ')', /^needs GLIBC_2\.34 /, function (buf) {
        writeString(buf, version.nameOffset, version.name.length, newer);
      });
    }
    if (info.glibc.length) {
      add('this glibc build checked as musl', /^a musl binary that needs glibc/, null, Object.assign({}, target, { libc: 'musl' }));
    }
  }
}

function machoCases(original, target, symbols, add) {
  const info = macho.parseMachO(original, 'original');
  const signed = !!info.codeSignature;
  // Every defect but the flipped page keeps a valid signature.
  function resigned(patch) {
    return function (buf) {
      patch(buf);
      if (signed) rehashPages(buf);
    };
  }
  add(
    'wrong CPU (cputype)',
    /^CPU is /,
    resigned(function (buf) {
      const toArm = info.cputype !== macho.CPU_TYPE_ARM64;
      buf.writeUInt32LE(toArm ? macho.CPU_TYPE_ARM64 : macho.CPU_TYPE_X86_64, 4);
      // CPU_SUBTYPE_ARM64_ALL / CPU_SUBTYPE_X86_64_ALL, so that it reads as a plain CPU of the other kind.
      buf.writeUInt32LE(toArm ? 0 : 3, 8);
    })
  );
  if (info.minOs) {
    add(
      'newer minimum macOS (' + info.minOs.command + ' ' + info.minOs.version + ' -> 14.0)',
      /^minimum macOS 14\.0 /,
      resigned(function (buf) {
        buf.writeUInt32LE(MACOS_14, info.minOs.offset);
      })
    );
  }
  const text = find(
    [].concat.apply(
      [],
      info.segments.map(function (s) {
        return s.sections;
      })
    ),
    '__text'
  );
  if (signed && text && text.size) {
    const at = text.offset + Math.floor(text.size / 2);
    add('one byte flipped in a signed page (__text)', /^code signature: .*page hashes do not match/, function (buf) {
      buf[at] ^= 0xff;
    });
  }
  const trie = info.exportTrie || [];
  const entry = find(trie, '_' + symbols.entry);
  if (entry) {
    add(
      'entry point renamed in the export trie',
      new RegExp('^does not export ' + symbols.entry),
      resigned(function (buf) {
        renameLast(buf, entry.nameEnd, '2');
      })
    );
  }
  const core = find(trie, '_' + symbols.sharedCore);
  if (core) {
    add(
      'an export beyond the allowed ones',
      /^exports \d+ symbols? besides /,
      resigned(function (buf) {
        renameLast(buf, core.nameEnd, '9');
      })
    );
  }
  let library = null;
  for (let i = 0; i < info.libraries.length && !library; i++) {
    if (/^\/(usr|System)\//.test(info.libraries[i].name)) library = info.libraries[i];
  }
  if (library) {
    const moved = library.name.replace(/^\/(usr|System)\//, '/opt/');
    add(
      'extra import (' + library.name + ' -> ' + moved + ')',
      /^links \/opt\/.*, not a system library/,
      resigned(function (buf) {
        writeString(buf, library.offset, library.name.length, moved);
      })
    );
  }
  const id = info.installName;
  if (id) {
    const absolute = ('/b/' + path.posix.basename(id.name)).slice(0, id.name.length);
    add(
      'absolute install name (' + absolute + ')',
      /^install name \//,
      resigned(function (buf) {
        writeString(buf, id.offset, id.name.length, absolute);
      })
    );
  }
}

function peCases(original, target, symbols, add) {
  const info = pe.parsePe(original, 'original');
  add('wrong CPU (Machine)', /^CPU is /, function (buf) {
    buf.writeUInt16LE(
      info.machineNumber === pe.IMAGE_FILE_MACHINE_ARM64 ? pe.IMAGE_FILE_MACHINE_AMD64 : pe.IMAGE_FILE_MACHINE_ARM64,
      info.fields.machine
    );
  });
  add('newer Windows (MajorSubsystemVersion ' + info.majorSubsystemVersion + ' -> 11)', /^subsystem version 11\./, function (buf) {
    buf.writeUInt16LE(WINDOWS_11, info.fields.majorSubsystemVersion);
  });
  add('newer Windows (MajorOperatingSystemVersion ' + info.majorOperatingSystemVersion + ' -> 11)', /^OS version 11\./, function (buf) {
    buf.writeUInt16LE(WINDOWS_11, info.fields.majorOperatingSystemVersion);
  });
  exportCases(info.exportSymbols, 'in the export directory', symbols, add);
  const library = info.libraries[0];
  if (library && library.name.length >= 'node.exe'.length) {
    add('extra import (' + library.name + ' -> node.exe)', /^links node\.exe.*, not a system library/, function (buf) {
      writeString(buf, library.offset, library.name.length, 'node.exe');
    });
  }
}

const CASES = { elf: elfCases, macho: machoCases, pe: peCases };

/** The unchanged binary (which must pass) and every defect that applies to its format. */
function casesFor(original, format, target, symbols) {
  const cases = [{ name: 'unchanged', expect: null, bytes: original }];
  function add(name, expect, patch, otherTarget) {
    const bytes = Buffer.from(original);
    if (patch) patch(bytes);
    cases.push({ name: name, expect: expect, bytes: bytes, target: otherTarget || null });
  }
  if (!CASES[format]) throw new Error('no mutations for format ' + format);
  CASES[format](original, target, symbols, add);
  return cases;
}

module.exports = { casesFor };
