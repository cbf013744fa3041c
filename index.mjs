// ESM entry: the same objects as the CommonJS one (one registry per process).
import api from './index.js';

export const {
  waitAsync, wait, notify, ref, unref, install,
  AsyncLock, Condition, Latch, Semaphore, SignalSemaphore, Barrier, RwLock,
  query, report, detectDeadlocks, checkLockOrder,
} = api;
export default api;
