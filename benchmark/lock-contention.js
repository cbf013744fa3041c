'use strict';
// AsyncLock under contention: the main thread runs `await executeLocked(f)`
// in a loop while N workers (default 2) run lock(); f(); unlock(); f adds 1
// to a plain (non-atomic) Int32 slot, so the final count also checks mutual
// exclusion. Two implementations, same Node, same run, alternating, each
// case in a fresh process:
//   post     the V8 blog post's AsyncLock on native Atomics (benchmark/lock-post.js)
//   package  require('atomics-waitasync').AsyncLock
//
//   node benchmark/lock-contention.js [--rounds 7] [--ms 1000] [--workers 2] [--json]
//   node benchmark/lock-contention.js --threads 2,4,8 [--rounds 5] [--ms 1000]
//
// --threads LIST: one table row per total thread count (main + LIST-1
// workers, all contending), written to benchmark/results-lock.{md,json}
// (read by benchmark/chart.js; its ratio is time per lock operation,
// post ops/s ÷ package ops/s, so lower is better as in the other charts).
//
// Prints lock operations per second (all threads together, and main's
// share), the median over the rounds, and package/post as the median of the
// per-round ratios (each round runs the two back to back). --json adds one
// JSON line with the figures. On a runtime without Atomics.waitAsync (Node
// < 16) the post's lock cannot run: its row says n/a.

const { isMainThread, workerData, parentPort } = require('worker_threads');
const { performance } = require('perf_hooks');
const d = require('./lib/driver');
const h = require('./lib/harness');

// Int32 slots of the case's SharedArrayBuffer, each on its own cache line.
const LOCK = 0; // the lock word (index 0: both locks use AsyncLock.INDEX)
const COUNTER = 16; // the non-atomic counter f increments
const GO = 32; // 1: start; 2: stop
const SLOTS = 48;

function loadLock(impl) {
  return impl === 'post' ? require('./lock-post').AsyncLock : require('..').AsyncLock;
}

if (!isMainThread) {
  workerMain();
} else if (d.flag('--case')) {
  runCase(d.arg('case'), Number(d.arg('ms', 1000)), Number(d.arg('workers', 2))).then(
    (result) => process.stdout.write(JSON.stringify(result) + '\n'),
    (error) => {
      console.error(error);
      process.exit(1);
    }
  );
} else {
  orchestrate();
}

/** A worker: lock/unlock in a loop from GO=1 until GO=2; posts its count. */
function workerMain() {
  const { impl, sab } = workerData;
  require('..'); // every thread that waits through the package loads it (harmless for post)
  const AsyncLock = loadLock(impl);
  const lock = new AsyncLock(sab);
  const i32 = new Int32Array(sab);
  parentPort.postMessage('ready');
  while (Atomics.load(i32, GO) === 0) Atomics.wait(i32, GO, 0);
  let ops = 0;
  while (Atomics.load(i32, GO) === 1) {
    lock.lock();
    i32[COUNTER] = i32[COUNTER] + 1;
    lock.unlock();
    ops++;
  }
  parentPort.postMessage(ops);
}

/** One case in this process: returns { impl, ops, mainOps, ms, counter }. */
async function runCase(impl, ms, workers) {
  if (impl === 'post' && typeof Atomics.waitAsync !== 'function') {
    return { impl, unsupported: `no native Atomics.waitAsync in Node ${process.version}` };
  }
  const AsyncLock = loadLock(impl);
  const sab = new SharedArrayBuffer(SLOTS * 4);
  const i32 = new Int32Array(sab);
  const lock = new AsyncLock(sab);
  const threads = [];
  for (let w = 0; w < workers; w++) threads.push(h.startWorker(__filename, { impl, sab }));
  for (const t of threads) await t.next(); // 'ready'

  // The post's executeLocked returns nothing: wrap it so the loop can await
  // it (f resolves the promise; the post unlocks right after f).
  const inc = () => {
    i32[COUNTER] = i32[COUNTER] + 1;
  };
  const run =
    impl === 'post'
      ? () => new Promise((resolve) => lock.executeLocked(() => {
        inc();
        resolve();
      }))
      : () => lock.executeLocked(inc);

  Atomics.store(i32, GO, 1);
  Atomics.notify(i32, GO);
  const start = performance.now();
  const end = start + ms;
  let mainOps = 0;
  while (performance.now() < end) {
    await run();
    mainOps++;
  }
  Atomics.store(i32, GO, 2);
  const elapsed = performance.now() - start;
  let ops = mainOps;
  for (const t of threads) ops += await t.next();
  for (const t of threads) await t.worker.terminate();
  const counter = i32[COUNTER];
  if (counter !== ops) throw new Error(`mutual exclusion broken: counter ${counter}, lock operations ${ops}`);
  return { impl, ops, mainOps, ms: elapsed, counter };
}

