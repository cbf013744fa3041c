#!/usr/bin/env node
'use strict';
// The package as published, made in a folder: every file `npm pack` takes
// from this checkout (its own list, `npm pack --dry-run`), as it is, but
// index.js. The published index.js is the load path in one file: index.js
// and the files a thread loads with it (LOAD_PATH), each wrapped as Node
// wraps a module, their comments taken out line for line
// (scripts/lib/strip-comments.js). A thread then reads and compiles one
// file where it read six; the files of lib/ that load later, at a first
// class or install(), find these modules in require.cache under their own
// names, as though each had been required (the loader's code is LOADER
// below). The other files ship as they are, comments and all.
//
//   node scripts/stage.js <folder>            make the package in <folder> (emptied first)
//   node scripts/stage.js --pack [<folder>]   and `npm pack` it there: the tarball to publish
//
// Publish the tarball (`npm publish <tarball>`), not the checkout: a
// checkout packed as it is works the same, loading six files.

const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { stripComments } = require('./lib/strip-comments');

const ROOT = path.join(__dirname, '..');

// What `require('atomics-waitasync')` loads: index.js first, then the rest
// in no particular order (a module runs at its first require, as ever).
// lib/pending.js loads in a worker only. __test__/packaging/stage.spec.js
// checks that a thread of the staged package loads no other file of it.
const LOAD_PATH = ['index.js', 'binding.js', 'lib/platform.js', 'lib/describe.js', 'lib/atomics.js', 'lib/pending.js'];

// The published index.js runs this after `sources` (each file's code as a
// function of Node's module wrapper's arguments). Node 12 syntax; ASCII.
const LOADER = `
var path = require('path');
// Node's module cache (Bun's and Deno's too), where the files of lib/ that
// load later find these modules. Where require.cache is another's (a test
// runner's own registry), the files themselves are required instead.
// (Node's Module is this module's constructor: require('module') would load
// the public module builtin, which costs more than the rest.)
var isModuleOfCache = function (M) { return typeof M === 'function' && M._cache === require.cache; };
var Module = isModuleOfCache(module.constructor) ? module.constructor : require('module');
var cache = isModuleOfCache(Module) ? require.cache : null;
var files = {};
for (var name in sources) files[path.join(__dirname, name)] = sources[name];

/** The require of a module of the bundle in folder dir. */
function requireFrom(dir) {
  return function require_(specifier) {
    if (specifier.charAt(0) !== '.') return require(specifier);
    var filename = path.join(dir, specifier);
    return files[filename] === undefined ? require(filename) : load(filename);
  };
}

/** A module of the bundle, as Module._load would make it: cached first, uncached if it throws. */
function load(filename) {
  if (cache === null) return require(filename);
  var cached = cache[filename];
  if (cached !== undefined) return cached.exports;
  var dir = path.dirname(filename);
  var made = new Module(filename, module);
  made.filename = filename;
  made.paths = dir === __dirname ? module.paths : [path.join(dir, 'node_modules')].concat(module.paths);
  cache[filename] = made;
  try {
    files[filename].call(made.exports, made.exports, requireFrom(dir), made, filename, dir);
  } catch (error) {
    delete cache[filename];
    throw error;
  }
  made.loaded = true;
  return made.exports;
}

sources['index.js'].call(module.exports, module.exports, requireFrom(__dirname), module, __filename, __dirname);
`;

/** The published index.js: the LOAD_PATH files of `root`, comments out, wrapped, and LOADER. */
function bundle(root = ROOT) {
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  let out = "'use strict';\n" +
    `// atomics-waitasync ${version}, as published: index.js and the files a thread\n` +
    `// loads with it (${LOAD_PATH.slice(1).join(', ')}),\n` +
    '// in one file, their comments taken out; made by scripts/stage.js from the\n' +
    "// repository's sources, where each file is whole. The package's other\n" +
    '// files are as in the repository.\n' +
    'var sources = {};\n';
  for (const name of LOAD_PATH) {
    const source = fs.readFileSync(path.join(root, name), 'utf8');
    if (/[^\x00-\x7f]/.test(source)) throw new Error(`${name} is not ASCII`);
    const code = stripComments(source, name).replace(/^\n+/, '').replace(/\n+$/, '');
    // In parentheses: V8 compiles such a function with the file, where it
    // would otherwise scan its text twice (once as the file is compiled,
    // again at its first call). Each is called as the package loads.
    out += `sources[${JSON.stringify(name)}] = (function (exports, require, module, __filename, __dirname) {\n${code}\n});\n`;
  }
  return out + LOADER.replace(/^\n/, '');
}

/** What `npm pack` takes from `root`: paths relative to it. */
function packedFiles(root = ROOT) {
  const run = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`npm pack --dry-run failed:\n${run.stderr}`);
  return JSON.parse(run.stdout.slice(run.stdout.indexOf('[')))[0].files.map((f) => f.path);
}

/** Makes the package as published in `dest` (emptied first); returns `dest`. */
function stage(dest, root = ROOT) {
  const index = bundle(root);
  const files = packedFiles(root);
  fs.rmSync(dest, { recursive: true, force: true });
  for (const file of files) {
    const to = path.join(dest, file);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(path.join(root, file), to);
  }
  fs.writeFileSync(path.join(dest, 'index.js'), index);
  return dest;
}

function main(argv) {
  const pack = argv.includes('--pack');
  const rest = argv.filter((a) => a !== '--pack');
  if (rest.length > 1 || (!pack && rest.length !== 1) || rest.some((a) => a.startsWith('-'))) {
    console.error('usage: node scripts/stage.js <folder> | --pack [<folder>]');
    process.exit(2);
  }
  const dest = path.resolve(rest[0] || fs.mkdtempSync(path.join(os.tmpdir(), 'atomics-waitasync-stage-')));
  stage(dest);
  console.log(`staged: ${dest}`);
  if (pack) {
    const run = spawnSync('npm', ['pack', '--ignore-scripts', '--loglevel=error', '--pack-destination', ROOT], {
      cwd: dest,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (run.status !== 0) process.exit(run.status || 1);
    console.log(`packed: ${path.join(ROOT, run.stdout.trim().split('\n').pop())}`);
  }
}

module.exports = { LOAD_PATH, bundle, stage, packedFiles };

if (require.main === module) main(process.argv.slice(2));
