'use strict';
// What every measured program shares. The cases of benchmark/cases/ (run
// by run.js): which implementation one measures (--impl), a keep-alive
// that treats both the same, and the one JSON line on stdout that run.js
// reads. They and the lock benchmarks' programs (lock-family.js,
// async-fairness.js, lock-contention.js): statistics, and workers whose
// messages are read in order. Cases run on any Node from 12.22 on, so no
// `?.`/`??` here either. Not a script: required by those programs (and
// lib/ops.js).

const path = require('path');
const { performance } = require('perf_hooks');

const IMPLS = ['native', 'addon'];

/** The implementation named by `--impl native|addon` (default addon). */
function implName() {
  const at = process.argv.indexOf('--impl');
  const name = at === -1 ? 'addon' : process.argv[at + 1];
  if (IMPLS.indexOf(name) === -1) {
    throw new Error(`--impl must be one of ${IMPLS.join(', ')}; got ${name}`);
  }
  return name;
}

/**
 * The triple under test, as users call it. native: this Node's built-ins
 * (`waitAsync` is null where the runtime lacks it, Node < 16); addon: the
 * package, required the way users require it. Every thread that waits or
 * notifies calls this with the same name.
 */
function load(name) {
  if (name === 'native') {
    return {
      waitAsync: typeof Atomics.waitAsync === 'function' ? Atomics.waitAsync : null,
      wait: Atomics.wait,
      notify: Atomics.notify,
    };
  }
  const pkg = require(path.join(__dirname, '..', '..'));
  return { waitAsync: pkg.waitAsync, wait: pkg.wait, notify: pkg.notify };
}

/** The raw addon, without index.js's validation (binding-only rows). */
function binding() {
  return require(path.join(__dirname, '..', '..', 'binding'));
}

/**
 * Keeps the process alive until the returned function is called. Node's
 * native waitAsync does not (nodejs/node#61941) and the addon does; both
 * impls get this same idle timer, so neither does extra work per wait.
 */
function keepAlive() {
  const handle = setInterval(() => {}, 1 << 30);
  return () => clearInterval(handle);
}

/** Nearest-rank percentile (0 < p <= 100) of an array of numbers (undefined if there are none). */
function percentile(values, p) {
  const sorted = Array.from(values).sort((a, b) => a - b);
  return sorted.length ? sortedPercentile(sorted, p) : undefined;
}

/** The same of numbers sorted already (a sorted Float64Array of latencies); null if there are none. */
function sortedPercentile(sorted, p) {
  if (!sorted.length) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

function median(values) {
  return percentile(values, 50);
}

/** Nanoseconds since an arbitrary origin, as a Number. */
function nowNs() {
  return Number(process.hrtime.bigint());
}

/** Resolves after `ms` milliseconds (a real timer, so it keeps us alive). */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A metric row. `key` identifies it across processes; `label` is what the
 * table shows. `extra`: `{ binding: true }` for rows only the addon has,
 * `{ noRatio: true }` where addon/native means nothing (a minimum, a ~0).
 */
function metric(key, label, unit, value, extra) {
  return Object.assign({ key, label, unit, value }, extra);
}

/**
 * Runs a case's `main(impl, name)` and prints its metrics as one JSON line.
 * A case returns `{ unsupported: reason }` when this runtime's native
 * implementation lacks what it measures.
 */
function run(main) {
  const name = implName();
  const stop = keepAlive();
  Promise.resolve()
    .then(() => main(load(name), name))
    .then((result) => {
      stop();
      const out = Array.isArray(result) ? { metrics: result } : result;
      process.stdout.write(JSON.stringify(out) + '\n');
    })
    .catch((error) => {
      stop();
      console.error(error && error.stack ? error.stack : error);
      process.exit(1); // workers still blocked in a wait would keep us alive
    });
}

/**
 * The worker side of a ping-pong (benchmark/cases/ping-pong.js and
 * benchmark/instructions/ping-pong.js): waits on ia[0]; an odd value is a
 * ping, answered with the next (even) value and a notify; a negative value
 * ends it. `counts`, if given, counts the waits that slept ([0], "ok") and
 * those that found the value changed already ([1], "not-equal").
 */
function echo(impl, ia, counts) {
  let seen = 0;
  for (;;) {
    const outcome = impl.wait(ia, 0, seen); // returns once ia[0] !== seen
    if (counts !== undefined) counts[outcome === 'not-equal' ? 1 : 0]++;
    const v = Atomics.load(ia, 0);
    if (v < 0) return;
    if (v % 2 === 1) {
      Atomics.store(ia, 0, v + 1);
      impl.notify(ia, 0, 1);
      seen = v + 1;
    } else {
      seen = v;
    }
  }
}

/**
 * Starts `file` as a worker with `workerData` `data`. `next()` resolves
 * with its next message (they queue up in order), `exited` with its exit
 * code. A worker that throws, or ends while `next()` waits for it (its
 * event loop emptied before it posted), ends this process with exit code 1
 * rather than leaving it waiting.
 */
function startWorker(file, data) {
  const { Worker } = require('worker_threads'); // (here: most cases never start one)
  const worker = new Worker(file, { workerData: data });
  const messages = [];
  let wake = null;
  worker.on('message', (m) => {
    messages.push(m);
    const w = wake;
    wake = null;
    if (w) w();
  });
  worker.on('error', (error) => {
    console.error(error);
    process.exit(1);
  });
  const exited = new Promise((resolve) => {
    worker.on('exit', (code) => {
      if (wake) {
        console.error(`a worker ended (exit code ${code}) before it posted its result`);
        process.exit(1);
      }
      resolve(code);
    });
  });
  const next = () =>
    messages.length ? Promise.resolve(messages.shift()) : new Promise((r) => (wake = () => r(messages.shift())));
  return { worker, next, exited };
}

/** Fails the case loudly when a sanity check does not hold. */
function check(condition, message) {
  if (!condition) throw new Error('benchmark sanity check failed: ' + message);
}

module.exports = {
  load,
  binding,
  keepAlive,
  percentile,
  sortedPercentile,
  median,
  nowNs,
  sleep,
  metric,
  run,
  check,
  echo,
  startWorker,
  performance,
};
