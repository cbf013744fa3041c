'use strict';
// Cold: what one `require` costs a fresh thread. Measures the time from
// just before the require to just after it (process.hrtime.bigint()), in a
// fresh process, once:
//
//   --entry none        nothing (the empty program of the instruction counts)
//   --entry empty       benchmark/cold/empty.js, an empty file: Node's floor for a require
//   --entry builtins    require('worker_threads') + require('util')
//   --entry perf-hooks  require('perf_hooks')
//   --entry package     require('<package>'): the package as published (scripts/stage.js),
//                       whose folder benchmark/lib/cold.js names in ATOMICS_WAITASYNC_COLD_PACKAGE;
//                       this checkout where that is not set
//   --entry polyfill    require('<package>/polyfill')
//   --entry class       require('<package>').AsyncLock: the package and its first class (the
//                       family's files)
//   --entry checkout    require('<repo>'): this checkout's root, its files as they are
//
//   --where main               on the main thread
//   --where worker             in a freshly started worker (the main thread loads
//                              only worker_threads, to start it)
//   --where worker-after-main  the same, after the main thread required the entry
//                              (reported too, as mainNs)
//
// Prints one JSON line: { ns } (the measured thread's require), one turn of
// the event loop after it, or once the worker has ended (where the package
// writes its family's code cache, when it has none). Nothing is required before the measured part but
// `path`, which Node's start-up has loaded already; the worker reads its
// entry from its argv, and loads worker_threads (for parentPort) only after
// its measured part.

const path = require('path');

// (As common.js has them: that file is not loaded before the measured part.)
const CHECKOUT = path.join(__dirname, '..', '..');
const ROOT = process.env.ATOMICS_WAITASYNC_COLD_PACKAGE || CHECKOUT;
const FILES = {
  empty: path.join(__dirname, 'empty.js'),
  package: ROOT,
  polyfill: path.join(ROOT, 'polyfill'),
  checkout: CHECKOUT,
};
const ENTRIES = ['none', 'empty', 'builtins', 'perf-hooks', 'package', 'polyfill', 'class', 'checkout'];
const WHERE = ['main', 'worker', 'worker-after-main'];

function arg(name) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? undefined : process.argv[at + 1];
}

/** Requires `entry`; returns the nanoseconds it took. */
function timedRequire(entry) {
  const start = process.hrtime.bigint();
  if (entry === 'builtins') {
    require('worker_threads');
    require('util');
  } else if (entry === 'perf-hooks') {
    require('perf_hooks');
  } else if (entry === 'class') {
    require(FILES.package).AsyncLock; // eslint-disable-line no-unused-expressions
  } else if (entry !== 'none') {
    require(FILES[entry]);
  }
  return Number(process.hrtime.bigint() - start);
}

function print(result) {
  setImmediate(() => {
    process.stdout.write(JSON.stringify(result) + '\n');
    process.exit(0);
  });
}

const entry = arg('entry');
if (process.argv.includes('--in-worker')) {
  const ns = timedRequire(entry);
  require('worker_threads').parentPort.postMessage(ns);
} else {
  const where = arg('where') || 'main';
  if (!ENTRIES.includes(entry)) throw new Error(`--entry must be one of ${ENTRIES.join(', ')}; got ${entry}`);
  if (!WHERE.includes(where)) throw new Error(`--where must be one of ${WHERE.join(', ')}; got ${where}`);
  if (where === 'main') {
    print({ entry, where, ns: timedRequire(entry) });
  } else {
    const mainNs = where === 'worker-after-main' ? timedRequire(entry) : undefined;
    const { Worker } = require('worker_threads');
    const worker = new Worker(__filename, { argv: ['--in-worker', '--entry', entry] });
    // Printed once the worker has ended by itself (after its event loop's
    // last turn, where the package may write a code cache).
    let ns;
    worker.on('message', (posted) => (ns = posted));
    worker.on('error', (error) => {
      console.error(error);
      process.exit(1);
    });
    worker.on('exit', (code) => {
      if (ns !== undefined && code === 0) return print({ entry, where, ns, mainNs });
      console.error(`the worker ended (exit code ${code}) before it posted its time`);
      process.exit(1);
    });
  }
}
