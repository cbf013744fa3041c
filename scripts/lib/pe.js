'use strict';
// A small PE/COFF reader, pure Node, for checking prebuilt Windows addons:
// which CPU a DLL is for, whether it is a DLL, the Windows versions its
// optional header asks for, the DLLs it imports (the import and delay-load
// import directories) and the names it exports (the export directory). Names
// come with their file offsets, so a test can patch exactly the bytes a check
// reads (check-prebuilds.js --self-test). Parses on Node 12 (no `?.`, `??` or
// `node:` specifiers).
//
//   const pe = require('./pe');
//   const info = pe.readPe('prebuilds/win32-x64/atomics-waitasync.node');
//   info.machine      'x64' | 'arm64' | ...
//   info.libraries    [{ name: 'KERNEL32.dll', kind: 'import', offset }, ...]
//
// Throws an Error with code 'ERR_NOT_PE' on anything that is not a PE image,
// and 'ERR_PE_TRUNCATED' when a header or directory points past the end of
// the file or outside every section.

const fs = require('fs');

// IMAGE_FILE_MACHINE_*: the names are Node's process.arch where there is one.
const MACHINES = {
  0x014c: 'ia32',
  0x01c4: 'arm',
  0x8664: 'x64',
  0xaa64: 'arm64',
  0xa641: 'arm64ec',
  0xa64e: 'arm64x',
};
const IMAGE_FILE_MACHINE_AMD64 = 0x8664;
const IMAGE_FILE_MACHINE_ARM64 = 0xaa64;

const IMAGE_FILE_DLL = 0x2000;
const PE32_MAGIC = 0x10b;
const PE32_PLUS_MAGIC = 0x20b;

const DIRECTORY_EXPORT = 0;
const DIRECTORY_IMPORT = 1;
const DIRECTORY_DELAY_IMPORT = 13;

function fail(code, message) {
  const error = new Error(message);
  error.code = code;
  return error;
}

/** A NUL-terminated string at `offset`. */
function cString(buf, offset) {
  let end = offset;
  while (end < buf.length && buf[end] !== 0) end++;
  return buf.toString('latin1', offset, end);
}

/**
 * Parses a PE image held in a Buffer. `name` only labels error messages.
 * Returns {
 *   machine: 'x64' | 'arm64' | 'ia32' | ... | <number>, machineNumber, isDll, characteristics,
 *   format: 'PE32+' | 'PE32',
 *   osVersion: '6.0', subsystemVersion: '6.0' (Major.Minor from the optional header),
 *   majorOperatingSystemVersion, majorSubsystemVersion, subsystem,
 *   fields: { machine, majorOperatingSystemVersion, majorSubsystemVersion } (their file offsets),
 *   sections: [{ name, virtualAddress, virtualSize, rawOffset, rawSize }],
 *   dllName: the export directory's own name | null,
 *   exportSymbols: [{ name, nameEnd, ordinal, forwarder }] (nameEnd: file offset just past the name),
 *   exports: [the names], unnamedExports: [ordinals exported by number only],
 *   libraries: [{ name, offset, kind: 'import' | 'delay', functions: ['CreateFileW', '#12', ...] }],
 * }
 */
