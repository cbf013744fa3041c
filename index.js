'use strict';
// atomics-waitasync: Atomics.waitAsync, wait and notify for every Node.js
// release, backed by a Rust waiter registry shared by all threads.
//
//   const { waitAsync, wait, notify } = require('atomics-waitasync');

const binding = require('./binding');
const { createAtomics } = require('./lib/atomics');

const atomics = createAtomics(binding);

module.exports = {
  waitAsync: atomics.waitAsync,
  wait: atomics.wait,
  notify: atomics.notify,
  ref: atomics.ref,
  unref: atomics.unref,
  // Test-only (not in index.d.ts): registry and pending-waiter counts.
  waitersForTesting: atomics.waitersForTesting,
};
