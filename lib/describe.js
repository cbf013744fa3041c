'use strict';
// How an error message names the value it received: one wording for every
// argument check of the package (lib/atomics.js, lib/core.js and every
// primitive); and the few facts about the runtime that several modules ask.

// %TypedArray%.prototype accessors, taken once: they read internal slots,
// so a subclass or an own property cannot fake them. The package's one copy
// (lib/atomics.js and lib/node-loader.js take them from here).
const TypedArrayPrototype = Object.getPrototypeOf(Int32Array.prototype);
const uncurry = (fn) => Function.prototype.call.bind(fn);
const accessor = (name) => uncurry(Object.getOwnPropertyDescriptor(TypedArrayPrototype, name).get);
const typedArrayName = accessor(Symbol.toStringTag); // undefined for non-TypedArrays
const typedArrayBuffer = accessor('buffer');
const typedArrayLength = accessor('length');

/** `a Float64Array`, `an instance of Map`, `"abc"`, `5n`, `a symbol`, … */
function describe(value) {
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') {
    const name = typedArrayName(value);
    if (name !== undefined) return `a ${name}`;
    if (value instanceof DataView) return 'a DataView';
    const constructorName = value.constructor && value.constructor.name;
    return constructorName && constructorName !== 'Object' ? `an instance of ${constructorName}` : 'an object';
  }
  if (typeof value === 'symbol') return 'a symbol';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return JSON.stringify(value.length > 20 ? value.slice(0, 20) + '…' : value);
  return String(value);
}

/**
 * Whether `versions` (process.versions) are Node's own: Bun and Deno report
 * a Node version too, but run none of Node's JS and have their own N-API.
 */
function isNodeItself(versions) {
  return (
    versions !== null &&
    typeof versions === 'object' &&
    typeof versions.node === 'string' &&
    !versions.bun &&
    !versions.deno
  );
}

module.exports = { describe, isNodeItself, uncurry, TypedArrayPrototype, typedArrayName, typedArrayBuffer, typedArrayLength };
