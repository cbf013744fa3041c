'use strict';
// atomics-waitasync/async-mutex: async-mutex 0.5's API (Mutex, Semaphore,
// withTimeout, tryAcquire, E_TIMEOUT, E_ALREADY_LOCKED, E_CANCELED) over
// the package's cross-thread primitives (lib/async-mutex.js).
//
//   const { Mutex, Semaphore } = require('atomics-waitasync/async-mutex');

const binding = require('./binding.js');
const { AsyncLock, waitAsync, notify } = require('./index.js');
const { createAsyncMutex, withTimeout, tryAcquire, E_TIMEOUT, E_ALREADY_LOCKED, E_CANCELED } = require('./lib/async-mutex.js');

const { Mutex, Semaphore } = createAsyncMutex({ waitAsync, notify, AsyncLock, stakeWatch: binding.stakeWatch });

module.exports = { Mutex, Semaphore, withTimeout, tryAcquire, E_TIMEOUT, E_ALREADY_LOCKED, E_CANCELED };
