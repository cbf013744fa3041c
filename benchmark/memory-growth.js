#!/usr/bin/env node
'use strict';
// Bytes per pending waiter as the number of waiters grows, one element
// each (a pool's jobs): K waitAsync pending on K distinct elements, on the
// main thread or in a worker, package against this Node's native Atomics.
// Each figure comes from a fresh process (so that one K's freed memory does
// not hide the next one's growth), as a slope: K waiters are queued, then K
// more, and what the second K added (RSS and JS heap, process.memoryUsage()
// after full GCs), divided by K, is the cost per waiter at K to 2K pending.
// Costs paid once (a thread's first allocations, tables made at the first
// waiter) land in the first K and stay out of the figure; at small K a
// plain "after minus before" showed them as kilobytes per waiter (a worker
// at K = 1,000: ~4,000 B, constant in total as K doubled). RSS is the whole
// process's (for a worker too), and only its anonymous memory where Linux
// says (RssAnon in /proc/self/status): the file-backed part is the node
// binary's code, paged in as new paths first run (V8's optimizing compiler
// at ~1,500 waits in: ~3.3 MB in one step of 500 waiters, which read as
// 2,900 B per waiter at K = 1,000), shared and nobody's per-waiter cost.
// `other` is that RSS less V8's committed heap
// (v8.getHeapStatistics().total_physical_size): native allocations (the
// addon's registry and pending table, V8's waiter nodes and handles).
//
//   node benchmark/memory-growth.js [--k 1000,10000,100000,1000000] [--rounds 3] [--write]
//
// Prints a markdown table; the figures move by ~10% between runs (RSS is
// counted in pages), so it takes the median of --rounds runs. --write also
// saves them to benchmark/results-memory-growth.json, for
// benchmark/chart.js's cost-growth chart.

const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
// The tests' measure of resident memory (only its anonymous part, on Linux).
const { anonymousRss } = require('../__test__/helpers');

const WARMUP = 1000;

if (process.argv[2] === '--child') {
  child(process.argv[3], Number(process.argv[4]), process.argv[5]);
} else {
  parent();
}

function argList(name, fallback) {
  const at = process.argv.indexOf('--' + name);
  return at === -1 ? fallback : process.argv[at + 1].split(',').map(Number);
}

function parent() {
  const ks = argList('k', [1000, 10000, 100000, 1000000]);
  const rounds = argList('rounds', [3])[0];
  const median = (values) => values.slice().sort((a, b) => a - b)[values.length >> 1];
  const figures = [];
  const f = (x) => x.toFixed(0);
  const row = ({ where, k, addon, native, ratio }) =>
    `| ${where} | ${k.toLocaleString('en-US')} | ${f(addon.rss)} | ${f(native.rss)} | ${ratio.toFixed(2)} | ${f(addon.heap)} / ${f(native.heap)} | ${f(addon.other)} / ${f(native.other)} |`;
  for (const where of ['main', 'worker']) {
    for (const k of ks) {
      const got = {};
      for (const impl of ['addon', 'native']) {
        const runs = [];
        for (let r = 0; r < rounds; r++) {
          const out = spawnSync(process.execPath, ['--expose-gc', __filename, '--child', impl, String(k), where], { encoding: 'utf8' });
          if (out.status !== 0) throw new Error(`${impl} ${k} ${where}: ${out.stderr}`);
          runs.push(JSON.parse(out.stdout.trim().split('\n').pop()));
        }
        got[impl] = { rss: median(runs.map((x) => x.rss)), heap: median(runs.map((x) => x.heap)), other: median(runs.map((x) => x.other)) };
      }
      figures.push({ where, k, addon: got.addon, native: got.native, ratio: got.addon.rss / got.native.rss });
      process.stderr.write(row(figures[figures.length - 1]) + '\n');
    }
  }
  console.log(`Node ${process.version}; bytes per pending waiter (anonymous RSS on Linux), median of ${rounds} fresh processes each\n`);
  console.log('| thread | K (K to 2K waiters pending, one element each) | addon RSS | native RSS | ratio | JS heap addon / native | other addon / native |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const figure of figures) console.log(row(figure));
  if (process.argv.includes('--write')) {
    const command = ['node', 'benchmark/memory-growth.js'].concat(process.argv.slice(2)).join(' ');
    const json = { kind: 'memory-growth', node: process.versions.node, command, date: new Date().toISOString(), rounds, rows: figures };
    fs.writeFileSync(path.join(__dirname, 'results-memory-growth.json'), JSON.stringify(json, null, 2) + '\n');
    console.error('wrote benchmark/results-memory-growth.json');
  }
}

function child(impl, k, where) {
  if (where === 'worker') {
    const { Worker } = require('worker_threads');
    const worker = new Worker(__filename, { argv: ['--child', impl, String(k), 'here'] }); // inherits --expose-gc
    worker.on('message', (result) => {
      console.log(JSON.stringify(result));
      process.exit(0);
    });
    worker.on('error', (error) => {
      console.error(error);
      process.exit(1);
    });
    return;
  }
  measure(impl, k).then((result) => {
    if (where === 'here') require('worker_threads').parentPort.postMessage(result);
    else {
      console.log(JSON.stringify(result));
      process.exit(0);
    }
  });
}

async function measure(impl, k) {
  const v8 = require('v8');
  const atomics = impl === 'native' ? Atomics : require(path.join(__dirname, '..'));
  const usage = async () => {
    for (let i = 0; i < 4; i++) {
      global.gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const memory = process.memoryUsage();
    return Object.assign(memory, { rss: anonymousRss(), v8: v8.getHeapStatistics().total_physical_size });
  };
  const warm = new Int32Array(new SharedArrayBuffer(4 * WARMUP));
  for (let e = 0; e < WARMUP; e++) atomics.waitAsync(warm, e, 0);
  for (let e = 0; e < WARMUP; e++) atomics.notify(warm, e, 1);
  await new Promise((resolve) => setTimeout(resolve, 10));
  const ia = new Int32Array(new SharedArrayBuffer(4 * 2 * k));
  const queue = (from) => {
    for (let e = from; e < from + k; e++) {
      if (!atomics.waitAsync(ia, e, 0).async) throw new Error('not pending');
    }
  };
  queue(0);
  const before = await usage();
  queue(k);
  const after = await usage();
  const rss = (after.rss - before.rss) / k;
  return { rss, heap: (after.heapUsed - before.heapUsed) / k, other: rss - (after.v8 - before.v8) / k };
}
