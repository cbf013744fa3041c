'use strict';
// The smoke program scripts/test-install.js runs inside every freshly
// installed project (npm, pnpm, Yarn, Bun; Node 12-24, Bun, Deno; arm64 under
// qemu). It loads `atomics-waitasync` the way a user does, from the project's
// node_modules, and checks the three things a user needs first:
//
//   wait      a worker blocks in wait(), main notifies it; main's waitAsync
//             is woken by the worker's notify
//   lock      two workers lock()/unlock() and the main thread executeLocked()
//             around a non-atomic increment of a shared counter: the count is exact
//   polyfill  require('atomics-waitasync/polyfill') leaves Atomics.waitAsync a
//             function, and a waitAsync through it settles (timeout and notify)
//
// Prints `runtime <name> <version>`, `binary <path of the loaded .node>`, one
// `ok <check>` line per check and `smoke: ok` last; `smoke: FAIL <why>` and
// exit 1 otherwise. Plain Node 12 JavaScript, CommonJS; the same file is the
// workers' script.
//
// SMOKE_TIMEOUT_MS (default 60000): how long before a hang is a failure
// (raised under qemu).

var path = require('path');
var wt = require('worker_threads');
var pkg = require('atomics-waitasync');

var WORKER_INCREMENTS = 500;
var MAIN_INCREMENTS = 200;

if (!wt.isMainThread) {
  worker(wt.workerData);
} else {
  main();
}

function worker(data) {
  var ta = new Int32Array(data.sab);
  if (data.task === 'wait') {
    // Blocks until the main thread notifies index 0.
    var woken = pkg.wait(ta, 0, 0, 30000);
    wt.parentPort.postMessage({ waited: woken });
    wt.parentPort.once('message', function () {
      // Wakes the main thread's waitAsync on index 1.
      wt.parentPort.postMessage({ notified: pkg.notify(ta, 1, 1) });
    });
  } else if (data.task === 'lock') {
    var lock = pkg.AsyncLock.from(data.lock);
    for (var i = 0; i < WORKER_INCREMENTS; i++) {
      lock.lock();
      try {
        var c = ta[1];
        // A window for another thread to break in if the lock did not hold.
        if (i % 50 === 0) Atomics.wait(ta, 2, 0, 1);
        ta[1] = c + 1;
      } finally {
        lock.unlock();
      }
    }
    wt.parentPort.postMessage({ done: true });
  }
}

function fail(why) {
  console.log('smoke: FAIL ' + (why && why.stack ? why.stack : why));
  process.exit(1);
}

function check(condition, what) {
  if (!condition) throw new Error(what);
}

function delay(ms) {
  return new Promise(function (resolve) {
    setTimeout(resolve, ms);
  });
}

function once(w, predicate) {
  return new Promise(function (resolve, reject) {
    function onMessage(m) {
      if (predicate(m)) {
        w.removeListener('message', onMessage);
        resolve(m);
      }
    }
    w.on('message', onMessage);
    w.once('error', reject);
  });
}

function runtimeName() {
  if (process.versions.bun) return 'bun ' + process.versions.bun;
  if (typeof Deno !== 'undefined' && Deno.version) return 'deno ' + Deno.version.deno;
  return 'node ' + process.versions.node;
}

/** The .node file binding.js loaded (it records it under a global symbol). */
function loadedBinary() {
  // binding.js is not exported; required by its absolute path it is the same
  // module instance the package loaded.
  var dir = path.dirname(require.resolve('atomics-waitasync/package.json'));
  var binding = require(path.join(dir, 'binding.js'));
  return binding[Symbol.for('atomics-waitasync.binaryPath')];
}

