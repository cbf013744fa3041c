'use strict';
// benchmark/lock-family.js's implementations (package, mutex, weblocks,
// multithreading, post: its header says what each is), one entry each in
// IMPLEMENTATIONS, behind one shape per primitive ("form"); the slots of
// the case's SharedArrayBuffer; the shared state the main thread makes.
// Not a script: the cases (family/cases.js) build the form they need, in
// every thread, with `implementation(impl, form, shared)`.
//
// The forms (a member is null where the implementation has no such thing,
// and `<member>Missing` says why; a form it has not at all is
// `{ unsupported: reason }`):
//   lock       lockUnlock(f)   blocking: take the lock, f(), release
//              locked(f)       async: a promise that settles after f ran holding the lock
//              conditionBlocking(run) / conditionAsync(run): hold the lock and call
//                              run(wait, notify) with the condition's blocking (or async)
//                              wait; the value of run, or a promise of it
//   semaphore  lockUnlock(f), locked(f) over 1 permit; lockedN(n, f) over n
//   rwlock     lockUnlock(f), locked(f) with a read; writeUnlock(f), writeLocked(f) with the write lock
//   barrier    arrive()        blocks until every party arrived
// `asyncOnly`: the implementation's threads all take the async form, even
// in the rows whose workers block (Web Locks).

const path = require('path');
const { isMainThread } = require('worker_threads');

// Int32 slots of the case's SharedArrayBuffer, each on its own cache line.
const SLOTS = {
  LOCK: 0, // the package's and the post's lock word (the post uses index 0)
  COUNTER: 16, // the non-atomic counter f increments
  GO: 32, // 1: start; 2: stop
  TURN: 48, // condition ping-pong: 0 the initiator's turn, 1 the responder's
  STOP: 64, // condition ping-pong: 1 once the initiator is done (read under the lock)
  COND: 80, // the package's condition word
  SEM: 96, // the package's and the native semaphore's three words
  BAR: 112, // the package's and the native barrier's words
  LAST: 128, // barrier rows: the phase every worker stops after
  PHASE: 144, // barrier rows: the phases worker 0 passed
  RW: 160, // the package's and the native rwlock's two words
  MIRROR: 176, // rwlock rows: the writer copies COUNTER here; a reader checks the two agree
  INUSE: 192, // semaphore-large-wait: permits held now (each holder adds what it took)
  OVER: 208, // semaphore-large-wait: holders that saw more permits held than there are
  COUNT: 224,
};
const { LOCK, COND, SEM, BAR, RW } = SLOTS;

// Each form's lockUnlock / locked / lockedN / writeUnlock / writeLocked is
// written out, take; try f() finally give, with no helper between: they run
// in the timed loops, and a shared wrapper would add calls there (more to
// some implementations than to others).

// Why an implementation cannot run on this Node, or null.
const noWaitAsync = () =>
  (typeof Atomics.waitAsync !== 'function' ? `no native Atomics.waitAsync in Node ${process.version}` : null);

/**
 * A form of Web Locks': async only (every thread takes the async form),
 * with what `make(locks)` adds; `{ unsupported }` where Node has no Web Locks.
 */
function withWebLocks(make) {
  return () => {
    const locks = require('worker_threads').locks;
    if (!locks || typeof locks.request !== 'function') {
      return { unsupported: `no require('worker_threads').locks in Node ${process.version}` };
    }
    return Object.assign({ asyncOnly: true, lockUnlock: null, lockUnlockMissing: 'Web Locks are async only' }, make(locks));
  };
}

/** The npm package multithreading, or `{ unsupported }` if it does not load. */
async function loadMultithreading() {
  // The library reads navigator.hardwareConcurrency when it loads; Node
  // 20 has no global navigator (21+ has): give it one, as a user on Node
  // 20 would have to.
  if (typeof globalThis.navigator === 'undefined') {
    globalThis.navigator = { hardwareConcurrency: require('os').cpus().length };
  }
  try {
    return await import('multithreading');
  } catch (error) {
    return { unsupported: `multithreading does not load (${error.code || error.message}); npm install` };
  }
}

/** A form of multithreading's: `make(lib, shared)` once the library loaded. */
function withMultithreading(make) {
  return async (shared) => {
    const lib = await loadMultithreading();
    return lib.unsupported ? lib : make(lib, shared);
  };
}

