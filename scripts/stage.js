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

// What a thread loads later, at its first class of the family, query() or
// deadlock switch: lib.bundle.js, which index.js compiles with a code
// cache of its own at the first require of one of these files from the
// load path. (Not the polyfill's files, which cost a thread less than this
// bundle's cache would; not lib/async-mutex.js, which async-mutex.js
// requires from its own file.)
const LATER = [
  'lib/core.js', 'lib/diagnostics.js', 'lib/owned-word.js', 'lib/line.js', 'lib/tracking.js', 'lib/async-lock.js',
  'lib/condition.js', 'lib/latch.js', 'lib/semaphore.js', 'lib/signal-count.js', 'lib/signal-semaphore.js',
  'lib/barrier.js', 'lib/rwlock.js', 'lib/query.js',
];

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
/** Makes the modules of a bundle (by name, relative to the package) modules of this one. */
var register = function (modules) {
  for (var name in modules) files[path.join(__dirname, name)] = modules[name];
};
register(sources);

// The files of lib.bundle.js (LATER), and index.js's function that runs it
// with its code cache: runLater(use) calls use(sources), sources null where
// the bundle cannot be read (lib's files then load themselves). Null once
// called, and where this file runs as a module of its own.
var LATER = /*LATER*/;
var runLater = typeof arguments !== 'undefined' && arguments.length > 5 && typeof arguments[5] === 'function' ? arguments[5] : null;

/** The require of a module of the bundle in folder dir. */
function requireFrom(dir) {
  return function require_(specifier) {
    if (specifier.charAt(0) !== '.') return require(specifier);
    var filename = path.join(dir, specifier);
    if (files[filename] === undefined && runLater !== null &&
        LATER.indexOf(path.relative(__dirname, filename).split(path.sep).join('/')) >= 0) {
      return loadLater(filename);
    }
    return files[filename] === undefined ? require(filename) : load(filename);
  };
}

/**
 * The module \`filename\` of lib.bundle.js, whose modules join this bundle's
 * as it runs. (In parentheses, as is its function: compiled with the file,
 * and so in its code cache.)
 */
var loadLater = (function loadLater(filename) {
  var run = runLater;
  runLater = null;
  return run((function (later) {
    if (later !== null) register(later);
    return files[filename] === undefined ? require(filename) : load(filename);
  }));
});

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

/**
 * Runs \`bundle\` (the bytes of <name>.bundle.js, a module's code) as the
 * module \`target\`, compiled with its code cache; then \`use(target.exports)\`
 * where \`use\` is given, so that the cache, written after, holds what that
 * compiled too; returns what \`use\` returned.
 */
var runBundle = (function runBundle(name, bytes, target, use) {
  var cacheFile = path.join(CACHE_DIR, name + '-' + CACHE_KEY + '.cache');
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
  // The bundle as the body of a function of the module wrapper's
  // arguments (and runLater), its lines where they are in the file.
  var script = new vm.Script('(function (exports, require, module, __filename, __dirname) {' + source + '\\n})', {
    filename: path.join(__dirname, name + '.bundle.js'),
    cachedData: data,
  });
  script.runInThisContext().call(target.exports, target.exports, require, target, __filename, __dirname, runLater);
  var result = use === null ? undefined : use(target.exports);
  // A cache V8 refused (made under other flags, where the options in its
  // name do not tell: a worker started with other execArgv, or flags set
  // as the program runs) is made anew, unless it was made in the last ten
  // minutes: two kinds of process that share a name would otherwise each
  // remake it at every load.
  var write = data === undefined;
  if (!write && script.cachedDataRejected) {
    var made = 0;
    try {
      made = fs.statSync(cacheFile).mtimeMs;
    } catch (error) {
      // Gone: remade below.
    }
    // (A time of change ahead of the clock, from a copy or another
    // machine's clock, counts as old.)
    var age = Date.now() - made;
    write = !(age >= 0 && age < 600000);
  }
  // lib.bundle.js's once the thread's code of this turn and its promise
  // jobs have run, so that it holds the functions a first take or wait
  // compiled too (its classes' methods compile at their first call).
  if (write && use === null) writeCache(script, cacheFile, bytes);
  else if (write) require('timers').setImmediate(writeCache, script, cacheFile, bytes);
  return result;
});

/**
 * lib.bundle.js's modules, as index.bundle.js asks for them at the first
 * require of one: use(its exports), or use(null) where it cannot be read.
 */