function parsePe(buf, name) {
  const what = name || 'buffer';
  if (!Buffer.isBuffer(buf)) throw new TypeError('parsePe: expected a Buffer');
  if (buf.length < 64 || buf[0] !== 0x4d || buf[1] !== 0x5a) throw fail('ERR_NOT_PE', what + ': not a PE file (no MZ header)');

  function check(offset, size) {
    if (offset < 0 || offset + size > buf.length || !isFinite(offset)) {
      throw fail('ERR_PE_TRUNCATED', what + ': truncated or corrupt PE (wants ' + size + ' bytes at offset ' + offset + ', file has ' + buf.length + ')');
    }
  }
  function u16(o) {
    check(o, 2);
    return buf.readUInt16LE(o);
  }
  function u32(o) {
    check(o, 4);
    return buf.readUInt32LE(o);
  }

  // The DOS header's e_lfanew (at 0x3c) points to "PE\0\0", then the COFF file header:
  // Machine u16, NumberOfSections u16, TimeDateStamp, PointerToSymbolTable, NumberOfSymbols (u32s),
  // SizeOfOptionalHeader u16, Characteristics u16.
  const pe = u32(0x3c);
  if (u32(pe) !== 0x00004550) throw fail('ERR_NOT_PE', what + ': not a PE file (no PE signature at offset ' + pe + ')');
  const coff = pe + 4;
  const machineNumber = u16(coff);
  const numberOfSections = u16(coff + 2);
  const sizeOfOptionalHeader = u16(coff + 16);
  const characteristics = u16(coff + 18);

  // Optional header: the fields up to the subsystem versions sit at the same
  // offsets in PE32 and PE32+; the data directories follow NumberOfRvaAndSizes,
  // at 92 (PE32) or 108 (PE32+).
  const opt = coff + 20;
  const magic = u16(opt);
  if (magic !== PE32_MAGIC && magic !== PE32_PLUS_MAGIC) throw fail('ERR_NOT_PE', what + ': unknown optional header magic 0x' + magic.toString(16));
  const plus = magic === PE32_PLUS_MAGIC;
  const sizeOfHeaders = u32(opt + 60);
  const numberOfRvaAndSizes = u32(opt + (plus ? 108 : 92));
  const directoriesAt = opt + (plus ? 112 : 96);
  if (directoriesAt - opt + numberOfRvaAndSizes * 8 > sizeOfOptionalHeader) {
    throw fail('ERR_PE_TRUNCATED', what + ': ' + numberOfRvaAndSizes + ' data directories do not fit the optional header');
  }
  function directory(index) {
    if (index >= numberOfRvaAndSizes) return null;
    const rva = u32(directoriesAt + index * 8);
    const size = u32(directoriesAt + index * 8 + 4);
    return rva && size ? { rva: rva, size: size } : null;
  }

  // Section headers, 40 bytes each: Name[8], VirtualSize, VirtualAddress, SizeOfRawData, PointerToRawData, ...
  const sections = [];
  const sectionsAt = opt + sizeOfOptionalHeader;
  check(sectionsAt, numberOfSections * 40);
  for (let i = 0; i < numberOfSections; i++) {
    const s = sectionsAt + i * 40;
    let end = s;
    while (end < s + 8 && buf[end] !== 0) end++;
    sections.push({
      name: buf.toString('latin1', s, end),
      virtualSize: u32(s + 8),
      virtualAddress: u32(s + 12),
      rawSize: u32(s + 16),
      rawOffset: u32(s + 20),
    });
  }

  /** The file offset of an RVA, through the section that holds it. */
  function offsetOf(rva) {
    if (rva < sizeOfHeaders) return rva;
    for (let i = 0; i < sections.length; i++) {
      const s = sections[i];
      if (rva >= s.virtualAddress && rva < s.virtualAddress + Math.max(s.virtualSize, s.rawSize)) {
        const delta = rva - s.virtualAddress;
        // Past the raw data is zero-filled memory, not file bytes.
        if (delta >= s.rawSize) break;
        return s.rawOffset + delta;
      }
    }
    throw fail('ERR_PE_TRUNCATED', what + ': RVA 0x' + rva.toString(16) + ' is in no section');
  }
  function stringAt(rva) {
    const offset = offsetOf(rva);
    check(offset, 1);
    return { name: cString(buf, offset), offset: offset };
  }

  // Export directory (IMAGE_EXPORT_DIRECTORY): Characteristics, TimeDateStamp, Major/MinorVersion (u16s),
  // Name @12, Base @16, NumberOfFunctions @20, NumberOfNames @24, AddressOfFunctions @28,
  // AddressOfNames @32, AddressOfNameOrdinals @36. A function RVA inside the directory is a forwarder string.
  let dllName = null;
  const exportSymbols = [];
  const unnamedExports = [];
  const exportDir = directory(DIRECTORY_EXPORT);
  if (exportDir) {
    const e = offsetOf(exportDir.rva);
    check(e, 40);
    dllName = u32(e + 12) ? stringAt(u32(e + 12)).name : null;
    const base = u32(e + 16);
    const numberOfFunctions = u32(e + 20);
    const numberOfNames = u32(e + 24);
    const functions = numberOfFunctions ? offsetOf(u32(e + 28)) : 0;
    const names = numberOfNames ? offsetOf(u32(e + 32)) : 0;
    const ordinals = numberOfNames ? offsetOf(u32(e + 36)) : 0;
    check(functions, numberOfFunctions * 4);
    check(names, numberOfNames * 4);
    check(ordinals, numberOfNames * 2);
    const named = {};
    for (let i = 0; i < numberOfNames; i++) {
      const index = u16(ordinals + i * 2);
      if (index >= numberOfFunctions) throw fail('ERR_PE_TRUNCATED', what + ': export name ' + i + ' points at function ' + index + ' of ' + numberOfFunctions);
      named[index] = true;
      const exportName = stringAt(u32(names + i * 4));
      const rva = u32(functions + index * 4);
      const forwards = rva >= exportDir.rva && rva < exportDir.rva + exportDir.size;
      exportSymbols.push({
        name: exportName.name,
        nameEnd: exportName.offset + exportName.name.length,
        ordinal: base + index,
        forwarder: forwards ? stringAt(rva).name : null,
      });
    }
    // Slots with an address but no name are exported by ordinal only; zero slots are gaps.
    for (let i = 0; i < numberOfFunctions; i++) {
      if (!named[i] && u32(functions + i * 4) !== 0) unnamedExports.push(base + i);
    }
  }

  /** Names of the functions in an import lookup table: 8-byte (PE32+) or 4-byte thunks, 0-terminated. */
  function importedFunctions(tableRva) {
    const list = [];
    if (!tableRva) return list;
    const width = plus ? 8 : 4;
    for (let o = offsetOf(tableRva); ; o += width) {
      const low = u32(o);
      const high = plus ? u32(o + 4) : 0;
      if (low === 0 && high === 0) break;
      const byOrdinal = plus ? (high & 0x80000000) !== 0 : (low & 0x80000000) !== 0;
      // A hint/name entry: Hint u16, then the name.
      list.push(byOrdinal ? '#' + (low & 0xffff) : stringAt((low & 0x7fffffff) + 2).name);
    }
    return list;
  }

  // Import directory: 20-byte IMAGE_IMPORT_DESCRIPTORs (OriginalFirstThunk, TimeDateStamp,
  // ForwarderChain, Name, FirstThunk), ended by an all-zero one.
  const libraries = [];
  const importDir = directory(DIRECTORY_IMPORT);
  if (importDir) {
    for (let d = offsetOf(importDir.rva); ; d += 20) {
      check(d, 20);
      const nameRva = u32(d + 12);
      if (nameRva === 0 && u32(d) === 0 && u32(d + 16) === 0) break;
      const library = stringAt(nameRva);
      libraries.push({ name: library.name, offset: library.offset, kind: 'import', functions: importedFunctions(u32(d) || u32(d + 16)) });
    }
  }
  // Delay-load imports: 32-byte IMAGE_DELAYLOAD_DESCRIPTORs (Attributes, DllNameRVA, ModuleHandleRVA,
  // ImportAddressTableRVA, ImportNameTableRVA, ...), ended by an all-zero one. Loaded on first call,
  // but as much a dependency as the others.
  const delayDir = directory(DIRECTORY_DELAY_IMPORT);
  if (delayDir) {
    for (let d = offsetOf(delayDir.rva); ; d += 32) {
      check(d, 32);
      const nameRva = u32(d + 4);
      if (nameRva === 0) break;
      const library = stringAt(nameRva);
      libraries.push({ name: library.name, offset: library.offset, kind: 'delay', functions: importedFunctions(u32(d + 16)) });
    }
  }

  return {
    machine: MACHINES[machineNumber] || machineNumber,
    machineNumber: machineNumber,
    isDll: (characteristics & IMAGE_FILE_DLL) !== 0,
    characteristics: characteristics,
    format: plus ? 'PE32+' : 'PE32',
    osVersion: u16(opt + 40) + '.' + u16(opt + 42),
    subsystemVersion: u16(opt + 48) + '.' + u16(opt + 50),
    majorOperatingSystemVersion: u16(opt + 40),
    majorSubsystemVersion: u16(opt + 48),
    subsystem: u16(opt + 68),
    fields: { machine: coff, majorOperatingSystemVersion: opt + 40, majorSubsystemVersion: opt + 48 },
    sections: sections,
    dllName: dllName,
    exportSymbols: exportSymbols,
    exports: exportSymbols.map(function (s) {
      return s.name;
    }),
    unnamedExports: unnamedExports,
    libraries: libraries,
  };
}

/** Reads and parses a PE file (see parsePe). */
function readPe(file) {
  return parsePe(fs.readFileSync(file), file);
}

module.exports = { readPe, parsePe, IMAGE_FILE_MACHINE_AMD64, IMAGE_FILE_MACHINE_ARM64 };
