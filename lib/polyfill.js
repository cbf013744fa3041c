'use strict';
// The polyfill: puts the package's waitAsync, wait and notify on a realm's
// `Atomics` object, shaped like the built-ins they replace.
//
// A factory over the binding and the `Atomics` object to patch, so tests can
// hand it a fake of each. index.js makes the real one (one per thread: every
// worker has its own `Atomics` and its own copy of index.js).

const { createAtomics, skippingNotify, kEngineWait } = require('./atomics.js');
const { createLoaderRoute } = require('./node-loader.js');

const NAMES = ['waitAsync', 'wait', 'notify'];

/**
 * @param {object} binding the native binding (see lib/atomics.js)
 * @param {object} atomics the `Atomics` object to patch
 * @param {object} [ponyfill] the package's `createAtomics(binding)` triple,
 *   when the caller has made it already (index.js has)
 * @param {object} [versions] `process.versions`, which tells whether Node's
 *   own module loader will call the installed functions (lib/node-loader.js)
 * @returns {{ install: Function }}
 */
function createPolyfill(binding, atomics, ponyfill = createAtomics(binding), versions = process.versions) {
  // The `notify` found on `atomics` by the first install that patched it:
  // the engine's own, or whatever was there (another copy of this package,
  // with its own registry). Taken once, so a later forced install cannot
  // mistake our own notify, or a user's wrapper of it, for the original and
  // end up calling itself.
  let originalNotify = null;
  // The original wait/waitAsync where Node's own locks go to them (see
  // isLoaderLock), else null: set by the first install that patched.
  let loaderWait = null;
  let loaderWaitAsync = null;
  let patchedOnce = false;

  // On Node 18.19+ and 20, Node's module loader waits through whatever
  // wait/waitAsync the global has when its hooks first load, and is woken by
  // the engine's notify: its locks go to the original functions.
  const isLoaderLock = createLoaderRoute(versions);

  // The installed notify goes through the package's notify, so validation
  // and coercion (valueOf calls included) happen once, in the spec's order,
  // and a non-shared array gives 0 before any engine notify could throw
  // (Node 14's does). Only the binding step differs: after the registry's
  // waiters, the original notify wakes threads blocked in the engine's own
  // Atomics.wait, for what is left of the count.
  const bindingNotify = skippingNotify(binding);
  const chained = createAtomics(binding, (typedArray, index, count) => {
    const woken = bindingNotify(typedArray, index, count);
    const rest = count - woken; // Infinity stays Infinity
    if (rest <= 0 || originalNotify === null) return woken;
    return woken + originalNotify.call(atomics, typedArray, index, rest);
  });

  // Method definitions: like built-in functions they have no `prototype` and
  // are not constructors; `name` and `length` come out as the built-ins'
  // ('waitAsync' 4, 'wait' 4, 'notify' 3).
  const replacements = {
    waitAsync(typedArray, index, value, timeout) {
      if (loaderWaitAsync !== null && isLoaderLock(typedArray, replacements.waitAsync)) {
        return loaderWaitAsync.call(atomics, typedArray, index, value, timeout);
      }
      return ponyfill.waitAsync(typedArray, index, value, timeout);
    },
    wait(typedArray, index, value, timeout) {
      if (loaderWait !== null && isLoaderLock(typedArray, replacements.wait)) {
        return loaderWait.call(atomics, typedArray, index, value, timeout);
      }
      return ponyfill.wait(typedArray, index, value, timeout);
    },
    notify(typedArray, index, count) {
      return chained.notify(typedArray, index, count);
    },
  };

  function isActive() {
    return NAMES.every((name) => atomics[name] === replacements[name]);
  }

  /**
   * Installs waitAsync, wait and notify on `atomics` when it has no
   * waitAsync, or always with `{ force: true }`. Installing again changes
   * nothing.
   *
   * @param {{ force?: boolean }} [options]
   * @returns {{ installed: string[], active: boolean }} `installed`: the
   *   names this call defined (empty when it changed nothing); `active`:
   *   whether the three functions on `atomics` are the package's now.
   */
  function install(options) {
    if (options !== undefined && options !== null && typeof options !== 'object') {
      throw new TypeError(`The "options" argument must be an object. Received ${typeof options}`);
    }
    const force = Boolean(options && options.force);
    if (isActive()) return { installed: [], active: true };
    if (typeof atomics.waitAsync === 'function' && !force) return { installed: [], active: false };
    if (!patchedOnce) {
      originalNotify = typeof atomics.notify === 'function' ? atomics.notify : null;
      if (isLoaderLock !== null) {
        loaderWait = typeof atomics.wait === 'function' ? atomics.wait : null;
        loaderWaitAsync = typeof atomics.waitAsync === 'function' ? atomics.waitAsync : null;
      }
      // What the installed wait replaced, for a later copy of
      // lib/atomics.js to take as its interrupt point (see there).
      if (typeof atomics.wait === 'function') {
        Object.defineProperty(replacements.wait, kEngineWait, { __proto__: null, value: atomics.wait });
      }
      patchedOnce = true;
    }
    for (const name of NAMES) {
      // The built-ins' attributes: writable, configurable, not enumerable.
      Object.defineProperty(atomics, name, {
        __proto__: null,
        value: replacements[name],
        writable: true,
        enumerable: false,
        configurable: true,
      });
    }
    return { installed: NAMES.slice(), active: true };
  }

  return { install };
}

module.exports = { createPolyfill };
