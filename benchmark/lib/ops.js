'use strict';
// What every instruction-count case shares (benchmark/instructions/*.js,
// driven by `node benchmark/run.js --instructions`): the implementation
// (--impl native|addon, as in harness.js), how many measured operations to
// do (--ops N) and the case's parameter (--param P). run.js runs each case
// under callgrind twice, with --ops N and with --ops 0 (same program, same
// set-up and warm-up), and divides the difference in instructions by N. So
// a case must do exactly the same work in both runs except for its measured
// loop; it prints one JSON line and exits at once (process.exit), so that
// nothing left pending (waiters, workers) makes the two runs end differently.

const h = require('./harness');

// Nanoseconds spent in `timed` (the measured part), for `--wall` runs.
let measuredNs = 0;

/**
 * Runs the measured part, `fn()` (a value or a promise), and adds its wall
 * time to what the JSON line reports as `ns`: `run.js --instructions
 * --wall` runs the same programs without valgrind and divides it by N.
 * The clock is read twice per call, outside the loop, in both the N and
 * the 0 run, so it does not move the instruction counts.
 */
function timed(fn) {
  const start = process.hrtime.bigint();
  const done = () => {
    measuredNs += Number(process.hrtime.bigint() - start);
  };
  const result = fn();
  if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
    return result.then((value) => {
      done();
      return value;
    });
  }
  done();
  return result;
}

/** Adds `ns` measured elsewhere (by a worker) to the reported time. */
function addMeasured(ns) {
  measuredNs += ns;
}

/** The integer value of `--name V`, or `fallback`. */
function intArg(name, fallback) {
  const at = process.argv.indexOf('--' + name);
  if (at === -1) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} must be an integer >= 0`);
  return value;
}

/**
 * Runs `main(impl, name, ops, param)`: the case's set-up, warm-up and `ops`
 * measured operations. It returns (or resolves to) an object for the JSON
 * line, or `{ unsupported: reason }`.
 */
function run(main) {
  const name = implName();
  const ops = intArg('ops', 0);
  const param = intArg('param', 0);
  // process.stdout made now, in the set-up both runs share, not at the
  // JSON line's write after the measured loop. run.js reads stdout from a
  // pipe, and Node makes a pipe's stream (its templates, in old space) at
  // the first access: after the N run's loop had promoted a little, that
  // crossed V8's old-generation limit and set off one Mark-Compact of ~21
  // million instructions, whatever N, which the 0 run never had.
  // lock-uncontended (N = 50,000) read 1,454 instead of 1,025 instr/op,
  // 1,238 at N = 100,000; whether it happened hung on how much code the
  // package loads, not on the lock. To check a case for it: run it as
  // run.js does, stdout a pipe, with --trace-gc, for N and for 0, and
  // compare the Mark-Compact lines.
  const stdout = process.stdout;
  const stop = h.keepAlive();
  Promise.resolve()
    .then(() => main(h.load(name), name, ops, param))
    .then((result) => {
      stop();
      stdout.write(JSON.stringify(Object.assign({ impl: name, ops, param, ns: measuredNs }, result)) + '\n');
      process.exit(0); // stdout is a pipe: written synchronously on Linux
    })
    .catch((error) => {
      console.error(error && error.stack ? error.stack : error);
      process.exit(1);
    });
}

function implName() {
  const at = process.argv.indexOf('--impl');
  const name = at === -1 ? 'addon' : process.argv[at + 1];
  if (name !== 'native' && name !== 'addon') throw new Error(`--impl must be native or addon; got ${name}`);
  return name;
}

/**
 * The rare ways for a sync wait to end, each taken once before anything
 * is optimized, in the cases whose threads wait in turn: a value that
 * differs ("not-equal"), a timeout, and a timeout long enough to span the
 * addon's 10 ms slices (its `wait` returns PENDING to JS between them). Their type feedback is then in
 * place when TurboFan compiles `wait`; without it, the first of them in a
 * run, at a point the clock decides, deoptimized and recompiled the
 * waiting loop (ping-pong: ~15 million instructions, ~1,500 per round
 * trip, in the N part or in the 0 part of one run).
 */
function rareWaitPaths(impl) {
  const scratch = new Int32Array(new SharedArrayBuffer(4));
  impl.wait(scratch, 0, 1);
  impl.wait(scratch, 0, 0, 1);
  impl.wait(scratch, 0, 0, 25);
}

/** The same for the main thread's waitAsync: "not-equal", a timeout. */
async function rareWaitAsyncPaths(impl) {
  const scratch = new Int32Array(new SharedArrayBuffer(4));
  impl.waitAsync(scratch, 0, 1);
  await impl.waitAsync(scratch, 0, 0, 1).value;
}

module.exports = {
  run,
  timed,
  addMeasured,
  intArg,
  rareWaitPaths,
  rareWaitAsyncPaths,
  check: h.check,
  load: h.load,
  echo: h.echo,
};
