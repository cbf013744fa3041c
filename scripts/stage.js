#!/usr/bin/env node
'use strict';
// The package as published, made in a folder: every file `npm pack` takes
// from this checkout (its own list, `npm pack --dry-run`), as it is, but
// index.js, which becomes two files:
//
//   index.bundle.js  the load path in one file: index.js and the files a
//                    thread loads with it (LOAD_PATH), each wrapped as Node
//                    wraps a module, their comments taken out line for line
//                    (scripts/lib/strip-comments.js). The files of lib/ that
//                    load later, at a first class or install(), find these
//                    modules in require.cache under their own names, as
//                    though each had been required (LOADER below).
//   index.js         LOADING below: compiles index.bundle.js with V8's code
//                    cache, kept in the package's .code-cache/ folder, where
//                    Node's own loader would compile its text every time.
//
// A thread then reads one file (and its code cache) where the checkout has
// it compile six. The other files ship as they are, comments and all.
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

// By its own name: __filename is index.bundle.js's where this file runs as a
// module of its own, and a bundler's output file where one took it in.
sources['index.js'].call(module.exports, module.exports, requireFrom(__dirname), module, path.join(__dirname, 'index.js'), __dirname);
`;

// The published index.js. Node 12 syntax; ASCII. ${version} is the package's.
const LOADING = `'use strict';
// atomics-waitasync \${version}, as published: the code is index.bundle.js
// (made by scripts/stage.js from the repository's sources), which this file
// compiles with V8's code cache. Node compiles a file's text at every load,
// and compiling is most of what a thread pays to load the package; from
// the cache, V8 reads the compiled code (the functions that ran as the
// package loaded, too) in a tenth of the time. The cache is written on a
// load that finds none (or one made from another bundle, or one whose two
// copies of V8's data differ, or, unless it is new, one V8 does not take),
// beside the code, in .code-cache/ in this folder, one file per (V8
// version, system, CPU, options that may set V8's flags); written to a
// temporary name and renamed, so that no thread reads half of one. Where the folder cannot be
// written (read-only), nothing is cached and the package loads as it would
// without. ATOMICS_WAITASYNC_CODE_CACHE=0 turns the cache off.
// Off Node (Bun, Deno), and where Node's own loader did not load this file
// (a test runner's registry, which may run it in a context of its own), the
// bundle is required as the module it also is.
var fs = require('fs');
var path = require('path');

var BUNDLE = path.join(__dirname, 'index.bundle.js');
var CACHE_DIR = path.join(__dirname, '.code-cache');

// (This code runs once a thread, cold: a few statements, no loop, and one
// function, for the load that writes the cache.)

/**
 * Writes \`file\`: the bundle's bytes, then the script's code cache twice;
 * unless anything fails. Made under a temporary name of this thread's own,
 * created here (not a file or link that is there already), readable by all
 * and written by its owner only, whatever the umask allows; then renamed.
 * Where the folder cannot be written, nothing more is done: the cache
 * costs a thread more than the checks. (Made before the file is: a worker
 * terminated while V8 makes it leaves no file behind.)
 */
function writeCache(script, file, bytes) {
  var temporary = file + '.' + process.pid + '.' + Math.random().toString(36).slice(2) + '.tmp';
  var fd = -1;
  try {
    // One level, in the package's own folder. (Not { recursive: true }: on
    // a file system whose mkdir says ENOENT under a folder that exists, as
    // /proc's does, Node's recursive mkdir retries for ever.)
    try {
      fs.mkdirSync(CACHE_DIR, 493); // 0o755
    } catch (error) {
      if (!error || error.code !== 'EEXIST') throw error;
    }
    fs.accessSync(CACHE_DIR, fs.constants.W_OK);
    var data = script.createCachedData();
    fd = fs.openSync(temporary, 'wx', 420); // 0o644
    var whole = fs.writeSync(fd, bytes) === bytes.length && fs.writeSync(fd, data) === data.length &&
      fs.writeSync(fd, data) === data.length;
    var open = fd;
    fd = -2; // (closed, or its number given back, even where close fails)
    fs.closeSync(open);
    if (!whole) throw new Error('short write');
    fs.renameSync(temporary, file);
  } catch (error) {
    if (fd >= 0) {
      try {
        fs.closeSync(fd);
      } catch (ignored) {
        // Its number is given back all the same.
      }
    }
    if (fd !== -1) {
      try {
        fs.unlinkSync(temporary);
      } catch (ignored) {
        // Renamed after all.
      }
    }
  }
}

// Node's own loader loaded this file, in the context vm runs code in.
// (Buffer's latin1Slice, without the JavaScript of toString and compare
// around it, which a thread would compile first.)
var Module = module.constructor;
var bytes = null;
if (typeof Module === 'function' && Module._cache === require.cache && module instanceof Module &&
    typeof process.versions.v8 === 'string' && !process.versions.bun && !process.versions.deno &&
    process.env.ATOMICS_WAITASYNC_CODE_CACHE !== '0') {
  bytes = fs.readFileSync(BUNDLE);
  if (typeof bytes.latin1Slice !== 'function') bytes = null;
}

