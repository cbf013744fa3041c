'use strict';
// The package's AsyncLock and Condition against what users could pick
// instead, same Node, same run, each case in a fresh process, the
// implementations alternating (rotated) from round to round:
//
//   package         require('atomics-waitasync'): AsyncLock, Condition (Semaphore, Barrier,
//                   RwLock in their rows)
//   mutex           V8's Atomics.Mutex / Atomics.Condition (`node --harmony-struct`;
//                   lockAsync and Condition.waitAsync only where they exist, Node 24 here)
//   weblocks        Node's Web Locks, require('worker_threads').locks (async only; Node 24
//                   here, absent in 20 and 22)
//   multithreading  the npm package `multithreading` (Mutex, Condvar, Semaphore, Barrier,
//                   RwLock; a devDependency for this benchmark only; on Node 20 it needs a
//                   global `navigator`, shimmed)
//   post            the V8 blog post's lock on native Atomics (benchmark/lock-post.js); in
//                   the semaphore, barrier and rwlock rows one written by hand on native
//                   Atomics (benchmark/{semaphore,barrier,rwlock}-native.js)
//
// Cases (an implementation that cannot run one says n/a, with the reason):
//   blocking         uncontended lock; f(); unlock() on the main thread, ns per operation
//   async            uncontended `await executeLocked(f)` (or the competitor's form), ns per operation
//   contended-2/-4   2 / 4 workers lock(); f(); unlock() in a loop (Web Locks: async loops),
//                    lock operations per second, all threads together
//   async-contended-2/-4   the same with every worker in an async loop (`await executeLocked(f)`)
//   condition-main   ping-pong over a condition: main thread awaits (waitAsync), a worker
//                    blocks (wait); round trips per second
//   condition-workers  the same between two blocking workers
//   semaphore-*      the blocking, async and contended-2/-4 rows over a semaphore of 1 permit
//   barrier-2/-4     2 / 4 workers pass a barrier's phases for --ms (each stops after the
//                    same phase); phases per second
//   rwlock-read-blocking / rwlock-read-async   uncontended read lock; r(); release on the
//                    main thread (blocking, and `await rw.runShared(r)` or the competitor's
//                    form), ns per operation
//   rwlock-contended-2/-4   2 / 4 workers in a blocking loop (Web Locks: async loops) where
//                    every 10th operation takes the write lock around w() and the others a
//                    read around r(); operations (reads and writes) per second, all together
//   fairness         3 workers lock/unlock in a tight loop (Web Locks: async loops) while the
//                    main thread runs `await executeLocked(f)` for --ms: main's acquisitions
//                    per second and the latency of each (p50/p99/max)
//   rwlock-writer-wait  3 workers take reads in a tight loop (Web Locks: async loops) while
//                    the main thread takes the write lock again and again (async): its writes
//                    per second and the wait of each (p50/p99/max): writer starvation
//   semaphore-large-wait  a semaphore of 4: 3 workers take 1 permit in a tight loop while
//                    the main thread takes all 4 again and again (async): its acquisitions
//                    per second and the wait of each: a large request among small ones
// f adds 1 to a plain (non-atomic) Int32 slot: each case checks the final
// count against the operations counted, so it also checks mutual exclusion.
// The rwlock rows: w() adds 1 to that slot and copies the new count to a
// second plain slot (MIRROR), r() checks that the two are equal; the count
// is checked against the writes, and a read that saw the two differ (a
// write under way) is a violation, reported like a lost update.
//
//   node benchmark/lock-family.js [--rounds 5] [--ms 1000] [--runtimes node20,node22,node24]
//        [--node PATH] [--case a,b] [--impl a,b] [--no-write] [--json]
//
// --runtimes takes names from scripts/runtimes.js (installing what is
// missing); --node one binary; default: this Node. A run of every case and
// implementation writes benchmark/results-family.{md,json} (not with --case,
// --impl or --no-write). --json also prints one JSON line with the figures.
// Not part of `npm test`: timings are claims for the results file, never
// limits in tests.

const { spawnSync } = require('child_process');
const { Worker, isMainThread, workerData, parentPort } = require('worker_threads');
const { performance } = require('perf_hooks');
const path = require('path');

// Int32 slots of the case's SharedArrayBuffer, each on its own cache line.
const LOCK = 0; // the package's and the post's lock word (the post uses index 0)
const COUNTER = 16; // the non-atomic counter f increments
const GO = 32; // 1: start; 2: stop
const TURN = 48; // condition ping-pong: 0 the initiator's turn, 1 the responder's
const STOP = 64; // condition ping-pong: 1 once the initiator is done (read under the lock)
const COND = 80; // the package's condition word
const SEM = 96; // the package's and the native semaphore's three words
const BAR = 112; // the package's and the native barrier's words
const LAST = 128; // barrier rows: the phase every worker stops after
const PHASE = 144; // barrier rows: the phases worker 0 passed
const RW = 160; // the package's and the native rwlock's two words
const MIRROR = 176; // rwlock rows: the writer copies COUNTER here; a reader checks the two agree
const INUSE = 192; // semaphore-large-wait: permits held now (each holder adds what it took)
const OVER = 208; // semaphore-large-wait: holders that saw more permits held than there are
const SLOTS = 224;

const IMPLS = ['package', 'mutex', 'weblocks', 'multithreading', 'post'];
const CASES = ['blocking', 'async', 'contended-2', 'contended-4', 'async-contended-2', 'async-contended-4',
  'condition-main', 'condition-workers', 'fairness',
  'semaphore-blocking', 'semaphore-async', 'semaphore-contended-2', 'semaphore-contended-4',
  'barrier-2', 'barrier-4',
  'rwlock-read-blocking', 'rwlock-read-async', 'rwlock-contended-2', 'rwlock-contended-4',
  'rwlock-writer-wait', 'semaphore-large-wait'];
const IMPL_LABEL = {
  package: 'atomics-waitasync',
  mutex: 'Atomics.Mutex (V8)',
  weblocks: 'Web Locks',
  multithreading: 'multithreading',
  post: 'post (native Atomics)',
};

function arg(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
}

// ---------------------------------------------------------------------------
// The implementations, behind one shape. Every thread builds its own from the
// shared state of the case: { sab, lockSab, condSab, mutex, condition }.
//   lockUnlock(f)   blocking: take the lock, f(), release
//   locked(f)       async: a promise that settles after f ran holding the lock
//   initiator(ms, blocking) / responder(): the two ends of the condition ping-pong
// A member is null where the implementation has no such form, and a
// ...Missing string says why; `unsupported` says why it cannot run at all.
// ---------------------------------------------------------------------------

async function implementation(impl, shared, form) {
  if (form === 'barrier') return barrierImplementation(impl, shared);
  if (form === 'rwlock') return rwlockImplementation(impl, shared);
  return form === 'semaphore' ? semaphoreImplementation(impl, shared) : lockImplementation(impl, shared);
}

/**
 * The barrier rows: `arrive()` blocks until all `shared.parties` workers
 * arrived (made by the main thread before the workers start).
 */
