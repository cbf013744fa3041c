'use strict';
// Every thread that waits or notifies must have the polyfill: each worker has
// its own Atomics, and the engine's notify cannot reach the package's
// waiters. A worker inherits `-r` preloads only through the default
// execArgv, and libraries opt out on purpose: esbuild (under tsx, Vite,
// and others) starts its worker with `execArgv: []`, then blocks the main
// thread in Atomics.wait until that worker notifies it. With the polyfill
// installed on the main thread and not in the worker, that wait never ends.
//
// So once a thread has installed the polyfill, a worker it starts with its
// own execArgv gets `-r <preload>` added to it: worker_threads.Worker
// becomes a Proxy of itself whose construct trap does that. A worker that
// inherits execArgv (none given) is left alone: it inherits the -r preload
// where the program used one, and turning inherited flags into given ones
// would make Node refuse V8 and per-process flags (--max-old-space-size)
// that it accepts when inherited. Nothing else about Worker changes: the
// same class, prototype and `instanceof`, and the caller's options object
// (getters, prototype) is what Node reads, behind an own `execArgv`.
//
// Not reached: workers started before the install (esbuild keeps one
// service worker for the life of the process), and code that took
// `Worker` from worker_threads before the install.

const path = require('path');

const kPatched = Symbol.for('atomics-waitasync.workerPreload');

/**
 * The worker's execArgv with `-r preload` last, after the worker's own
 * preloads (which may prepare its Atomics first), unless it has it already.
 * A second `-r` of the same file under another name is harmless: require
 * loads a file once.
 */
function withPreload(execArgv, preload) {
  const args = execArgv.slice();
  for (let i = 0; i < args.length; i++) {
    if ((args[i] === '-r' || args[i] === '--require') && args[i + 1] === preload) return args;
    if (args[i] === `--require=${preload}`) return args;
  }
  return args.concat(['-r', preload]);
}

/**
 * Makes `workerThreads.Worker` start every later worker with `-r preload`.
 * The first call in a thread decides the preload (a forced install's wins
 * over the plain one: call order is install order). Returns whether it
 * patched now.
 *
 * @param {object} workerThreads `require('worker_threads')`
 * @param {string} preload absolute path of the file a worker loads first
 * @param {object} [builtinModule] `require('module')`, to update ESM imports
 */
function preloadInWorkers(workerThreads, preload, builtinModule) {
  const current = workerThreads.Worker;
  if (typeof current !== 'function') return false;
  const patched = current[kPatched];
  if (patched !== undefined) {
    // Already patched: a forced install upgrades the plain preload.
    if (preload === FORCE_PRELOAD) patched.preload = preload;
    return false;
  }
  const state = { preload };
  const proxy = new Proxy(current, {
    construct(target, args, newTarget) {
      const construct = newTarget === proxy ? target : newTarget;
      const options = args[1];
      // Only a given execArgv array changes; anything else is Node's to
      // accept or refuse, as it would without the package.
      if (options === null || typeof options !== 'object' || !Array.isArray(options.execArgv)) {
        return Reflect.construct(target, args, construct);
      }
      const fixed = Object.create(options, {
        __proto__: null,
        execArgv: {
          __proto__: null,
          value: withPreload(options.execArgv, state.preload),
          enumerable: true,
          writable: true,
          configurable: true,
        },
      });
      return Reflect.construct(target, [args[0], fixed].concat(args.slice(2)), construct);
    },
    get(target, key, receiver) {
      if (key === kPatched) return state;
      return Reflect.get(target, key, receiver);
    },
  });
  try {
    workerThreads.Worker = proxy;
  } catch (_) {
    return false; // a frozen worker_threads: leave it be
  }
  if (workerThreads.Worker !== proxy) return false;
  // `import { Worker } from 'node:worker_threads'` sees it too.
  if (builtinModule && typeof builtinModule.syncBuiltinESMExports === 'function') builtinModule.syncBuiltinESMExports();
  return true;
}

const PLAIN_PRELOAD = path.join(__dirname, '..', 'polyfill.js');
const FORCE_PRELOAD = path.join(__dirname, 'force-preload.js');

module.exports = { preloadInWorkers, withPreload, PLAIN_PRELOAD, FORCE_PRELOAD };
