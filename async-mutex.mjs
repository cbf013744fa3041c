// ESM entry of atomics-waitasync/async-mutex: the same objects as the
// CommonJS one.
import api from './async-mutex.js';

export const { Mutex, Semaphore, withTimeout, tryAcquire, E_TIMEOUT, E_ALREADY_LOCKED, E_CANCELED } = api;
export default api;