async function barrierImplementation(impl, shared) {
  const i32 = new Int32Array(shared.sab);
  if (impl === 'package') {
    const { Barrier } = require('..');
    const barrier = isMainThread ? new Barrier(shared.parties, i32, BAR) : Barrier.from({ i32a: i32, index: BAR });
    return { arrive: () => barrier.arriveAndWait() };
  }
  if (impl === 'multithreading') {
    const lib = await loadMultithreading();
    if (lib.unsupported) return lib;
    const barrier = new lib.Barrier(undefined, shared.barSab); // (its capacity written in sharedState)
    return { arrive: () => barrier.blockingWait() };
  }
  if (impl === 'post') {
    require('..'); // every thread loads the package, as in the lock rows
    const { NativeBarrier } = require('./barrier-native');
    const barrier = new NativeBarrier(shared.sab, BAR, shared.parties);
    return { arrive: () => barrier.arriveAndWait() };
  }
  return { unsupported: impl === 'weblocks' ? 'Web Locks have no barrier' : 'V8 has no barrier' };
}

/**
 * The semaphore rows, behind the lock's shape: a semaphore of 1 permit,
 * taken and given back around f (so that the counter still checks that
 * the permits held never exceed the semaphore's).
 *   lockUnlock(f)   blocking: take 1, f(), give it back
 *   locked(f)       async: a promise that settles after f ran holding it
 */
async function semaphoreImplementation(impl, shared) {
  const i32 = new Int32Array(shared.sab);
  if (impl === 'package') {
    const { Semaphore } = require('..');
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
  }
  if (impl === 'multithreading') {
    const lib = await loadMultithreading();
    if (lib.unsupported) return lib;
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
  }
  if (impl === 'post') {
    if (typeof Atomics.waitAsync !== 'function') {
      return { unsupported: `no native Atomics.waitAsync in Node ${process.version}` };
    }
    require('..'); // every thread loads the package, as in the lock rows
    const { NativeSemaphore } = require('./semaphore-native');
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
  }
  return { unsupported: impl === 'weblocks' ? 'Web Locks have no semaphore' : 'V8 has no semaphore' };
}

/**
 * The rwlock rows, behind the lock's shape for reads, and the same two
 * forms for writes:
 *   lockUnlock(f)   blocking: take a read, f(), give it back
 *   locked(f)       async: a promise that settles after f ran holding a read
 *   writeUnlock(f), writeLocked(f)   the same with the write lock
 */
async function rwlockImplementation(impl, shared) {
  const i32 = new Int32Array(shared.sab);
  if (impl === 'package') {
    const { RwLock } = require('..');
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
  }
  if (impl === 'multithreading') {
    const lib = await loadMultithreading();
    if (lib.unsupported) return lib;
    // A handle over the same lock word, as the library's deserializer makes
    // for a posted RwLock (src/lib/sync/rwlock.js: toDeserialized).
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
  }
  if (impl === 'weblocks') {
    const locks = require('worker_threads').locks;
    if (!locks || typeof locks.request !== 'function') {
      return { unsupported: `no require('worker_threads').locks in Node ${process.version}` };
    }
    return {
      lockUnlock: null,
      lockUnlockMissing: 'Web Locks are async only',
      locked: (f) => locks.request('lock-family-rw', { mode: 'shared' }, f),
      writeLocked: (f) => locks.request('lock-family-rw', { mode: 'exclusive' }, f),
    };
  }
  if (impl === 'post') {
    if (typeof Atomics.waitAsync !== 'function') {
      return { unsupported: `no native Atomics.waitAsync in Node ${process.version}` };
    }
    require('..'); // every thread loads the package, as in the lock rows
    const { NativeRwLock } = require('./rwlock-native');
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
  }
  return { unsupported: 'V8 has no reader-writer lock (Atomics.Mutex only)' };
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

async function lockImplementation(impl, shared) {
  const i32 = new Int32Array(shared.sab);
  if (impl === 'package') {
    const { AsyncLock, Condition } = require('..');
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
      initiator(ms, blocking) {
        if (blocking) {
          lock.lock();
          try {
            return pingPong(i32, ms, () => cond.wait(lock), () => cond.notify());
          } finally {
            lock.unlock();
          }
        }
        return lock.executeLocked(() =>
          pingPongAsync(i32, ms, () => cond.waitAsync(lock), () => cond.notify()));
      },
      responder() {
        lock.lock();
        try {
          return respond(i32, () => cond.wait(lock), () => cond.notify());
        } finally {
          lock.unlock();
        }
      },
    };
  }
  if (impl === 'mutex') {
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
      initiator(ms, blocking) {
        if (blocking) return M.lock(m, () => pingPong(i32, ms, () => C.wait(c, m), () => C.notify(c, 1)));
        if (!hasCondAsync) return null;
        return M.lockAsync(m, () => pingPongAsync(i32, ms, () => C.waitAsync(c, m), () => C.notify(c, 1)))
          .then((r) => r.value);
      },
      initiatorAsyncMissing: hasCondAsync ? null
        : `no ${hasAsync ? 'Atomics.Condition.waitAsync' : 'Atomics.Mutex.lockAsync'} in Node ${process.version}`,
      responder: () => M.lock(m, () => respond(i32, () => C.wait(c, m), () => C.notify(c, 1))),
    };
  }
  if (impl === 'weblocks') {
    const locks = require('worker_threads').locks;
    if (!locks || typeof locks.request !== 'function') {
      return { unsupported: `no require('worker_threads').locks in Node ${process.version}` };
    }
    return {
      lockUnlock: null,
      lockUnlockMissing: 'Web Locks are async only',
      locked: (f) => locks.request('lock-family', f),
      initiator: null,
      conditionMissing: 'Web Locks have no condition variable',
    };
  }
  if (impl === 'multithreading') {
    const lib = await loadMultithreading();
    if (lib.unsupported) return lib;
    // What the library's own deserializer does with a Mutex / Condvar posted
    // to a worker (src/lib/sync/mutex.js, condvar.js: toDeserialized): a new
    // handle over the same lock word. The workers here are plain
    // worker_threads, not the library's spawn() pool, so the handle is made
    // from the shared buffer directly.
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
      initiator(ms, blocking) {
        if (blocking) {
          const guard = m.blockingLock();
          try {
            return pingPong(i32, ms, () => cv.blockingWait(guard), () => cv.notifyOne());
          } finally {
            guard.dispose();
          }
        }
        return m.lock().then((guard) =>
          pingPongAsync(i32, ms, () => cv.wait(guard), () => cv.notifyOne()).finally(() => guard.dispose()));
      },
      responder() {
        const guard = m.blockingLock();
        try {
          return respond(i32, () => cv.blockingWait(guard), () => cv.notifyOne());
        } finally {
          guard.dispose();
        }
      },
    };
  }
  if (impl === 'post') {
    if (typeof Atomics.waitAsync !== 'function') {
      return { unsupported: `no native Atomics.waitAsync in Node ${process.version}` };
    }
    require('..'); // as in lock-contention.js: every thread loads the package (harmless for post)
    const { AsyncLock } = require('./lock-post');
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
      initiator: null,
      conditionMissing: 'the post has no condition variable',
    };
  }
  throw new Error(`unknown implementation ${impl}`);
}