function checkWait() {
  var ta = new Int32Array(new SharedArrayBuffer(16));
  var w = new wt.Worker(__filename, { workerData: { task: 'wait', sab: ta.buffer } });
  var waited = once(w, function (m) {
    return 'waited' in m;
  });
  var woke = 0;
  // Notify until the worker's wait() has been woken (it may not wait yet).
  function poke() {
    woke = pkg.notify(ta, 0, 1);
    return woke === 1 ? null : delay(5).then(poke);
  }
  return Promise.all([waited, poke()])
    .then(function (results) {
      check(results[0].waited === 'ok', 'worker wait() returned ' + results[0].waited);
      var r = pkg.waitAsync(ta, 1, 0, 30000);
      check(r.async === true, 'waitAsync did not go async');
      var notified = once(w, function (m) {
        return 'notified' in m;
      });
      w.postMessage('notify');
      return Promise.all([r.value, notified]);
    })
    .then(function (results) {
      check(results[0] === 'ok', 'main waitAsync settled ' + results[0]);
      check(results[1].notified === 1, "worker's notify woke " + results[1].notified);
      return w.terminate();
    })
    .then(function () {
      console.log('ok wait: worker wait() woken by main notify; main waitAsync woken by worker notify');
    });
}

function checkLock() {
  var sab = new SharedArrayBuffer(16);
  var ta = new Int32Array(sab);
  var lock = new pkg.AsyncLock(ta, 0);
  var workers = [0, 1].map(function () {
    return new wt.Worker(__filename, { workerData: { task: 'lock', sab: sab, lock: { i32a: ta, index: 0 } } });
  });
  var done = workers.map(function (w) {
    return once(w, function (m) {
      return m.done;
    });
  });
  var n = 0;
  function step() {
    if (n === MAIN_INCREMENTS) return null;
    n++;
    return lock
      .executeLocked(function () {
        var c = ta[1];
        return Promise.resolve().then(function () {
          ta[1] = c + 1;
        });
      })
      .then(step);
  }
  return Promise.all(done.concat([step()]))
    .then(function () {
      var expected = workers.length * WORKER_INCREMENTS + MAIN_INCREMENTS;
      check(ta[1] === expected, 'counter is ' + ta[1] + ', expected ' + expected);
      check(ta[0] === 0, 'lock word left at ' + ta[0]);
      return Promise.all(
        workers.map(function (w) {
          return w.terminate();
        })
      );
    })
    .then(function () {
      console.log('ok lock: 2 workers lock()/unlock() and main executeLocked(): counter ' + ta[1] + ' exact');
    });
}

function checkPolyfill() {
  var hadNative = typeof Atomics.waitAsync === 'function';
  require('atomics-waitasync/polyfill');
  check(typeof Atomics.waitAsync === 'function', 'Atomics.waitAsync is ' + typeof Atomics.waitAsync);
  var ta = new Int32Array(new SharedArrayBuffer(8));
  var timed = Atomics.waitAsync(ta, 0, 0, 20);
  check(timed.async === true, 'Atomics.waitAsync with a timeout did not go async');
  var woken = Atomics.waitAsync(ta, 1, 0);
  check(woken.async === true, 'Atomics.waitAsync did not go async');
  // Settles either way: the promise, or a hang caught by the guard.
  var keepAlive = setTimeout(function () {}, 5000);
  return timed.value
    .then(function (v) {
      check(v === 'timed-out', 'Atomics.waitAsync with a timeout settled ' + v);
      var count = Atomics.notify(ta, 1, 1);
      check(count === 1, 'Atomics.notify woke ' + count);
      return woken.value;
    })
    .then(function (v) {
      clearTimeout(keepAlive);
      check(v === 'ok', 'Atomics.waitAsync settled ' + v);
      var which = hadNative ? 'native, kept' : 'installed by the polyfill';
      console.log('ok polyfill: Atomics.waitAsync (' + which + ') settles timed-out and ok');
    });
}

function main() {
  var limit = Number(process.env.SMOKE_TIMEOUT_MS) || 60000;
  var guard = setTimeout(function () {
    fail('no result after ' + limit + ' ms (hang?)');
  }, limit);
  console.log('runtime ' + runtimeName() + ' ' + process.platform + '-' + process.arch);
  console.log('binary ' + loadedBinary());
  checkWait()
    .then(checkLock)
    .then(checkPolyfill)
    .then(function () {
      clearTimeout(guard);
      console.log('smoke: ok');
    })
    .catch(fail);
}
