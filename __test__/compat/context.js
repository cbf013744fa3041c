'use strict';
// What every compat case gets: the API under test (the package's functions,
// or the global Atomics after a forced install), a worker that does what it
// is told, a child-process runner, and a poll-until helper. Runs on Node 12
// and Bun.

const path = require('path');
const { spawn } = require('child_process');
const { Worker } = require('worker_threads');

const root = path.join(__dirname, '..', '..');
const fixture = (name) => path.join(__dirname, '..', 'fixtures', name);

/** The API a thread uses in `mode` (the same rule runs in compat-worker.js). */
function apiFor(mode) {
  const pkg = require(root);
  if (mode === 'ponyfill') return pkg;
  pkg.install({ force: true });
  return Atomics;
}

const { until } = require('../helpers');

function makeContext(mode) {
  const nativeWaitAsync = typeof Atomics.waitAsync === 'function';
  const pkg = require(root);
  const api = apiFor(mode);
  const workers = [];

  /**
   * Starts __test__/fixtures/compat-worker.js on `sab` with the same mode.
   * `call(message)` posts a command and resolves with the worker's reply;
   * for waitAsync and waitAsyncMany, `settled` resolves with the second reply.
   */
  function startWorker(sab, options) {
    const worker = new Worker(fixture('compat-worker.js'), Object.assign({ workerData: { mode, sab } }, options));
    workers.push(worker);
    const replies = new Map();
    let nextId = 1;
    let failure = null;
    const expect = (id) =>
      new Promise((resolve, reject) => {
        if (failure) reject(failure);
        else replies.set(id, { resolve, reject });
      });
    worker.on('message', (m) => {
      const entry = replies.get(m.id);
      if (entry) {
        replies.delete(m.id);
        entry.resolve(m.result);
      }
    });
    worker.on('error', (error) => {
      failure = error;
      replies.forEach((entry) => entry.reject(error));
      replies.clear();
    });
    return {
      worker,
      call(message) {
        const id = nextId;
        nextId += 2; // id + 1 is the settle reply of a waitAsync
        const reply = expect(id);
        const settled = message.op.startsWith('waitAsync') ? expect(id + 1) : null;
        worker.postMessage(Object.assign({ id }, message));
        return settled ? { reply, settled } : reply;
      },
    };
  }

  /** Runs a script with this runtime; resolves with { status, signal, stdout, stderr }. */
  function runChild(args, env) {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, args, {
        cwd: root,
        env: Object.assign({}, cleanEnv(), env),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
    });
  }

  async function cleanup() {
    const all = workers.splice(0);
    await Promise.all(all.map((w) => w.terminate()));
  }

  return {
    mode,
    runtime: process.versions.bun ? 'bun' : 'node',
    version: process.versions.bun || process.versions.node,
    nativeWaitAsync,
    pkg,
    api,
    root,
    fixture,
    until,
    startWorker,
    runChild,
    cleanup,
  };
}

/** The environment without anything that would preload code into a child. */
function cleanEnv() {
  const env = Object.assign({}, process.env);
  delete env.NODE_OPTIONS;
  delete env.ATOMICS_WAITASYNC_TEST_POLYFILL;
  return env;
}

module.exports = { makeContext, apiFor, cleanEnv };