function runLater(use) {
  var bytes = null;
  try {
    bytes = fs.readFileSync(path.join(__dirname, 'lib.bundle.js'));
  } catch (error) {
    // Not there (a copy of part of the package): lib's files load themselves.
  }
  return bytes === null ? use(null) : runBundle('lib', bytes, { exports: {} }, use);
}

// Node's own loader loaded this file, in the context vm runs code in.
// (Buffer's latin1Slice, without the JavaScript of toString and compare
// around it, which a thread would compile first.)
var Module = module.constructor;
if (typeof Module === 'function' && Module._cache === require.cache && module instanceof Module &&
    typeof process.versions.v8 === 'string' && !process.versions.bun && !process.versions.deno &&
    process.env.ATOMICS_WAITASYNC_CODE_CACHE !== '0' && typeof Buffer.prototype.latin1Slice === 'function') {
  // The options that may set V8's flags (the command line's and
  // NODE_OPTIONS's; not the code of -e), in the caches' names, so that
  // processes run with other flags, whose cache V8 would not take, keep
  // ones of their own.
  var options = process.execArgv.length === 0 && !process.env.NODE_OPTIONS ? [] : process.execArgv
    .concat(String(process.env.NODE_OPTIONS || '').split(' '))
    .filter(RegExp.prototype.test, /^--/);
  var CACHE_KEY = process.versions.v8 + '-' + process.platform + '-' + process.arch +
    (options.length === 0 ? '' : '-' + encodeURIComponent(options.join('_')).split('*').join('_').slice(0, 120));
  var vm = require('vm');
  runBundle('index', fs.readFileSync(BUNDLE), module, null);
} else {
  module.exports = require('./index.bundle.js');
}
`;

/** `names` (files of `root`), comments out, each wrapped as Node wraps a module: `${into}[name] = (function ...);`. */
function wrapped(root, names, into) {
  let out = '';
  for (const name of names) {
    const source = fs.readFileSync(path.join(root, name), 'utf8');
    if (/[^\x00-\x7f]/.test(source)) throw new Error(`${name} is not ASCII`);
    // index.js runs the bundles through vm.Script, which has no loader for import().
    if (/\bimport\s*\(/.test(stripComments(source, name))) throw new Error(`${name} calls import(), which the bundle cannot`);
    const code = stripComments(source, name).replace(/^\n+/, '').replace(/\n+$/, '');
    // In parentheses: V8 compiles such a function with the file, where it
    // would otherwise scan its text twice (once as the file is compiled,
    // again at its first call); and the code cache holds it.
    out += `${into}[${JSON.stringify(name)}] = (function (exports, require, module, __filename, __dirname) {\n${code}\n});\n`;
  }
  return out;
}

/** The published index.bundle.js: the LOAD_PATH files of `root`, comments out, wrapped, and LOADER. */
function bundle(root = ROOT) {
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const out = "'use strict';\n" +
    `// atomics-waitasync ${version}, as published: index.js and the files a thread\n` +
    `// loads with it (${LOAD_PATH.slice(1).join(', ')}),\n` +
    '// in one file, their comments taken out; made by scripts/stage.js from the\n' +
    "// repository's sources, where each file is whole. The files that load\n" +
    '// later are in lib.bundle.js; the others are as in the repository.\n' +
    'var sources = {};\n' +
    wrapped(root, LOAD_PATH, 'sources');
  return out + LOADER.replace(/^\n/, '').replace('/*LATER*/', JSON.stringify(LATER));
}

/** The published lib.bundle.js: the LATER files of `root`, comments out, wrapped, as its module's exports. */
function laterBundle(root = ROOT) {
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  return "'use strict';\n" +
    `// atomics-waitasync ${version}, as published: the files of lib/ that a thread\n` +
    '// loads at its first class of the family, query() or deadlock switch, in\n' +
    '// one file, their comments taken out, which index.js compiles then; made by\n' +
    "// scripts/stage.js from the repository's sources, where each file is whole.\n" +
    'var later = module.exports;\n' +
    wrapped(root, LATER, 'later');
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
  fs.writeFileSync(path.join(dest, 'lib.bundle.js'), laterBundle(root));
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

module.exports = { LOAD_PATH, LATER, bundle, laterBundle, loading, stage, stageWithLocalBuild, packedFiles };

if (require.main === module) main(process.argv.slice(2));
