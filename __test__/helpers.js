'use strict';
// Shared test plumbing: a worker that does what it is told, and a way to wait
// for a condition (a registry count, a shared counter) instead of sleeping.

const fs = require('fs');
const path = require('path');
const { Worker } = require('worker_threads');
const { spawnSync, spawn } = require('child_process');

const root = path.join(__dirname, '..');
const fixture = (name) => path.join(__dirname, 'fixtures', name);

/** Polls `predicate` (every 1 ms) until it is true; fails after `ms`. */
async function until(predicate, what = 'a condition', ms = 10000) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * Starts __test__/fixtures/worker.js. `call(message)` posts a command and
 * resolves with the worker's reply to it; `events` collects the replies
 * that arrive later (settled waits).
 */
function startWorker(workerData) {
  const worker = new Worker(fixture('worker.js'), { workerData });
  let nextId = 1;
  const replies = new Map();
  worker.on('message', (message) => {
    const entry = replies.get(message.id);
    if (entry) {
      replies.delete(message.id);
      entry.resolve(message.result);
    }
  });
  const failures = [];
  worker.on('error', (error) => {
    failures.push(error);
    for (const entry of replies.values()) entry.reject(error);
    replies.clear();
  });
  return {
    worker,
    failures,
    call(message) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        replies.set(id, { resolve, reject });
        worker.postMessage({ ...message, id });
      });
    },
    /** Posts a waitAsync: resolves `queued` with its result object, then `settled` with the string. */
    waitAsync(message) {
      const id = nextId++;
      const settleId = nextId++;
      const settled = new Promise((resolve, reject) => replies.set(settleId, { resolve, reject }));
      const queued = new Promise((resolve, reject) => {
        replies.set(id, { resolve, reject });
        worker.postMessage({ ...message, op: 'waitAsync', id, settleId });
      });
      return { queued, settled };
    },
    terminate: () => worker.terminate(),
  };
}

/** Runs a node script in a child process and returns {status, stdout, stderr, ms}. */
function runNode(args, options = {}) {
  const start = Date.now();
  const result = spawnSync(process.execPath, args, {
    cwd: root,
    encoding: 'utf8',
    timeout: 30000,
    ...options,
  });
  return { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr, ms: Date.now() - start };
}

let interpreted = null;

/**
 * The flags that keep this Node's V8 to its interpreter (frame sizes then
 * stay put from one depth of the stack to the next): of --no-opt,
 * --no-sparkplug and --no-maglev, those this Node knows.
 */
function interpretedOnly() {
  if (interpreted === null) {
    interpreted = ['--no-opt', '--no-sparkplug', '--no-maglev'].filter(
      (flag) => spawnSync(process.execPath, [flag, '-e', '']).status === 0
    );
  }
  return interpreted;
}

/** Like runNode, asynchronously (so the test's own loop keeps running). */
function runNodeAsync(args, options = {}) {
  return new Promise((resolve) => {
    const start = Date.now();
    const { killAfter, ...spawnOptions } = options; // killAfter: ms before SIGKILL (30 s)
    const child = spawn(process.execPath, args, { cwd: root, ...spawnOptions });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const killer = setTimeout(() => child.kill('SIGKILL'), killAfter || 30000);
    child.on('close', (status, signal) => {
      clearTimeout(killer);
      resolve({ status, signal, stdout, stderr, ms: Date.now() - start });
    });
  });
}

/**
 * The tally a near-the-stack-limit fixture (`name`, with `args`: one that
 * tries an operation at every depth, __test__/fixtures/near-stack-limit.js)
 * prints, run in a child interpreted only: with its frames the sizes stay
 * put from one depth to the next, and every depth is reached.
 */
