'use strict';
// Every thread that waits or notifies must have the polyfill: each worker has
// its own Atomics, and the engine's notify cannot reach the package's
// waiters. A worker inherits `-r` preloads only through the default
// execArgv, and libraries opt out on purpose: esbuild (under tsx, Vite,
// and others) starts its worker with `execArgv: []`, then blocks the main
// thread in Atomics.wait until that worker notifies it. With the polyfill
// installed on the main thread and not in the worker, that wait never ends.
//
// So once a thread has installed the polyfill, the workers it starts load
// it first: worker_threads.Worker becomes a Proxy of itself whose
// construct trap adds `-r <preload>` to the worker's execArgv (the given
// one, or the inherited process.execArgv). Nothing else about
// Worker changes: the same class, prototype and `instanceof`.

const path = require('path');

const kPatched = Symbol.for('atomics-waitasync.workerPreload');

/**
 * The worker's execArgv with `-r preload` last, after the worker's own
 * preloads (which may prepare its Atomics first), unless it has it already.
 * A second `-r` of the same file under another name is harmless: require
 * loads a file once.
 */
function withPreload(execArgv, preload) {
  const args = Array.isArray(execArgv) ? execArgv.slice() : process.execArgv.slice();
  for (let i = 0; i + 1 < args.length; i++) {
    if ((args[i] === '-r' || args[i] === '--require') && args[i + 1] === preload) return args;
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
    if (patched.preload !== preload && preload === FORCE_PRELOAD) patched.preload = preload;
    return false;
  }
  const state = { preload };
  const proxy = new Proxy(current, {
    construct(target, args, newTarget) {
      const filename = args[0];
      const options = args[1] === undefined || args[1] === null ? {} : args[1];
      if (typeof options !== 'object') return Reflect.construct(target, args, newTarget === proxy ? target : newTarget);
      const fixed = Object.assign({}, options, { execArgv: withPreload(options.execArgv, state.preload) });
      return Reflect.construct(target, [filename, fixed].concat(args.slice(2)), newTarget === proxy ? target : newTarget);
    },
    get(target, key, receiver) {
      if (key === kPatched) return state;
      return Reflect.get(target, key, receiver);
    },
  });
  workerThreads.Worker = proxy;
  // `import { Worker } from 'node:worker_threads'` sees it too.
  if (builtinModule && typeof builtinModule.syncBuiltinESMExports === 'function') builtinModule.syncBuiltinESMExports();
  return true;
}

const PLAIN_PRELOAD = path.join(__dirname, '..', 'polyfill.js');
const FORCE_PRELOAD = path.join(__dirname, 'force-preload.js');

module.exports = { preloadInWorkers, withPreload, PLAIN_PRELOAD, FORCE_PRELOAD };