// The implementations: label (the tables' column), and one entry per form:
// a function (shared) => form (or a promise of it), or the reason it has none.
const IMPLEMENTATIONS = {
  package: {
    label: 'atomics-waitasync',
    lock(shared) {
      const { AsyncLock, Condition } = require('../..');
      const i32 = new Int32Array(shared.sab);
      const lock = new AsyncLock(i32, LOCK);
      const cond = new Condition(i32, COND);
      return {
        lockUnlock(f) {
          lock.lock();
          try {
            f();
          } finally {
            lock.unlock();
          }
        },
        locked: (f) => lock.executeLocked(f),
        conditionBlocking(run) {
          lock.lock();
          try {
            return run(() => cond.wait(lock), () => cond.notify());
          } finally {
            lock.unlock();
          }
        },
        conditionAsync: (run) => lock.executeLocked(() => run(() => cond.waitAsync(lock), () => cond.notify())),
      };
    },
    semaphore(shared) {
      const { Semaphore } = require('../..');
      const i32 = new Int32Array(shared.sab);
      // Made (shared.permits) by the main thread, before the workers start.
      const semaphore = isMainThread ? new Semaphore(shared.permits, i32, SEM) : Semaphore.from({ i32a: i32, index: SEM });
      return {
        lockUnlock(f) {
          semaphore.acquireSync(1);
          try {
            f();
          } finally {
            semaphore.release(1);
          }
        },
        locked: (f) => semaphore.runExclusive(f),
        lockedN: (n, f) => semaphore.runExclusive(f, n),
      };
    },
    rwlock(shared) {
      const { RwLock } = require('../..');
      const i32 = new Int32Array(shared.sab);
      // Zeroed slots are a free RwLock: every thread builds its own instance.
      const rw = isMainThread ? new RwLock(i32, RW) : RwLock.from({ i32a: i32, index: RW });
      return {
        lockUnlock(f) {
          rw.readSync();
          try {
            f();
          } finally {
            rw.releaseRead();
          }
        },
        locked: (f) => rw.runShared(f),
        writeUnlock(f) {
          rw.writeSync();
          try {
            f();
          } finally {
            rw.releaseWrite();
          }
        },
        writeLocked: (f) => rw.runExclusive(f),
      };
    },
    barrier(shared) {
      const { Barrier } = require('../..');
      const i32 = new Int32Array(shared.sab);
      const barrier = isMainThread ? new Barrier(shared.parties, i32, BAR) : Barrier.from({ i32a: i32, index: BAR });
      return { arrive: () => barrier.arriveAndWait() };
    },
  },

  mutex: {
    label: 'Atomics.Mutex (V8)',
    // Node 18's V8 crashes (segfault) with --harmony-struct: not run there.
    child: (runtime) => (runtime.major < 20 ? { unsupported: `not run on Node ${runtime.major}: --harmony-struct crashes it` }
      : { flags: ['--harmony-struct'] }),
    lock(shared) {
      if (typeof Atomics.Mutex !== 'function') {
        return { unsupported: `no Atomics.Mutex in Node ${process.version} (needs --harmony-struct)` };
      }
      const M = Atomics.Mutex;
      const C = Atomics.Condition;
      const m = shared.mutex;
      const c = shared.condition;
      const hasAsync = typeof M.lockAsync === 'function';
      const hasCondAsync = hasAsync && typeof C.waitAsync === 'function';
      return {
        lockUnlock: (f) => M.lock(m, f),
        locked: hasAsync ? (f) => M.lockAsync(m, f) : null,
        lockedMissing: `no Atomics.Mutex.lockAsync in Node ${process.version}`,
        conditionBlocking: (run) => M.lock(m, () => run(() => C.wait(c, m), () => C.notify(c, 1))),
        conditionAsync: hasCondAsync
          ? (run) => M.lockAsync(m, () => run(() => C.waitAsync(c, m), () => C.notify(c, 1))).then((r) => r.value)
          : null,
        conditionAsyncMissing: `no ${hasAsync ? 'Atomics.Condition.waitAsync' : 'Atomics.Mutex.lockAsync'} in Node ${process.version}`,
      };
    },
    semaphore: 'V8 has no semaphore',
    rwlock: 'V8 has no reader-writer lock (Atomics.Mutex only)',
    barrier: 'V8 has no barrier',
  },

  weblocks: {
    label: 'Web Locks',
    lock: withWebLocks((locks) => ({
      locked: (f) => locks.request('lock-family', f),
      conditionBlocking: null,
      conditionBlockingMissing: 'Web Locks have no condition variable',
    })),
    semaphore: 'Web Locks have no semaphore',
    rwlock: withWebLocks((locks) => ({
      locked: (f) => locks.request('lock-family-rw', { mode: 'shared' }, f),
      writeLocked: (f) => locks.request('lock-family-rw', { mode: 'exclusive' }, f),
    })),
    barrier: 'Web Locks have no barrier',
  },

  multithreading: {
    label: 'multithreading',
    // Each thread makes a new handle over the same words, as the library's
    // own deserializer does with a Mutex / Condvar / Semaphore / RwLock /
    // Barrier posted to a worker (src/lib/sync/*.js: toDeserialized). The
    // workers here are plain worker_threads, not the library's spawn()
    // pool, so the handle is made from the shared buffer directly.
    lock: withMultithreading((lib, shared) => {
      const m = new lib.Mutex(undefined, shared.lockSab);
      const cv = new lib.Condvar(shared.condSab);
      return {
        lockUnlock(f) {
          const guard = m.blockingLock();
          try {
            f();
          } finally {
            guard.dispose();
          }
        },
        async locked(f) {
          const guard = await m.lock();
          try {
            return f();
          } finally {
            guard.dispose();
          }
        },
        conditionBlocking(run) {
          const guard = m.blockingLock();
          try {
            return run(() => cv.blockingWait(guard), () => cv.notifyOne());
          } finally {
            guard.dispose();
          }
        },
        conditionAsync: (run) => m.lock().then((guard) =>
          run(() => cv.wait(guard), () => cv.notifyOne()).finally(() => guard.dispose())),
      };
    }),
    semaphore: withMultithreading((lib, shared) => {
      const semaphore = new lib.Semaphore(shared.permits, shared.semSab); // (semSab holds them: sharedState)
      return {
        lockUnlock(f) {
          const guard = semaphore.blockingAcquire(1);
          try {
            f();
          } finally {
            guard.dispose();
          }
        },
        async locked(f) {
          const guard = await semaphore.acquire(1);
          try {
            return f();
          } finally {
            guard.dispose();
          }
        },
        async lockedN(n, f) {
          const guard = await semaphore.acquire(n);
          try {
            return f();
          } finally {
            guard.dispose();
          }
        },
      };
    }),
    rwlock: withMultithreading((lib, shared) => {
      const rw = new lib.RwLock(undefined, shared.rwSab);
      return {
        lockUnlock(f) {
          const guard = rw.blockingRead();
          try {
            f();
          } finally {
            guard.dispose();
          }
        },
        async locked(f) {
          const guard = await rw.read();
          try {
            return f();
          } finally {
            guard.dispose();
          }
        },
        writeUnlock(f) {
          const guard = rw.blockingWrite();
          try {
            f();
          } finally {
            guard.dispose();
          }
        },
        async writeLocked(f) {
          const guard = await rw.write();
          try {
            return f();
          } finally {
            guard.dispose();
          }
        },
      };
    }),
    barrier: withMultithreading((lib, shared) => {
      const barrier = new lib.Barrier(undefined, shared.barSab); // (its capacity written in sharedState)
      return { arrive: () => barrier.blockingWait() };
    }),
  },

  post: {
    label: 'post (native Atomics)',
    lock(shared) {
      const why = noWaitAsync();
      if (why) return { unsupported: why };
      require('../..'); // as in lock-contention.js: every thread loads the package (harmless for post)
      const { AsyncLock } = require('../lock-post');
      const lock = new AsyncLock(shared.sab); // index 0 = LOCK
      return {
        lockUnlock(f) {
          lock.lock();
          try {
            f();
          } finally {
            lock.unlock();
          }
        },
        // The post's executeLocked returns nothing: f resolves the promise
        // (the post unlocks right after f).
        locked: (f) => new Promise((resolve) => lock.executeLocked(() => resolve(f()))),
        conditionBlocking: null,
        conditionBlockingMissing: 'the post has no condition variable',
      };
    },
    semaphore(shared) {
      const why = noWaitAsync();
      if (why) return { unsupported: why };
      require('../..'); // every thread loads the package, as in the lock rows
      const { NativeSemaphore } = require('../semaphore-native');
      const semaphore = new NativeSemaphore(shared.sab, SEM); // (holds shared.permits: sharedState)
      return {
        lockUnlock(f) {
          semaphore.acquire(1);
          try {
            f();
          } finally {
            semaphore.release(1);
          }
        },
        async locked(f) {
          await semaphore.acquireAsync(1);
          try {
            return f();
          } finally {
            semaphore.release(1);
          }
        },
        async lockedN(n, f) {
          await semaphore.acquireAsync(n);
          try {
            return f();
          } finally {
            semaphore.release(n);
          }
        },
      };
    },
    rwlock(shared) {
      const why = noWaitAsync();
      if (why) return { unsupported: why };
      require('../..'); // every thread loads the package, as in the lock rows
      const { NativeRwLock } = require('../rwlock-native');
      const rw = new NativeRwLock(shared.sab, RW);
      return {
        lockUnlock(f) {
          rw.read();
          try {
            f();
          } finally {
            rw.releaseRead();
          }
        },
        async locked(f) {
          await rw.readAsync();
          try {
            return f();
          } finally {
            rw.releaseRead();
          }
        },
        writeUnlock(f) {
          rw.write();
          try {
            f();
          } finally {
            rw.releaseWrite();
          }
        },
        async writeLocked(f) {
          await rw.writeAsync();
          try {
            return f();
          } finally {
            rw.releaseWrite();
          }
        },
      };
    },
    barrier(shared) {
      // (Blocking only: no native waitAsync needed.)
      require('../..'); // every thread loads the package, as in the lock rows
      const { NativeBarrier } = require('../barrier-native');
      const barrier = new NativeBarrier(shared.sab, BAR, shared.parties);
      return { arrive: () => barrier.arriveAndWait() };
    },
  },
};