async function nearTheLimit(name, ...args) {
  const result = await runNodeAsync([...interpretedOnly(), fixture(name), ...args]);
  if (result.status !== 0) throw new Error(`${name} ${args.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/**
 * How many bytes of ArrayBuffers 10,000 instances of `kind` ('family',
 * 'entry' or 'asynclock': __test__/fixtures/dropped-holds-memory.js) leave
 * behind when each is dropped while the release function of its hold
 * lives, collected, then released.
 */
async function droppedHoldsGrowth(kind) {
  const result = await runNodeAsync(['--expose-gc', fixture('dropped-holds-memory.js'), kind]);
  if (result.status !== 0) throw new Error(`dropped-holds-memory.js ${kind} failed: ${result.stderr}`);
  return Number(result.stdout.trim());
}

/**
 * Whether this engine's Atomics take a typed array over a plain ArrayBuffer
 * (ES2020). Node 12 and 14 take shared arrays only: there the package's
 * notify cannot read the registry's "may be waiting" counts (an external,
 * non-shared buffer) and always makes the native call (lib/atomics.js
 * `makeSkippingNotify`).
 */
const atomicsTakeUnshared = (() => {
  try {
    Atomics.add(new Int32Array(1), 0, 0);
    return true;
  } catch (_) {
    return false;
  }
})();

/**
 * An AsyncLock class over the package's wait, waitAsync, notify and
 * releaseLock whose next `fail(n)` wake-ups fail as `makeError()` says;
 * `left()` says how many of those have not come yet. A notify throws
 * `makeError()`. A releaseLock (the lock's own "free the word and notify"
 * call) fails as it can: a RangeError (out of stack) is thrown at its
 * entry, having done nothing; any other error is a panic in the core's
 * notify and in its retry (panicForTesting), after the word was freed.
 */
function lockWithFailingNotify(makeError) {
  const api = require('..');
  const binding = require('../binding');
  const { createAsyncLock } = require('../lib/async-lock');
  let failures = 0;
  const AsyncLock = createAsyncLock({
    lockOwner: binding.lockOwner,
    lockWatch: binding.lockWatch,
    wait: api.wait,
    waitAsync: api.waitAsync,
    notify(...args) {
      if (failures > 0) {
        failures--;
        throw makeError();
      }
      return api.notify(...args);
    },
    releaseLock(i32a, index, all, held) {
      if (failures > 0) {
        failures--;
        const error = makeError();
        if (error instanceof RangeError) throw error;
        // Both of its notifies (it retries once), and only if it notifies;
        // never left armed for a later, unrelated notify. Not while a
        // thread of the addon still retries an earlier one: its notify
        // could take one of these panics (it ends ~1 ms after notifies
        // work again).
        const idle = Date.now() + 5000;
        while (api.waitersForTesting().retriers !== 0) {
          if (Date.now() > idle) throw new Error('a retrying thread of the addon did not end');
        }
        if (all || Atomics.load(i32a, index) === held) {
          binding.panicForTesting('notify', 2);
          try {
            return binding.releaseLock(i32a, index, all, held);
          } finally {
            binding.panicForTesting('notify', 0);
          }
        }
      }
      return binding.releaseLock(i32a, index, all, held);
    },
  });
  return { AsyncLock, fail: (n) => (failures = n), left: () => failures };
}

/**
 * The AsyncLock word of a lock this thread holds with threads queued
 * (src/robust.rs: this thread's owner id << 1, with the WAITERS bit).
 */
function contendedHere() {
  const { threadId } = require('worker_threads');
  return require('../binding').lockOwner(threadId) * 2 + 1;
}

/**
 * A worker that rebuilds primitives of the package from the ones posted to
 * it and runs `body(...primitives, data, workerData, parentPort)` (a
 * function's source): `uses` lists them as [class name, workerData field],
 * e.g. [['AsyncLock', 'lock'], ['Condition', 'cond']]; `data` is an
 * Int32Array over `workerData.data`, if given. `w.next()` resolves with its
 * next message, `w.done()` when it exits (rejects if it fails).
 */
function primitiveWorker(uses, body, workerData, options) {
  const { Worker } = require('worker_threads');
  const classes = uses.map(([name]) => name).join(', ');
  const made = uses.map(([name, field]) => `${name}.from(workerData.${field})`).join(', ');
  const w = new Worker(
    `
    const { parentPort, workerData } = require('worker_threads');
    const { ${classes} } = require(workerData.root);
    const data = workerData.data && new Int32Array(workerData.data);
    (${body})(${made}, data, workerData, parentPort);
  `,
    Object.assign({ eval: true, workerData: Object.assign({ root }, workerData) }, options)
  );
  return withMessages(w);
}

/**
 * Gives a Worker `w.next()`, which resolves with its next message, and
 * `w.done()`, which resolves when it exits (rejects if it fails).
 */
function withMessages(w) {
  const messages = [];
  const waiting = [];
  w.on('message', (m) => (waiting.length ? waiting.shift()(m) : messages.push(m)));
  w.next = () => new Promise((resolve) => (messages.length ? resolve(messages.shift()) : waiting.push(resolve)));
  const exited = new Promise((resolve, reject) => {
    w.once('exit', resolve);
    w.once('error', reject);
  });
  w.done = () => exited;
  return w;
}

/**
 * The process's resident memory in bytes, only its anonymous part where
 * Linux says (RssAnon in /proc/self/status): the heaps, not the pages of
 * node's own code that a new path pages in (megabytes at a time, when V8's
 * optimizing compiler first runs), which are nobody's leak. Also
 * benchmark/memory-growth.js's measure.
 */
function anonymousRss() {
  try {
    const match = /^RssAnon:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]) * 1024;
  } catch (_) {
    // Not Linux: the whole RSS.
  }
  return process.memoryUsage().rss;
}

/**
 * A copy of the package at `from` in the folder `to`: its JavaScript (the
 * files a require of the package reads) and a copy of `binary` as its local
 * build, so that it loads a binary of its own (a copy, not a link: a loader
 * dedupes the same file). Returns the binary's new path.
 */
function copyPackage(from, to, binary) {
  (function copy(a, b, names) {
    fs.mkdirSync(b, { recursive: true });
    for (const name of names || fs.readdirSync(a)) {
      if (fs.statSync(path.join(a, name)).isDirectory()) copy(path.join(a, name), path.join(b, name));
      else fs.copyFileSync(path.join(a, name), path.join(b, name));
    }
  })(from, to, ['index.js', 'index.bundle.js', 'lib.bundle.js', 'binding.js', 'package.json', 'lib'].filter((name) => fs.existsSync(path.join(from, name))));
  const copied = path.join(to, 'atomics-waitasync.node');
  fs.copyFileSync(binary, copied);
  return copied;
}

/**
 * Makes the binary at `file` another version of the package as far as its
 * core's ABI marker says (the last digit of `version` in it: 9, or 8), as
 * a second version in node_modules would be; returns that version.
 */
function patchAbiVersion(file, version) {
  const bytes = fs.readFileSync(file);
  const start = bytes.indexOf(Buffer.from('atomics-waitasync core ABI'));
  if (start === -1) throw new Error(`${file} carries no ABI marker`);
  const field = Buffer.from(`; version ${version};`);
  const at = bytes.indexOf(field, start);
  if (at === -1 || at - start >= 200) throw new Error(`the ABI marker in ${file} does not name version ${version}`);
  const last = at + field.length - 2;
  bytes[last] = bytes[last] === 0x39 ? 0x38 : 0x39;
  fs.writeFileSync(file, bytes);
  return version.slice(0, -1) + String.fromCharCode(bytes[last]);
}

module.exports = {
  root,
  copyPackage,
  patchAbiVersion,
  anonymousRss,
  primitiveWorker,
  withMessages,
  fixture,
  until,
  startWorker,
  runNode,
  runNodeAsync,
  droppedHoldsGrowth,
  nearTheLimit,
  interpretedOnly,
  atomicsTakeUnshared,
  lockWithFailingNotify,
  contendedHere,
};
