'use strict';
// Keeps a forced install out of the way of Node's own use of Atomics.
//
// On Node 18.19+ and 20, two of Node's internal modules wait through the
// global Atomics and are woken by a thread that holds the engine's own
// notify:
// - lib/internal/modules/esm/hooks.js, the main-thread half of module
//   customization hooks (module.register(), an --import that registers
//   them, --loader, tsx on those versions), takes Atomics.wait and waitAsync
//   from the global when it first loads, after -r preloads have run; its
//   hooks thread notifies with the engine's function. Its lock is an
//   Int32Array of one element (SHARED_MEMORY_BYTE_LENGTH = 4).
// - lib/internal/test_runner/mock/mock.js (node:test's mock.module()) does
//   the same with a one-element lock that the hooks thread notifies.
// - lib/internal/worker/messaging.js (worker.postMessageToThread) calls
//   Atomics.waitAsync at call time on an Int32Array of two elements, and the
//   target thread, which may have no preload, notifies it.
// Were they given the package's functions, they would wait in its registry
// for a notify that can never reach it: Node hung at start-up. Node 21 and
// later take these functions from their primordials.
//
// So the installed wait and waitAsync look, once per buffer of that shape,
// at who called them: a buffer that Node's own code waits on goes to the
// engine's functions from then on. The answer for any other buffer is
// remembered too, so a program's own small arrays cost one look at the stack
// per buffer. The look runs in a realm of its own, so that a program's
// Error.prepareStackTrace, Error.stackTraceLimit or a frozen Error changes
// nothing, and skips the frames of the package's installed functions (of
// any copy of the package), so that a second copy's install on top of the
// first still finds Node's code. A program's own wrapper around the
// installed functions hides Node's code, and is not seen through.

const path = require('path');
const vm = require('vm');

const { isNodeItself, uncurry, typedArrayName, typedArrayLength, typedArrayBuffer } = require('./describe.js');

const weakMapGet = uncurry(WeakMap.prototype.get);
const weakMapSet = uncurry(WeakMap.prototype.set);
const startsWith = uncurry(String.prototype.startsWith);

// Node's code that waits through the global Atomics (see above).
const NODE_CALLERS = [
  'node:internal/modules/esm/hooks',
  'node:internal/worker/messaging',
  'node:internal/test_runner/mock/mock', // mock.module() on Node 20: a one-element lock
];
// Frames looked at: the installed function's callers, past any copies of it.
const FRAMES = 8;
// The files of every copy's installed functions in this realm, skipped.
const kPolyfillFiles = Symbol.for('atomics-waitasync.polyfillFiles');

/** Whether this Node's own code waits through the global Atomics (18.19+, 20). */
function nodeWaitsThroughGlobal(versions) {
  if (!isNodeItself(versions)) return false;
  const [major, minor] = versions.node.split('.').map(Number);
  return (major === 18 && minor >= 19) || major === 20;
}

let callSites = null;

/**
 * The call sites above `callee` (file names, up to FRAMES), taken in a realm
 * of their own whose Error no program can touch; [] when they cannot be had.
 */
function callerFiles(callee) {
  try {
    if (callSites === null) {
      callSites = vm.runInNewContext(`
        Error.stackTraceLimit = ${FRAMES};
        Error.prepareStackTrace = (_, frames) => frames;
        (callee) => {
          const holder = {};
          Error.captureStackTrace(holder, callee);
          const frames = holder.stack;
          const files = [];
          for (let i = 0; Array.isArray(frames) && i < frames.length; i++) files.push(String(frames[i].getFileName()));
          return files;
        }`);
    }
    return callSites(callee);
  } catch (_) {
    return [];
  }
}

/**
 * Whether the first caller outside the package's installed functions is
 * Node's own waiting code; undefined when the call sites cannot be had.
 */
function calledByNode(callee, skip) {
  const files = callerFiles(callee);
  if (files.length === 0) return undefined; // no answer: look again next time
  for (let i = 0; i < files.length; i++) {
    if (skip.has(files[i])) continue;
    for (let j = 0; j < NODE_CALLERS.length; j++) {
      if (files[i] === NODE_CALLERS[j] || startsWith(files[i], `${NODE_CALLERS[j]}:`)) return true;
    }
    return false;
  }
  return false;
}

/**
 * Returns `isNodeLock(typedArray, callee)`: whether `typedArray` is one that
 * Node's own code waits on, which `callee` (an installed function) must hand
 * to the engine's own. Null where Node's code never calls installed
 * functions.
 *
 * @param {object} versions `process.versions`
 * @param {object} [realm] the global object whose copies register their files
 */
function createLoaderRoute(versions, realm = globalThis) {
  if (!nodeWaitsThroughGlobal(versions)) return null;
  let skip = realm[kPolyfillFiles];
  if (!(skip instanceof Set)) {
    skip = new Set();
    try {
      Object.defineProperty(realm, kPolyfillFiles, { __proto__: null, value: skip, configurable: true });
    } catch (_) {
      // a non-extensible global: this copy skips its own frames only
    }
  }
  skip.add(path.join(__dirname, 'polyfill.js'));
  const verdicts = new WeakMap(); // SharedArrayBuffer -> whether Node's code waits on it
  return function isNodeLock(typedArray, callee) {
    if (typedArrayName(typedArray) !== 'Int32Array' || typedArrayLength(typedArray) > 2) return false;
    const buffer = typedArrayBuffer(typedArray);
    let verdict = weakMapGet(verdicts, buffer);
    if (verdict === undefined) {
      verdict = calledByNode(callee, skip);
      if (verdict === undefined) return false;
      weakMapSet(verdicts, buffer, verdict);
    }
    return verdict;
  };
}

module.exports = { createLoaderRoute, nodeWaitsThroughGlobal };