/** Runs one configuration, `rounds` rounds alternating; its figures. */
function measureRounds(rounds, ms, workers) {
  const impls = ['post', 'package'];
  const perSec = { post: [], package: [] };
  const mainPerSec = { post: [], package: [] };
  const ratios = [];
  let unsupported = null;
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first, so drift on a noisy machine hits both.
    const order = r % 2 === 0 ? impls : impls.slice().reverse();
    for (const impl of order) {
      const { child, result, why } = d.runJson(process.execPath,
        [__filename, '--case', impl, '--ms', String(ms), '--workers', String(workers)], { timeout: ms * 20 + 30000 });
      if (child.status !== 0 || !result) {
        console.error(`${impl} failed (${why}):\n${child.stderr}`);
        process.exit(1);
      }
      if (result.unsupported) {
        unsupported = result.unsupported;
        continue;
      }
      perSec[impl].push((result.ops / result.ms) * 1000);
      mainPerSec[impl].push((result.mainOps / result.ms) * 1000);
    }
    // Each round's pair ran back to back: their ratio survives slow drift.
    if (perSec.post.length === r + 1) ratios.push(perSec.package[r] / perSec.post[r]);
  }
  return { perSec, mainPerSec, ratios, unsupported };
}

/** `--threads 2,4,8`: one row per thread count; writes results-lock.{md,json}. */
function orchestrateThreads(list) {
  const os = require('os');
  const rounds = Number(d.arg('rounds', 5));
  const ms = Number(d.arg('ms', 1000));
  const command = d.commandLine('benchmark/lock-contention.js');
  const loadBefore = d.load();
  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  const rows = list.map((threads) => {
    const m = measureRounds(rounds, ms, threads - 1);
    const row = {
      threads,
      post: m.perSec.post.length ? h.median(m.perSec.post) : null,
      package: h.median(m.perSec.package),
      // package ops/s over post ops/s, median of the rounds (higher is better)
      throughputRatio: m.ratios.length ? h.median(m.ratios) : null,
      ratios: m.ratios,
    };
    console.error(`  ${threads} threads: package ${fmt(row.package)} ops/s, post ${row.post === null ? 'n/a' : fmt(row.post)}`);
    return row;
  });
  const table = ['| threads contending | post (native Atomics), lock ops/s | atomics-waitasync, lock ops/s | throughput, package / post | time per op, ratio |',
    '|---:|---:|---:|---:|---:|']
    .concat(rows.map((r) => `| ${r.threads} | ${r.post === null ? 'n/a' : fmt(r.post)} | ${fmt(r.package)} | ` +
      `${r.throughputRatio === null ? '—' : r.throughputRatio.toFixed(2) + '×'} | ${r.throughputRatio === null ? '—' : (1 / r.throughputRatio).toFixed(2)} |`))
    .join('\n');
  const about = `Command: \`${command}\`\n\nNode ${process.version} (${process.platform}-${process.arch}), ${os.cpus().length} cores; ` +
    `main thread \`await executeLocked(f)\` + (threads − 1) workers \`lock(); f(); unlock()\`, f a non-atomic increment; ` +
    `${rounds} rounds × ${ms} ms per implementation, alternating, each in a fresh process; medians over the rounds; ` +
    `1-minute load average ${loadBefore} before, ${d.load()} after.`;
  console.log(`${about}\n\n${table}`);
  d.writeResults('results-lock', `# AsyncLock under contention\n\n${about}\n\n${table}\n`, {
    kind: 'lock-contention', node: process.version, command, date: new Date().toISOString(), rounds, ms, rows,
  });
}

function orchestrate() {
  const threadList = d.arg('threads', null);
  if (threadList !== null) return orchestrateThreads(threadList.split(',').map(Number));
  const rounds = Number(d.arg('rounds', 7));
  const ms = Number(d.arg('ms', 1000));
  const workers = Number(d.arg('workers', 2));
  const impls = ['post', 'package'];
  console.log(`AsyncLock contention: main executeLocked + ${workers} workers lock/unlock, ` +
    `${rounds} rounds x ${ms} ms, Node ${process.version} (${process.platform}-${process.arch})`);
  const { perSec, mainPerSec, ratios, unsupported } = measureRounds(rounds, ms, workers);
  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  const rows = [];
  for (const impl of impls) {
    if (!perSec[impl].length) {
      rows.push([impl === 'post' ? 'post (native Atomics)' : 'atomics-waitasync', 'n/a', 'n/a', 'n/a', '']);
      continue;
    }
    rows.push([
      impl === 'post' ? 'post (native Atomics)' : 'atomics-waitasync',
      fmt(h.median(perSec[impl])),
      fmt(h.median(mainPerSec[impl])),
      `${fmt(Math.min.apply(null, perSec[impl]))} .. ${fmt(Math.max.apply(null, perSec[impl]))}`,
      impl === 'package' && ratios.length ? `${h.median(ratios).toFixed(2)}x` : '',
    ]);
  }
  const head = ['AsyncLock', 'lock ops/s (median)', 'of which main', 'range over rounds', 'vs post (median of rounds)'];
  console.log(d.markdownTable(head, rows, [false, true, true, true, true]));
  if (unsupported) console.log(`post: ${unsupported}`);
  if (d.flag('--json')) {
    console.log(JSON.stringify({
      case: 'lock-contention',
      node: process.version,
      workers,
      ms,
      rounds,
      opsPerSec: { post: perSec.post.length ? h.median(perSec.post) : null, package: h.median(perSec.package) },
      ratio: ratios.length ? h.median(ratios) : null,
      ratios,
      mainOpsPerSec: { post: mainPerSec.post.length ? h.median(mainPerSec.post) : null, package: h.median(mainPerSec.package) },
    }));
  }
}