if (bytes !== null) {
  // The options that may set V8's flags (the command line's and
  // NODE_OPTIONS's; not the code of -e), in the cache's name, so that
  // processes run with other flags, whose cache V8 would not take, keep one
  // of their own.
  var options = process.execArgv.length === 0 && !process.env.NODE_OPTIONS ? [] : process.execArgv
    .concat(String(process.env.NODE_OPTIONS || '').split(' '))
    .filter(RegExp.prototype.test, /^--/);
  var cacheFile = path.join(CACHE_DIR, process.versions.v8 + '-' + process.platform + '-' + process.arch +
    (options.length === 0 ? '' : '-' + encodeURIComponent(options.join('_')).split('*').join('_').slice(0, 120)) + '.cache');
  var cached = null;
  try {
    cached = fs.readFileSync(cacheFile);
  } catch (error) {
    // None yet: this load writes it.
  }
  // The bundle, ASCII. A cache holds the bundle it was made from, byte for
  // byte (V8 itself checks only a text's length), then V8's data twice:
  // V8 checks its data's header, not the rest (a release build keeps no
  // checksum), where a changed bit can crash the process or run other code.
  // Taken only when the bundle is this one and the copies agree.
  var source = bytes.latin1Slice(0, bytes.length);
  var size = cached === null ? 0 : (cached.length - bytes.length) / 2;
  var data = size > 0 && size === Math.floor(size) && cached.latin1Slice(0, bytes.length) === source &&
    cached.latin1Slice(bytes.length, bytes.length + size) === cached.latin1Slice(bytes.length + size, cached.length)
    ? new Uint8Array(cached.buffer, cached.byteOffset + bytes.length, size)
    : undefined;
  var vm = require('vm');
  // The bundle as the body of a function of the module wrapper's
  // arguments, its lines where they are in the file.
  var script = new vm.Script('(function (exports, require, module, __filename, __dirname) {' + source + '\\n})', {
    filename: BUNDLE,
    cachedData: data,
  });
  script.runInThisContext().call(module.exports, module.exports, require, module, __filename, __dirname);
  // A cache V8 refused (made under other flags, where the options in its
  // name do not tell: a worker started with other execArgv, or flags set
  // as the program runs) is made anew, unless it was made in the last ten
  // minutes: two kinds of process that share a name would otherwise each
  // remake it at every load.
  if (data === undefined) {
    writeCache(script, cacheFile, bytes);
  } else if (script.cachedDataRejected) {
    var made = 0;
    try {
      made = fs.statSync(cacheFile).mtimeMs;
    } catch (error) {
      // Gone: remade below.
    }
    // (A time of change ahead of the clock, from a copy or another
    // machine's clock, counts as old.)
    var age = Date.now() - made;
    if (!(age >= 0 && age < 600000)) writeCache(script, cacheFile, bytes);
  }
} else {
  module.exports = require('./index.bundle.js');
}
`;

/** The published index.bundle.js: the LOAD_PATH files of `root`, comments out, wrapped, and LOADER. */
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
    // index.js runs the bundle through vm.Script, which has no loader for import().
    if (/\bimport\s*\(/.test(stripComments(source, name))) throw new Error(`${name} calls import(), which the bundle cannot`);
    const code = stripComments(source, name).replace(/^\n+/, '').replace(/\n+$/, '');
    // In parentheses: V8 compiles such a function with the file, where it
    // would otherwise scan its text twice (once as the file is compiled,
    // again at its first call). Each is called as the package loads.
    out += `sources[${JSON.stringify(name)}] = (function (exports, require, module, __filename, __dirname) {\n${code}\n});\n`;
  }
  return out + LOADER.replace(/^\n/, '');
}

/** The published index.js, which compiles index.bundle.js with its code cache. */
function loading(root = ROOT) {
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  // Its comments are here, not in the package: a thread compiles the file.
  const code = stripComments(LOADING, 'index.js').replace(/\n{3,}/g, '\n\n');
  return code.replace("'use strict';\n", `'use strict';\n// atomics-waitasync ${version}: compiles index.bundle.js with V8's code cache (scripts/stage.js).\n`);
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
  fs.writeFileSync(path.join(dest, 'index.bundle.js'), index);
  fs.writeFileSync(path.join(dest, 'index.js'), loading(root));
  return dest;
}

/**
 * Makes the package as published in `dest` with this checkout's build as
 * the prebuilt binary of this platform, in prebuilds/<tag>/, where an
 * install has it (for the tests and the cold benchmark); returns `dest`.
 */
function stageWithLocalBuild(dest, root = ROOT) {
  const built = path.join(root, 'atomics-waitasync.node');
  if (!fs.existsSync(built)) throw new Error(`${built} does not exist: build the addon first (node scripts/build.js)`);
  stage(dest, root);
  const platform = require('../lib/platform');
  const text = (file) => {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch (error) {
      return null;
    }
  };
  const report = () => (process.report ? process.report.getReport() : null);
  const libc = platform.detectLibc(process.platform, () => null, report, () => null, text);
  const folder = path.join(dest, 'prebuilds', platform.platformTag(process.platform, process.arch, libc));
  fs.mkdirSync(folder, { recursive: true });
  fs.copyFileSync(built, path.join(folder, 'atomics-waitasync.node'));
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

module.exports = { LOAD_PATH, bundle, loading, stage, stageWithLocalBuild, packedFiles };

if (require.main === module) main(process.argv.slice(2));
