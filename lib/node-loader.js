'use strict';
// Keeps a forced install out of the way of Node's own module loader.
//
// Node 18.19+ and 20 run module customization hooks (module.register(), an
// --import that registers them, --loader, tsx) on a thread of their own. The
// main-thread half, lib/internal/modules/esm/hooks.js, takes Atomics.wait and
// Atomics.waitAsync from the global object when it first loads, which is
// after -r preloads have run, and the hooks thread wakes it with the
// engine's own Atomics.notify. Had a preload forced the install, Node's
// loader would wait in this package's registry for a notify that can never
// reach it, and hang at start-up. Node 21 and later take the functions from
// their primordials instead; Node 18.18 and earlier have no hooks thread.
//
// Node's loader waits on a lock of its own: an Int32Array of one element
// over a 4-byte SharedArrayBuffer (SHARED_MEMORY_BYTE_LENGTH in
// lib/internal/modules/esm/shared_constants.js). The first time an installed
// wait or waitAsync sees a buffer of that shape, it looks at its caller; a
// buffer Node's loader waits on goes to the engine's own functions from then
// on, and the answer for any other buffer is remembered too, so a program's
// own one-element arrays cost one look at the stack per buffer.

const TypedArrayPrototype = Object.getPrototypeOf(Int32Array.prototype);
const uncurry = (fn) => Function.prototype.call.bind(fn);
const accessor = (name) => uncurry(Object.getOwnPropertyDescriptor(TypedArrayPrototype, name).get);
const typedArrayName = accessor(Symbol.toStringTag);
const typedArrayLength = accessor('length');
const typedArrayBuffer = accessor('buffer');
const weakMapGet = uncurry(WeakMap.prototype.get);
const weakMapSet = uncurry(WeakMap.prototype.set);

/** Whether this Node's loader takes wait/waitAsync from the global (18.19+, 20). */
function loaderReadsGlobalAtomics(versions) {
  const node = versions && versions.node;
  // Bun and Deno report a Node version too, but run no hooks.js of Node's.
  if (typeof node !== 'string' || versions.bun || versions.deno) return false;
  const [major, minor] = node.split('.').map(Number);
  return (major === 18 && minor >= 19) || major === 20;
}

/** The file of the function that called `callee`, or '' when it cannot be told. */
function callerFile(callee) {
  const { prepareStackTrace, stackTraceLimit } = Error;
  try {
    Error.stackTraceLimit = 1;
    Error.prepareStackTrace = (_, frames) => frames;
    const holder = {};
    Error.captureStackTrace(holder, callee);
    const frames = holder.stack;
    const name = Array.isArray(frames) && frames.length > 0 ? frames[0].getFileName() : '';
    return typeof name === 'string' ? name : '';
  } catch (_) {
    return '';
  } finally {
    Error.prepareStackTrace = prepareStackTrace;
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/**
 * Returns `isLoaderLock(typedArray, callee)`: whether `typedArray` is a lock
 * of Node's loader, which `callee` (an installed function) must hand to the
 * engine's own. Null where Node's loader never calls installed functions.
 *
 * @param {object} versions `process.versions`
 */
function createLoaderRoute(versions) {
  if (!loaderReadsGlobalAtomics(versions)) return null;
  const verdicts = new WeakMap(); // SharedArrayBuffer → whether Node's loader waits on it
  return function isLoaderLock(typedArray, callee) {
    if (typedArrayName(typedArray) !== 'Int32Array' || typedArrayLength(typedArray) !== 1) return false;
    const buffer = typedArrayBuffer(typedArray);
    let verdict = weakMapGet(verdicts, buffer);
    if (verdict === undefined) {
      verdict = callerFile(callee).startsWith('node:internal/modules/esm/');
      weakMapSet(verdicts, buffer, verdict);
    }
    return verdict;
  };
}

module.exports = { createLoaderRoute, loaderReadsGlobalAtomics };