const IMPLS = Object.keys(IMPLEMENTATIONS);

/** `impl`'s `form` for this thread, over `shared`: a promise of the form, or of `{ unsupported }`. */
async function implementation(impl, form, shared) {
  const entry = IMPLEMENTATIONS[impl];
  if (!entry) throw new Error(`unknown implementation ${impl}`);
  const make = entry[form];
  return typeof make === 'string' ? { unsupported: make } : make(shared);
}

/** What `impl`'s child process needs on `runtime`: `{ flags }`, or `{ unsupported }` where it is not run. */
function childOptions(impl, runtime) {
  const entry = IMPLEMENTATIONS[impl];
  return entry.child ? entry.child(runtime) : { flags: [] };
}

/**
 * The case's shared state, made by the main thread and posted to every
 * worker: the SharedArrayBuffer of SLOTS, the words multithreading keeps in
 * buffers of their own, and V8's mutex and condition. `permits`: the
 * semaphore's; `parties`: the barrier's (0 outside the barrier rows).
 */
function sharedState(impl, permits, parties) {
  const shared = {
    permits, // the semaphore rows' permits
    sab: new SharedArrayBuffer(SLOTS.COUNT * 4),
    lockSab: new SharedArrayBuffer(4),
    condSab: new SharedArrayBuffer(4),
    semSab: new SharedArrayBuffer(8), // multithreading's Semaphore: permits, waiters
    rwSab: new SharedArrayBuffer(4), // multithreading's RwLock: its state (0: free)
  };
  new Int32Array(shared.semSab)[0] = permits;
  new Int32Array(shared.sab)[SEM] = permits; // the native semaphore's (the package's writes its own)
  // multithreading's Barrier: lock, capacity, count, generation; as its
  // constructor writes it: capacity, and a count down from it.
  shared.barSab = new SharedArrayBuffer(16);
  if (parties) {
    shared.parties = parties;
    new Int32Array(shared.barSab)[1] = parties;
    new Int32Array(shared.barSab)[2] = parties;
  }
  if (impl === 'mutex' && typeof Atomics.Mutex === 'function') {
    shared.mutex = new Atomics.Mutex();
    shared.condition = new Atomics.Condition();
  }
  return shared;
}

/** The version of multithreading installed, for the results. */
function multithreadingVersion() {
  try {
    return require(path.join(__dirname, '..', '..', 'node_modules', 'multithreading', 'package.json')).version;
  } catch (_) {
    return 'not installed';
  }
}

module.exports = { SLOTS, IMPLEMENTATIONS, IMPLS, implementation, childOptions, sharedState, multithreadingVersion };
