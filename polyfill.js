'use strict';
// atomics-waitasync/polyfill: where this thread's Atomics has no waitAsync,
// puts the package's waitAsync, wait and notify on it. Exports nothing.
//
//   require('atomics-waitasync/polyfill');      // or: import 'atomics-waitasync/polyfill';
//   node -r atomics-waitasync/polyfill app.js   // workers inherit -r through execArgv
//
// Every thread that waits or notifies must load it: each worker has its own
// Atomics object. To replace a native waitAsync as well, call
// require('atomics-waitasync').install({ force: true }).

require('./index.js').install();
