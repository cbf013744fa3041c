'use strict';
// What the cold programs share (benchmark/cold/*.js, run by
// `node benchmark/run.js --cold`, lib/cold.js): the package's root, the
// implementation (--impl native|addon), and the one JSON line on stdout
// the driver reads. Nothing here loads a Node built-in that the process
// has not loaded already at start-up (`path` is part of Node's own
// start-up), so that requiring this file leaves the package's first
// require as cold as a user's. Unlike lib/harness.js, which loads
// perf_hooks, as the package does: that would make the package's own
// require of it free. require.js measures `require` itself and does not
// load this file before its measured part.

const path = require('path');

// The package under test: as published (scripts/stage.js), made from this
// checkout by lib/cold.js, which names its folder in
// ATOMICS_WAITASYNC_COLD_PACKAGE; else (a program run by hand) the checkout.
const CHECKOUT = path.join(__dirname, '..', '..');
const ROOT = process.env.ATOMICS_WAITASYNC_COLD_PACKAGE || CHECKOUT;

/** The value of `--name V` on this thread's command line, or `fallback`. */
function arg(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
}

/** The implementation named by `--impl native|addon`. */
function implName() {
  const name = arg('impl', 'addon');
  if (name !== 'native' && name !== 'addon') throw new Error(`--impl must be native or addon; got ${name}`);
  return name;
}

/**
 * The triple under test: native, this thread's global `Atomics`; addon,
 * the package (its exports; required here, so by the caller's thread, and
 * before any measured part).
 */
function load(name) {
  return name === 'native' ? Atomics : require(ROOT);
}

/**
 * Keeps the event loop alive until the returned function is called: native
 * waitAsync does not (nodejs/node#61941), the package's does; both get this
 * one idle timer, as in lib/harness.js.
 */
function keepAlive() {
  const handle = setInterval(() => {}, 1 << 30);
  return () => clearInterval(handle);
}

/**
 * Prints `result` as the JSON line the driver reads and ends the process
 * (pending waits and all), one turn of the event loop on: where the package
 * writes its family's code cache, when it has none.
 */
function done(result) {
  process.stdout.write(JSON.stringify(result) + '\n'); // stdout is a pipe: written synchronously on Linux
  setImmediate(() => process.exit(0));
}

/** Ends the process with the error on stderr. */
function fail(error) {
  console.error(error && error.stack ? error.stack : error);
  process.exit(1);
}

/** Fails the program loudly when a sanity check does not hold. */
function check(condition, message) {
  if (!condition) throw new Error('benchmark sanity check failed: ' + message);
}

/** Nanoseconds from `start` (a process.hrtime.bigint()) to now, as a Number. */
function since(start) {
  return Number(process.hrtime.bigint() - start);
}

module.exports = { CHECKOUT, ROOT, arg, implName, load, keepAlive, done, fail, check, since };