// The condition ping-pong, holding the lock throughout except inside the
// waits. The initiator waits for TURN 0, counts a round trip, hands TURN to
// the responder and notifies; after `ms` it sets STOP instead. The
// responder answers each TURN 1 and counts; the two counts must agree.
function pingPong(i32, ms, wait, notify) {
  const end = performance.now() + ms;
  const start = performance.now();
  let trips = 0;
  for (;;) {
    while (i32[TURN] !== 0) wait();
    if (performance.now() >= end) break;
    i32[TURN] = 1;
    notify();
    trips++;
  }
  const elapsed = performance.now() - start;
  i32[STOP] = 1;
  notify();
  return { trips, ms: elapsed };
}

async function pingPongAsync(i32, ms, waitAsync, notify) {
  const end = performance.now() + ms;
  const start = performance.now();
  let trips = 0;
  for (;;) {
    while (i32[TURN] !== 0) await waitAsync();
    if (performance.now() >= end) break;
    i32[TURN] = 1;
    notify();
    trips++;
  }
  const elapsed = performance.now() - start;
  i32[STOP] = 1;
  notify();
  return { trips, ms: elapsed };
}

function respond(i32, wait, notify) {
  let answered = 0;
  for (;;) {
    while (i32[TURN] !== 1 && i32[STOP] === 0) wait();
    if (i32[STOP] !== 0) return answered;
    i32[TURN] = 0;
    answered++;
    notify();
  }
}

// ---------------------------------------------------------------------------
// Workers
// ---------------------------------------------------------------------------

/**
 * role 'loop': lock(); f(); unlock() (or, `async`, await locked(f)) from
 * GO=1 until GO=2, then posts its count. 'responder' / 'initiator': the
 * ends of the condition ping-pong.
 */
async function workerMain() {
  const { impl, shared, role, async, ms, form } = workerData;
  const i32 = new Int32Array(shared.sab);
  const api = await implementation(impl, shared, form);
  const inc = () => {
    i32[COUNTER] = i32[COUNTER] + 1;
  };
  parentPort.postMessage('ready');
  while (Atomics.load(i32, GO) === 0) Atomics.wait(i32, GO, 0);
  if (role === 'loop' && form === 'rwlock') {
    // Every 10th operation a write, the others reads; posts what it did
    // and how many of its reads saw a write under way.
    const pair = rwPair(i32);
    let ops = 0;
    let writes = 0;
    if (async) {
      const keepAlive = setInterval(() => {}, 1 << 30); // as below
      while (Atomics.load(i32, GO) === 1) {
        if (ops % 10 === 9 && !workerData.readsOnly) {
          await api.writeLocked(pair.write);
          writes++;
        } else {
          await api.locked(pair.read);
        }
        ops++;
      }
      clearInterval(keepAlive);
    } else {
      while (Atomics.load(i32, GO) === 1) {
        if (ops % 10 === 9 && !workerData.readsOnly) {
          api.writeUnlock(pair.write);
          writes++;
        } else {
          api.lockUnlock(pair.read);
        }
        ops++;
      }
    }
    parentPort.postMessage({ ops, writes, torn: pair.torn() });
  } else if (role === 'loop') {
    // (semaphore-large-wait: each holder checks the permits held.)
    const check = workerData.permitCheck ? permitCheck(i32, shared.permits) : null;
    const f = check ? () => check.use(1) : inc;
    let ops = 0;
    if (async) {
      // Node's native Atomics.waitAsync (the post's and multithreading's
      // async lock) and a pending Web Locks request do not keep a thread
      // alive (nodejs/node#61941): an idle timer does, for every
      // implementation alike.
      const keepAlive = setInterval(() => {}, 1 << 30);
      while (Atomics.load(i32, GO) === 1) {
        await api.locked(f);
        ops++;
      }
      clearInterval(keepAlive);
    } else {
      while (Atomics.load(i32, GO) === 1) {
        api.lockUnlock(f);
        ops++;
      }
    }
    parentPort.postMessage(check ? { ops } : ops);
  } else if (role === 'barrier') {
    // Phases until LAST (set by the main thread once its time is up, a
    // phase or two ahead of worker 0, so that every worker stops after the
    // same phase); worker 0 counts them in PHASE.
    let phase = 0;
    while (phase < Atomics.load(i32, LAST)) {
      api.arrive();
      phase++;
      if (workerData.first) Atomics.store(i32, PHASE, phase);
    }
    parentPort.postMessage(phase);
  } else if (role === 'responder') {
    parentPort.postMessage(api.responder());
  } else if (role === 'initiator') {
    parentPort.postMessage(api.initiator(ms, true));
  }
}

/**
 * semaphore-large-wait's f: use(n) adds n to the permits held now (INUSE),
 * counting in OVER a holder that sees more than `permits`, and 1 to
 * COUNTER, atomically (up to `permits` holders run it at once); then takes
 * its n back out of INUSE.
 */
function permitCheck(i32, permits) {
  return {
    use(n) {
      if (Atomics.add(i32, INUSE, n) + n > permits) Atomics.add(i32, OVER, 1);
      Atomics.add(i32, COUNTER, 1);
      Atomics.sub(i32, INUSE, n);
    },
  };
}

/**
 * The rwlock rows' f: write() adds 1 to COUNTER and copies the new count
 * to MIRROR (plain stores, one after the other); read() checks that the
 * two agree, counting the reads that saw them differ (torn()): none while
 * the lock keeps readers out of a write.
 */
function rwPair(i32) {
  let torn = 0;
  return {
    write() {
      const count = i32[COUNTER] + 1;
      i32[COUNTER] = count;
      i32[MIRROR] = count;
    },
    read() {
      if (i32[COUNTER] !== i32[MIRROR]) torn++;
    },
    torn: () => torn,
  };
}

function startWorker(data) {
  const worker = new Worker(__filename, { workerData: data });
  const messages = [];
  let wake = null;
  worker.on('message', (m) => {
    messages.push(m);
    const w = wake;
    wake = null;
    if (w) w();
  });
  worker.on('error', (e) => {
    console.error(e);
    process.exit(1);
  });
  // A worker whose event loop empties while it still waits would leave the
  // main thread waiting for its message: fail instead of hanging.
  worker.on('exit', (code) => {
    if (wake) {
      console.error(`a worker ended (exit code ${code}) before it posted its result`);
      process.exit(1);
    }
  });
  const next = () =>
    messages.length ? Promise.resolve(messages.shift()) : new Promise((r) => (wake = () => r(messages.shift())));
  return { worker, next };
}

// ---------------------------------------------------------------------------
// One case, one implementation, in this (fresh) process
// ---------------------------------------------------------------------------

function sharedState(impl, permits) {
  const shared = {
    permits, // the semaphore rows' permits
    sab: new SharedArrayBuffer(SLOTS * 4),
    lockSab: new SharedArrayBuffer(4),
    condSab: new SharedArrayBuffer(4),
    semSab: new SharedArrayBuffer(8), // multithreading's Semaphore: permits, waiters
    rwSab: new SharedArrayBuffer(4), // multithreading's RwLock: its state (0: free)
  };
  new Int32Array(shared.semSab)[0] = permits;
  new Int32Array(shared.sab)[SEM] = permits; // the native semaphore's (the package's writes its own)
  new Int32Array(shared.sab)[LAST] = 0x3fffffff; // barrier rows: until told
  shared.barSab = new SharedArrayBuffer(16); // multithreading's Barrier: lock, capacity, count, generation (measureCase)
  if (impl === 'mutex' && typeof Atomics.Mutex === 'function') {
    shared.mutex = new Atomics.Mutex();
    shared.condition = new Atomics.Condition();
  }
  return shared;
}

