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
// (family/implementations.js: each behind one shape per primitive).
//
// Cases (family/cases.js, one table; an implementation that cannot run one
// says n/a, with the reason):
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
// Each case with each implementation runs in a fresh process, this file
// with --child (family/cases.js `runCase`), its workers this file too
// (`workerMain`); family/report.js orchestrates and writes the results.
// Not part of `npm test`: timings are claims for the results file, never
// limits in tests.

const { isMainThread } = require('worker_threads');
const d = require('./lib/driver');

if (!isMainThread) {
  require('./family/cases').workerMain().catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else if (d.flag('--child')) {
  require('./family/cases').runCase(d.arg('child'), d.arg('impl'), Number(d.arg('ms', 1000))).then(
    (result) => process.stdout.write(JSON.stringify(result) + '\n'),
    (error) => {
      console.error(error);
      process.exit(1);
    }
  );
} else {
  require('./family/report').orchestrate();
}