function unsupported(impl, reason) {
  return { impl, unsupported: reason };
}

/** A growable Float64Array of latencies. */
function samples() {
  let data = new Float64Array(1 << 16);
  let length = 0;
  return {
    push(v) {
      if (length === data.length) {
        const bigger = new Float64Array(data.length * 2);
        bigger.set(data);
        data = bigger;
      }
      data[length++] = v;
    },
    sorted: () => data.slice(0, length).sort(),
    get length() {
      return length;
    },
  };
}

function percentile(sorted, p) {
  if (!sorted.length) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

async function runCase(caseName, impl, ms) {
  const keepAlive = setInterval(() => {}, 1 << 30); // as in the workers
  try {
    return await measureCase(caseName, impl, ms);
  } finally {
    clearInterval(keepAlive);
  }
}

async function measureCase(fullCase, impl, ms) {
  // The semaphore rows run the lock rows' loops over a semaphore of 1; the
  // rwlock rows the same loops with reads (rwlock-read-blocking: the
  // blocking row) and, contended, a write every 10th operation.
  const barrierRow = /^barrier-(\d+)$/.exec(fullCase);
  const form = barrierRow ? 'barrier' : fullCase.startsWith('semaphore-') ? 'semaphore'
    : fullCase.startsWith('rwlock-') ? 'rwlock' : 'lock';
  const caseName = form === 'semaphore' ? fullCase.slice('semaphore-'.length)
    : form === 'rwlock' ? fullCase.slice('rwlock-'.length).replace(/^read-/, '') : fullCase;
  // semaphore-large-wait: 4 permits, each holder's f checks how many are held.
  const permits = caseName === 'large-wait' ? 4 : 1;
  const shared = sharedState(impl, permits);
  if (barrierRow) {
    shared.parties = Number(barrierRow[1]);
    // multithreading's Barrier, as its constructor writes it: capacity, and a count down from it.
    new Int32Array(shared.barSab)[1] = shared.parties;
    new Int32Array(shared.barSab)[2] = shared.parties;
    return measureBarrier(impl, shared, ms);
  }
  const i32 = new Int32Array(shared.sab);
  const api = await implementation(impl, shared, form);
  if (api.unsupported) return unsupported(impl, api.unsupported);
  const inc = () => {
    i32[COUNTER] = i32[COUNTER] + 1;
  };
  // Lock operations minus the counter: 0 unless two threads were inside f
  // at once and one increment was lost. Reported, not thrown, so that a
  // competitor that breaks mutual exclusion still gets its row (flagged).
  // The rwlock rows count writes only, and reads that saw a write under way.
  const lostUpdates = (ops) => ops - i32[COUNTER];
  const pair = form === 'rwlock' ? rwPair(i32) : null;
  const counted = caseName === 'large-wait' ? permitCheck(i32, permits) : null;

  if (caseName === 'blocking' || caseName === 'async') {
    const blocking = caseName === 'blocking';
    if (blocking && !api.lockUnlock) return unsupported(impl, api.lockUnlockMissing);
    if (!blocking && !api.locked) return unsupported(impl, api.lockedMissing);
    const batch = blocking ? 1000 : 100;
    const f = pair ? pair.read : inc;
    const loop = async (duration) => {
      let ops = 0;
      const start = performance.now();
      const end = start + duration;
      let now = start;
      while (now < end) {
        if (blocking) for (let k = 0; k < batch; k++) api.lockUnlock(f);
        else for (let k = 0; k < batch; k++) await api.locked(f);
        ops += batch;
        now = performance.now();
      }
      return { ops, ms: now - start };
    };
    const warm = await loop(Math.min(200, ms / 5));
    const run = await loop(ms);
    if (pair) {
      // Reads only: nothing written, no read may see the pair differ.
      return { impl, metrics: { nsPerOp: (run.ms * 1e6) / run.ops }, ops: run.ops, ms: run.ms,
        writes: 0, lost: lostUpdates(0), reads: warm.ops + run.ops, torn: pair.torn() };
    }
    return { impl, metrics: { nsPerOp: (run.ms * 1e6) / run.ops }, ops: run.ops, ms: run.ms,
      lost: lostUpdates(warm.ops + run.ops) };
  }

  const contended = /^(async-)?contended-(\d+)$/.exec(caseName);
  if (contended || caseName === 'fairness' || caseName === 'writer-wait' || caseName === 'large-wait') {
    const asyncWorkers = impl === 'weblocks' || (contended && contended[1] === 'async-');
    if (asyncWorkers && !api.locked) return unsupported(impl, api.lockedMissing);
    if (!asyncWorkers && !api.lockUnlock) return unsupported(impl, api.lockUnlockMissing);
    if (caseName === 'fairness' && !api.locked) return unsupported(impl, api.lockedMissing);
    // What the main thread takes, timing each (not in the contended rows):
    // the lock (fairness), the write lock (writer-wait: the workers only
    // read), all the permits (large-wait: the workers take 1 each).
    const mainTake = caseName === 'writer-wait' ? () => api.writeLocked(pair.write)
      : caseName === 'large-wait' ? () => api.lockedN(permits, () => counted.use(permits))
        : () => api.locked(inc);
    const workers = contended ? Number(contended[2]) : 3;
    const threads = [];
    for (let w = 0; w < workers; w++) {
      threads.push(startWorker({ impl, shared, role: 'loop', async: asyncWorkers, form, readsOnly: caseName === 'writer-wait',
        permitCheck: counted !== null }));
    }
    for (const t of threads) await t.next(); // 'ready'
    Atomics.store(i32, GO, 1);
    Atomics.notify(i32, GO);
    const start = performance.now();
    let mainOps = 0;
    let latency = null;
    if (contended) {
      await new Promise((resolve) => setTimeout(resolve, ms));
    } else {
      // Fairness: the main thread takes the lock again and again, timing
      // each acquisition. A timer stops the workers at the deadline, should
      // one acquisition still be waiting then (and should the main thread
      // never get it, the round ends with the child's timeout: an error).
      latency = samples();
      const end = start + ms;
      const stopper = setTimeout(() => Atomics.store(i32, GO, 2), ms + 50);
      let now = start;
      while (now < end) {
        await mainTake();
        const t = performance.now();
        latency.push(t - now);
        now = t;
        mainOps++;
      }
      clearTimeout(stopper);
    }
    Atomics.store(i32, GO, 2);
    const elapsed = performance.now() - start;
    let ops = mainOps;
    const perWorker = [];
    let writes = caseName === 'writer-wait' ? mainOps : 0;
    let torn = 0;
    for (const t of threads) {
      const n = await t.next();
      if (counted) {
        // The large-wait workers post { ops, over }.
        perWorker.push(n.ops);
        ops += n.ops;
      } else if (pair) {
        // The rwlock rows' workers post { ops, writes, torn }.
        perWorker.push(n.ops);
        ops += n.ops;
        writes += n.writes;
        torn += n.torn;
      } else {
        perWorker.push(n);
        ops += n;
      }
    }
    for (const t of threads) await t.worker.terminate();
    const metrics = { opsPerSec: (ops / elapsed) * 1000 };
    if (latency) {
      const sorted = latency.sorted();
      Object.assign(metrics, {
        mainPerSec: (mainOps / elapsed) * 1000,
        mainShare: mainOps / ops,
        p50us: percentile(sorted, 50) * 1000,
        p99us: percentile(sorted, 99) * 1000,
        maxUs: sorted[sorted.length - 1] * 1000,
      });
    }
    if (pair) {
      return { impl, metrics, ops, perWorker, ms: elapsed, writes, lost: lostUpdates(writes), reads: ops - writes, torn };
    }
    // large-wait: f adds to COUNTER atomically (holders are not exclusive);
    // OVER counts the holders that saw more permits held than there are.
    const lost = lostUpdates(ops);
    const overcommits = counted ? Atomics.load(i32, OVER) : 0;
    return { impl, metrics, ops, mainOps, perWorker, ms: elapsed, lost, overcommits };
  }

  if (caseName === 'condition-main' || caseName === 'condition-workers') {
    if (!api.initiator) return unsupported(impl, api.conditionMissing);
    const onMain = caseName === 'condition-main';
    if (onMain && api.initiatorAsyncMissing) return unsupported(impl, api.initiatorAsyncMissing);
    const responder = startWorker({ impl, shared, role: 'responder' });
    const initiator = onMain ? null : startWorker({ impl, shared, role: 'initiator', ms });
    await responder.next();
    if (initiator) await initiator.next();
    let result;
    if (onMain) {
      Atomics.store(i32, GO, 1);
      Atomics.notify(i32, GO);
      result = await api.initiator(ms, false);
    } else {
      Atomics.store(i32, GO, 1);
      Atomics.notify(i32, GO);
      result = await initiator.next();
    }
    const answered = await responder.next();
    await responder.worker.terminate();
    if (initiator) await initiator.worker.terminate();
    if (answered !== result.trips) throw new Error(`ping-pong out of step: ${result.trips} sent, ${answered} answered`);
    return { impl, metrics: { tripsPerSec: (result.trips / result.ms) * 1000 }, trips: result.trips, ms: result.ms };
  }
  throw new Error(`unknown case ${caseName}`);
}

/** A barrier row: `shared.parties` workers pass phases for `ms`; phases per second. */
async function measureBarrier(impl, shared, ms) {
  const i32 = new Int32Array(shared.sab);
  const api = await implementation(impl, shared, 'barrier');
  if (api.unsupported) return unsupported(impl, api.unsupported);
  const threads = [];
  for (let w = 0; w < shared.parties; w++) {
    threads.push(startWorker({ impl, shared, role: 'barrier', form: 'barrier', first: w === 0 }));
  }
  for (const t of threads) await t.next(); // 'ready'
  Atomics.store(i32, GO, 1);
  Atomics.notify(i32, GO);
  const start = performance.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  Atomics.store(i32, LAST, Atomics.load(i32, PHASE) + 2);
  const phases = [];
  for (const t of threads) phases.push(await t.next());
  const elapsed = performance.now() - start;
  for (const t of threads) await t.worker.terminate();
  if (phases.some((p) => p !== phases[0])) throw new Error(`barrier out of step: ${phases.join(', ')} phases`);
  return { impl, metrics: { phasesPerSec: (phases[0] / elapsed) * 1000 }, phases: phases[0], ms: elapsed };
}

// ---------------------------------------------------------------------------
// Orchestration: rounds × cases × implementations, fresh processes
// ---------------------------------------------------------------------------

/**
 * The rows of a case where the main thread takes something again and again
 * among busy workers, timing each take: its takes per second (`takes`),
 * the wait's p50, p99 and longest, and every thread's operations (`all`).
 */
function mainWaitMetrics(what, takes, all) {
  return [
    { key: 'mainPerSec', label: `${what}: ${takes}`, unit: '/s', better: 'higher' },
    { key: 'p50us', label: `${what}: wait p50`, unit: 'µs', better: 'lower' },
    { key: 'p99us', label: `${what}: wait p99`, unit: 'µs', better: 'lower' },
    { key: 'maxUs', label: `${what}: wait max`, unit: 'µs', better: 'lower' },
    { key: 'opsPerSec', label: `${what}: ${all}`, unit: 'ops/s', better: 'higher' },
  ];
}

// What each case reports: the metric its ratio is taken on, and which way is better.
const METRICS = {
  blocking: [{ key: 'nsPerOp', label: 'uncontended lock+unlock, blocking', unit: 'ns/op', better: 'lower' }],
  async: [{ key: 'nsPerOp', label: 'uncontended async lock (await)', unit: 'ns/op', better: 'lower' }],
  'contended-2': [{ key: 'opsPerSec', label: '2 workers contending, blocking', unit: 'ops/s', better: 'higher' }],
  'contended-4': [{ key: 'opsPerSec', label: '4 workers contending, blocking', unit: 'ops/s', better: 'higher' }],
  'async-contended-2': [{ key: 'opsPerSec', label: '2 workers contending, async', unit: 'ops/s', better: 'higher' }],
  'async-contended-4': [{ key: 'opsPerSec', label: '4 workers contending, async', unit: 'ops/s', better: 'higher' }],
  'condition-main': [{ key: 'tripsPerSec', label: 'condition ping-pong, main (async) ↔ worker', unit: 'round trips/s', better: 'higher' }],
  'condition-workers': [{ key: 'tripsPerSec', label: 'condition ping-pong, worker ↔ worker', unit: 'round trips/s', better: 'higher' }],
  'semaphore-blocking': [{ key: 'nsPerOp', label: 'semaphore, uncontended acquire+release, blocking', unit: 'ns/op', better: 'lower' }],
  'semaphore-async': [{ key: 'nsPerOp', label: 'semaphore, uncontended async acquire (await)', unit: 'ns/op', better: 'lower' }],
  'semaphore-contended-2': [{ key: 'opsPerSec', label: 'semaphore, 2 workers contending, blocking', unit: 'ops/s', better: 'higher' }],
  'semaphore-contended-4': [{ key: 'opsPerSec', label: 'semaphore, 4 workers contending, blocking', unit: 'ops/s', better: 'higher' }],
  'barrier-2': [{ key: 'phasesPerSec', label: 'barrier, 2 blocking workers, phases', unit: 'phases/s', better: 'higher' }],
  'barrier-4': [{ key: 'phasesPerSec', label: 'barrier, 4 blocking workers, phases', unit: 'phases/s', better: 'higher' }],
  'rwlock-read-blocking': [{ key: 'nsPerOp', label: 'rwlock, uncontended read lock+release, blocking', unit: 'ns/op', better: 'lower' }],
  'rwlock-read-async': [{ key: 'nsPerOp', label: 'rwlock, uncontended async read (await)', unit: 'ns/op', better: 'lower' }],
  'rwlock-contended-2': [{ key: 'opsPerSec', label: 'rwlock, 2 workers contending (1 write in 10), blocking', unit: 'ops/s', better: 'higher' }],
  'rwlock-contended-4': [{ key: 'opsPerSec', label: 'rwlock, 4 workers contending (1 write in 10), blocking', unit: 'ops/s', better: 'higher' }],
  'rwlock-writer-wait': mainWaitMetrics('rwlock, main writes vs 3 reading workers', 'writes', 'all operations'),
  'semaphore-large-wait': mainWaitMetrics('semaphore of 4, main takes 4 vs 3 workers taking 1', 'takes of 4', 'all takes'),
  fairness: [
    { key: 'mainPerSec', label: 'fairness: main acquisitions', unit: '/s', better: 'higher' },
    { key: 'mainShare', label: 'fairness: main share of all acquisitions', unit: 'fraction', better: 'higher' },
    { key: 'p50us', label: 'fairness: main wait p50', unit: 'µs', better: 'lower' },
    { key: 'p99us', label: 'fairness: main wait p99', unit: 'µs', better: 'lower' },
    { key: 'maxUs', label: 'fairness: main wait max', unit: 'µs', better: 'lower' },
    { key: 'opsPerSec', label: 'fairness: all acquisitions', unit: 'ops/s', better: 'higher' },
  ],
};

function median(values) {
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function runtimeInfo(node) {
  const probe = spawnSync(node, ['-p', 'JSON.stringify([process.version, process.versions.v8])'], { encoding: 'utf8' });
  if (probe.status !== 0) throw new Error(`cannot run ${node}: ${probe.stderr || probe.error}`);
  const [version, v8] = JSON.parse(probe.stdout);
  return { version, v8, major: Number(version.slice(1).split('.')[0]) };
}

function runChild(node, runtime, caseName, impl, ms) {
  const flags = [];
  if (impl === 'mutex') {
    // Node 18's V8 crashes (segfault) with --harmony-struct: not run there.
    if (runtime.major < 20) return { impl, unsupported: `not run on Node ${runtime.major}: --harmony-struct crashes it` };
    flags.push('--harmony-struct');
  }
  const child = spawnSync(node, flags.concat([__filename, '--child', caseName, '--impl', impl, '--ms', String(ms)]),
    { cwd: path.join(__dirname, '..'), encoding: 'utf8', timeout: ms * 20 + 30000 });
  const lines = (child.stdout || '').trim().split('\n');
  let result = null;
  try {
    result = JSON.parse(lines[lines.length - 1]);
  } catch (_) {
    // reported below
  }
  if (child.status !== 0 || !result) {
    const why = child.error ? child.error.message : `exit ${child.status}, signal ${child.signal}`;
    return { impl, error: `${caseName} ${impl} on Node ${runtime.version}: ${why}\n${child.stderr}` };
  }
  return result;
}

/** Every round of every case on one Node: { rows, unsupported, errors }. */
function measureRuntime(node, runtime, cases, impls, rounds, ms) {
  const perRound = {}; // case -> impl -> [result by round]
  const unsupportedWhy = {}; // case -> impl -> reason
  const errors = [];
  const violations = [];
  for (const caseName of cases) {
    perRound[caseName] = {};
    unsupportedWhy[caseName] = {};
    for (const impl of impls) perRound[caseName][impl] = [];
    for (let r = 0; r < rounds; r++) {
      // Rotate the order each round, so drift on a noisy machine hits all.
      const order = impls.slice(r % impls.length).concat(impls.slice(0, r % impls.length));
      for (const impl of order) {
        if (unsupportedWhy[caseName][impl]) continue;
        process.stderr.write(`  Node ${runtime.version} ${caseName} round ${r + 1}/${rounds} ${impl}\n`);
        const result = runChild(node, runtime, caseName, impl, ms);
        if (result.error) {
          errors.push({ caseName, impl, round: r + 1, message: result.error });
          console.error(result.error);
          continue;
        }
        if (result.unsupported) {
          unsupportedWhy[caseName][impl] = result.unsupported;
          continue;
        }
        perRound[caseName][impl][r] = result.metrics;
        if (result.lost || result.torn || result.overcommits) {
          // The rwlock rows count the writes' increments, and the reads that saw a write under way.
          const broken = [];
          if (result.lost) {
            broken.push(result.writes === undefined ? `${result.lost} of ${result.ops} increments lost`
              : `${result.lost} of ${result.writes} writes' increments lost`);
          }
          if (result.torn) broken.push(`${result.torn} of ${result.reads} reads saw a write under way (COUNTER ≠ MIRROR)`);
          if (result.overcommits) broken.push(`${result.overcommits} holders saw more permits held than the semaphore has`);
          const note = `${caseName}, ${IMPL_LABEL[impl]}, round ${r + 1}: mutual exclusion broken, ${broken.join('; ')}`;
          violations.push({ caseName, impl, round: r + 1, lost: result.lost, ops: result.ops, torn: result.torn, note });
          console.error(`  ${note}`);
        }
      }
    }
  }
  const rows = [];
  for (const caseName of cases) {
    for (const metric of METRICS[caseName]) {
      const row = { caseName, key: metric.key, label: metric.label, unit: metric.unit, better: metric.better,
        median: {}, rounds: {}, ratio: {}, ratios: {}, na: {} };
      for (const impl of impls) {
        const values = perRound[caseName][impl].map((m) => (m ? m[metric.key] : undefined));
        row.rounds[impl] = values;
        const present = values.filter((v) => v !== undefined);
        row.median[impl] = present.length ? median(present) : null;
        if (unsupportedWhy[caseName][impl]) row.na[impl] = unsupportedWhy[caseName][impl];
      }
      // package ÷ competitor, per round (the processes of a round ran close
      // together), then the median of those.
      for (const impl of impls) {
        if (impl === 'package') continue;
        const ratios = [];
        for (let r = 0; r < rounds; r++) {
          const p = row.rounds.package[r];
          const c = row.rounds[impl][r];
          if (p !== undefined && c !== undefined && c > 0) ratios.push(p / c);
        }
        row.ratios[impl] = ratios;
        row.ratio[impl] = ratios.length ? median(ratios) : null;
      }
      rows.push(row);
    }
  }
  return { rows, unsupported: unsupportedWhy, errors, violations };
}

function fmt(value) {
  if (value === null || value === undefined) return 'n/a';
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 0.01 || abs === 0) return value.toFixed(2);
  return value.toExponential(1);
}

function markdownTable(header, rows, rightAligned) {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (r) => '| ' + r.map((cell, c) => (rightAligned[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join(' | ') + ' |';
  const rule = '|' + widths.map((w, c) => (rightAligned[c] ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|') + '|';
  return [line(header), rule].concat(rows.map(line)).join('\n');
}

function figuresTable(rows, impls, violations) {
  const broken = (caseName, impl) => violations.some((v) => v.caseName === caseName && v.impl === impl);
  return markdownTable(['case', 'unit'].concat(impls.map((i) => IMPL_LABEL[i])),
    rows.map((row) => [row.label, row.unit].concat(impls.map((i) => fmt(row.median[i]) + (broken(row.caseName, i) ? ' †' : '')))),
    [false, false].concat(impls.map(() => true)));
}

function ratioTable(rows, impls) {
  const others = impls.filter((i) => i !== 'package');
  return markdownTable(['case', 'better'].concat(others.map((i) => `÷ ${IMPL_LABEL[i]}`)),
    rows.map((row) => [row.label, `${row.better}`].concat(others.map((i) => (row.ratio[i] === null ? '—' : `${row.ratio[i].toFixed(2)}×`)))),
    [false, false].concat(others.map(() => true)));
}

const FORMS = `What each implementation runs (f adds 1 to a plain Int32 slot):

| | blocking | async |
|---|---|---|
| atomics-waitasync | \`lock.lock(); f(); lock.unlock()\` | \`await lock.executeLocked(f)\`; condition: \`await cond.waitAsync(lock)\` inside executeLocked, workers \`cond.wait(lock)\` |
| Atomics.Mutex (V8) | \`Atomics.Mutex.lock(m, f)\`; \`Atomics.Condition.wait(c, m)\` | \`await Atomics.Mutex.lockAsync(m, f)\`; \`await Atomics.Condition.waitAsync(c, m)\` inside lockAsync |
| Web Locks | — | \`await locks.request('lock-family', f)\`, in every thread (also in the "blocking" contended rows) |
| multithreading | \`g = m.blockingLock(); f(); g.dispose()\`; \`cv.blockingWait(g)\` | \`g = await m.lock(); f(); g.dispose()\`; \`await cv.wait(g)\` |
| post (native Atomics) | \`lock.lock(); f(); lock.unlock()\` | \`executeLocked(f)\` wrapped in a promise f resolves |

Semaphore rows, a semaphore of 1 permit (so that the counter still checks the permits held):

| | blocking | async |
|---|---|---|
| atomics-waitasync | \`s.acquireSync(1); f(); s.release(1)\` | \`await s.runExclusive(f)\` |
| multithreading | \`g = s.blockingAcquire(1); f(); g.dispose()\` | \`g = await s.acquire(1); f(); g.dispose()\` |
| post (native Atomics) | a semaphore written by hand on native \`Atomics.wait\`/\`notify\` (benchmark/semaphore-native.js) | the same with \`Atomics.waitAsync\` |

RwLock rows (r checks that two plain slots a write updates together agree; w adds 1 to the counter and copies it to the
second slot; contended workers take the write lock around w every 10th operation, a read around r otherwise):

| | blocking | async |
|---|---|---|
| atomics-waitasync | \`rw.readSync(); r(); rw.releaseRead()\`; \`rw.writeSync(); w(); rw.releaseWrite()\` | \`await rw.runShared(r)\`; \`await rw.runExclusive(w)\` |
| Web Locks | — | \`await locks.request('lock-family-rw', { mode: 'shared' }, r)\`; \`mode: 'exclusive'\` for w (also in the "blocking" contended rows) |
| multithreading | \`g = rw.blockingRead(); r(); g.dispose()\`; \`rw.blockingWrite()\` | \`g = await rw.read(); r(); g.dispose()\`; \`await rw.write()\` |
| post (native Atomics) | a reader-writer lock written by hand on native \`Atomics.wait\`/\`notify\` (benchmark/rwlock-native.js) | the same with \`Atomics.waitAsync\` |

Contended rows: the main thread only starts and stops the workers. Fairness: 3 workers in a blocking loop
(Web Locks: async loops) while the main thread awaits the async form in a loop; "main share" is the main
thread's acquisitions over all acquisitions (4 threads: 0.25 would be an even share).`;

// The project's goals, package ÷ competitor.
const GOALS = [
  { caseName: 'blocking', key: 'nsPerOp', impl: 'mutex', max: 1.0, what: 'blocking uncontended, time per op ÷ Atomics.Mutex.lock' },
  { caseName: 'async', key: 'nsPerOp', impl: 'weblocks', max: 0.1, what: 'async uncontended, time per op ÷ Web Locks' },
  { caseName: 'contended-2', key: 'opsPerSec', impl: 'mutex', min: 1.0, what: '2 workers contending, throughput ÷ Atomics.Mutex' },
  { caseName: 'contended-4', key: 'opsPerSec', impl: 'mutex', min: 1.0, what: '4 workers contending, throughput ÷ Atomics.Mutex' },
  { caseName: 'blocking', key: 'nsPerOp', impl: 'multithreading', max: 1 / 1.5, what: 'blocking uncontended, time per op ÷ multithreading' },
  { caseName: 'async', key: 'nsPerOp', impl: 'multithreading', max: 1 / 1.5, what: 'async uncontended, time per op ÷ multithreading' },
  { caseName: 'contended-2', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: '2 workers contending, throughput ÷ multithreading' },
  { caseName: 'contended-4', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: '4 workers contending, throughput ÷ multithreading' },
  { caseName: 'async-contended-2', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: '2 workers contending async, throughput ÷ multithreading' },
  { caseName: 'async-contended-4', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: '4 workers contending async, throughput ÷ multithreading' },
  { caseName: 'condition-main', key: 'tripsPerSec', impl: 'multithreading', min: 1.5, what: 'condition main ↔ worker, round trips ÷ multithreading' },
  { caseName: 'condition-workers', key: 'tripsPerSec', impl: 'multithreading', min: 1.5, what: 'condition worker ↔ worker, round trips ÷ multithreading' },
  { caseName: 'semaphore-blocking', key: 'nsPerOp', impl: 'post', max: 1.0, what: 'semaphore blocking uncontended, time ÷ hand-written native' },
  { caseName: 'semaphore-async', key: 'nsPerOp', impl: 'post', max: 1.0, what: 'semaphore async uncontended, time ÷ hand-written native' },
  { caseName: 'semaphore-contended-2', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: 'semaphore 2 workers contending ÷ multithreading' },
  { caseName: 'semaphore-contended-4', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: 'semaphore 4 workers contending ÷ multithreading' },
  { caseName: 'barrier-2', key: 'phasesPerSec', impl: 'multithreading', min: 1.5, what: 'barrier phase, 2 parties ÷ multithreading' },
  { caseName: 'barrier-4', key: 'phasesPerSec', impl: 'multithreading', min: 1.5, what: 'barrier phase, 4 parties ÷ multithreading' },
  { caseName: 'rwlock-read-blocking', key: 'nsPerOp', impl: 'post', max: 1.0, what: 'rwlock blocking uncontended read, time ÷ hand-written native' },
  { caseName: 'rwlock-read-async', key: 'nsPerOp', impl: 'post', max: 1.0, what: 'rwlock async uncontended read, time ÷ hand-written native' },
  { caseName: 'rwlock-contended-2', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: 'rwlock 2 workers contending ÷ multithreading' },
  { caseName: 'rwlock-contended-4', key: 'opsPerSec', impl: 'multithreading', min: 1.5, what: 'rwlock 4 workers contending ÷ multithreading' },
];

function goalRows(rows) {
  return GOALS.map((g) => {
    const row = rows.find((r) => r.caseName === g.caseName && r.key === g.key);
    const ratio = row && row.ratio[g.impl] !== undefined ? row.ratio[g.impl] : null;
    const limit = g.max !== undefined ? `≤ ${g.max.toFixed(2)}` : `≥ ${g.min.toFixed(2)}`;
    const met = ratio === null ? null : g.max !== undefined ? ratio <= g.max : ratio >= g.min;
    return { what: g.what, limit, ratio, met };
  });
}

function goalsTable(goals) {
  return markdownTable(['goal (package ÷ competitor)', 'limit', 'measured', ''],
    goals.map((g) => [g.what, g.limit, g.ratio === null ? '—' : g.ratio.toFixed(2), g.met === null ? 'not measured' : g.met ? 'met' : 'MISSED']),
    [false, false, true, false]);
}

function coreVersion() {
  const git = (args) => spawnSync('git', args, { cwd: path.join(__dirname, '..'), encoding: 'utf8' });
  const head = git(['rev-parse', '--short', 'HEAD']);
  if (head.status !== 0) return 'core: not a git checkout';
  const dirty = git(['status', '--porcelain', '--', 'src', 'lib', 'index.js', 'binding.js', 'Cargo.toml']).stdout.trim();
  return `core: commit ${head.stdout.trim()}${dirty ? ' with uncommitted changes' : ''}`;
}

function multithreadingVersion() {
  try {
    return require(path.join(__dirname, '..', 'node_modules', 'multithreading', 'package.json')).version;
  } catch (_) {
    return 'not installed';
  }
}

function orchestrate() {
  const fs = require('fs');
  const os = require('os');
  if (process.argv.indexOf('--help') !== -1 || process.argv.indexOf('-h') !== -1) {
    console.error('usage: node benchmark/lock-family.js [--rounds 5] [--ms 1000] [--runtimes node20,node22,node24] ' +
      `[--node PATH] [--case ${CASES.join(',')}] [--impl ${IMPLS.join(',')}] [--no-write] [--json]`);
    process.exit(0);
  }
  const rounds = Number(arg('rounds', 5));
  const ms = Number(arg('ms', 1000));
  const cases = arg('case', null) ? arg('case').split(',') : CASES;
  const impls = arg('impl', null) ? arg('impl').split(',') : IMPLS;
  for (const c of cases) if (CASES.indexOf(c) === -1) throw new Error(`unknown case ${c}; known: ${CASES.join(', ')}`);
  for (const i of impls) if (IMPLS.indexOf(i) === -1) throw new Error(`unknown implementation ${i}; known: ${IMPLS.join(', ')}`);
  if (impls[0] !== 'package') throw new Error('--impl must start with package (the ratios are package ÷ competitor)');
  const write = process.argv.indexOf('--no-write') === -1 && !arg('case', null) && !arg('impl', null);
  let nodes;
  if (arg('runtimes', null)) {
    const { ensure } = require('../scripts/runtimes');
    nodes = arg('runtimes').split(',').map((name) => ensure(name).path);
  } else {
    nodes = [arg('node', process.execPath)];
  }
  const command = ['node', 'benchmark/lock-family.js'].concat(process.argv.slice(2)).join(' ');
  const cpus = os.cpus();
  const machine = `${os.platform()} ${os.arch()}, ${cpus.length} cores (${cpus[0].model.trim()})`;
  const started = Date.now();
  const loadBefore = os.loadavg()[0].toFixed(2);
  const results = [];
  // A competitor that crashes or loses updates is reported in the results;
  // only the package doing so fails the run.
  let packageFailures = 0;
  for (const node of nodes) {
    const runtime = runtimeInfo(node);
    const loadAt = os.loadavg()[0].toFixed(2);
    const m = measureRuntime(node, runtime, cases, impls, rounds, ms);
    packageFailures += m.errors.concat(m.violations).filter((e) => e.impl === 'package').length;
    results.push(Object.assign({ node: runtime.version, v8: runtime.v8, loadBefore: loadAt, loadAfter: os.loadavg()[0].toFixed(2) }, m));
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  const about = `${machine}; ${coreVersion()}; multithreading ${multithreadingVersion()}; ` +
    `${rounds} rounds × ${ms} ms per case and implementation, each in a fresh process, the order rotated every round; ` +
    `figures are medians over the rounds; ratios are package ÷ competitor, the median of the per-round ratios. ` +
    `Atomics.Mutex runs under \`node --harmony-struct\`, the others without flags. Whole run ${seconds} s, ` +
    `1-minute load average ${loadBefore} before, ${os.loadavg()[0].toFixed(2)} after.`;
  let md = `# AsyncLock and Condition against the alternatives\n\nMade by \`benchmark/lock-family.js\` (see its header for the cases).\n\n` +
    `Command: \`${command}\`\n\n${about}\n\n${FORMS}\n`;
  for (const r of results) {
    const naLines = [];
    for (const caseName of Object.keys(r.unsupported)) {
      for (const impl of Object.keys(r.unsupported[caseName])) naLines.push(`- ${caseName}, ${IMPL_LABEL[impl]}: ${r.unsupported[caseName][impl]}`);
    }
    md += `\n## Node ${r.node} (V8 ${r.v8})\n\n1-minute load average ${r.loadBefore} before, ${r.loadAfter} after.\n\n` +
      `${figuresTable(r.rows, impls, r.violations)}\n\nRatios, package ÷ competitor (\`better\` says which way is better for the package):\n\n` +
      `${ratioTable(r.rows, impls)}\n\n${goalsTable(goalRows(r.rows))}\n` +
      (naLines.length ? `\nn/a:\n\n${naLines.join('\n')}\n` : '') +
      (r.violations.length ? `\n† mutual exclusion broken (the non-atomic counter fell short of the lock operations, ` +
        `or an rwlock read saw a write under way):\n\n` +
        `${r.violations.map((v) => `- ${v.note}`).join('\n')}\n` : '') +
      (r.errors.length ? `\nRuns that failed (their round has no figure):\n\n` +
        `${r.errors.map((e) => `- ${e.message.split('\n')[0]}, round ${e.round}`).join('\n')}\n` : '');
  }
  console.log(md);
  if (write) {
    fs.writeFileSync(path.join(__dirname, 'results-family.md'), md);
    fs.writeFileSync(path.join(__dirname, 'results-family.json'), JSON.stringify({
      kind: 'lock-family', command, date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), machine,
      core: coreVersion(), multithreading: multithreadingVersion(), rounds, ms,
      runtimes: results.map((r) => ({ node: r.node, v8: r.v8, rows: r.rows, goals: goalRows(r.rows), unsupported: r.unsupported,
        violations: r.violations, errors: r.errors })),
    }, null, 2) + '\n');
    console.error('wrote benchmark/results-family.md and benchmark/results-family.json');
  }
  if (process.argv.indexOf('--json') !== -1) {
    console.log(JSON.stringify({ case: 'lock-family', rounds, ms,
      runtimes: results.map((r) => ({ node: r.node, rows: r.rows.map((row) => ({ caseName: row.caseName, key: row.key, median: row.median, ratio: row.ratio })) })) }));
  }
  if (packageFailures) process.exitCode = 1;
}

// Dispatch last: the tables above are consts.
if (!isMainThread) {
  workerMain().catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else if (process.argv.indexOf('--child') !== -1) {
  runCase(arg('child'), arg('impl'), Number(arg('ms', 1000))).then(
    (result) => process.stdout.write(JSON.stringify(result) + '\n'),
    (error) => {
      console.error(error);
      process.exit(1);
    }
  );
} else {
  orchestrate();
}
