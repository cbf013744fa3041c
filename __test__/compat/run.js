'use strict';
// The compatibility subset: a few end-to-end checks (load, install,
// cross-thread wake, keep-alive exit, terminate of a worker in wait) that
// run on every runtime of the matrix, including the ones mocha 10 cannot
// run on (Node 12) or that are not Node (Bun). Plain Node 12 JavaScript, no
// test framework.
//
//   <runtime> __test__/compat/run.js                   the package's functions (ponyfill)
//   <runtime> __test__/compat/run.js --mode polyfill   the same cases through the global
//                                                      Atomics after install({ force: true })
//
// Prints one line per case and closes with "N passed, N failed, N skipped";
// exits 1 when a case failed.

const path = require('path');
const { makeContext } = require('./context');

const FILES = ['load', 'install', 'cross-thread-wake', 'two-copies', 'keep-alive-exit', 'terminate-in-wait', 'robust-lock', 'latch', 'semaphore', 'barrier', 'rwlock'];

// Catches a hang (a lost wake-up would otherwise hang the run forever); not
// a performance limit.
// ATOMICS_WAITASYNC_COMPAT_HANG_MS raises it where everything is slow (qemu-user).
const HANG_MS = Number(process.env.ATOMICS_WAITASYNC_COMPAT_HANG_MS) || 60000;

function parseMode(argv) {
  const i = argv.indexOf('--mode');
  const mode = i === -1 ? 'ponyfill' : argv[i + 1];
  if (mode !== 'ponyfill' && mode !== 'polyfill') throw new Error(`--mode must be ponyfill or polyfill, not ${mode}`);
  return mode;
}

function withHangGuard(promise, name) {
  let timer;
  const guard = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${name}: no result after ${HANG_MS} ms (hang?)`)), HANG_MS);
  });
  return Promise.race([promise, guard]).then(
    (value) => {
      clearTimeout(timer);
      return value;
    },
    (error) => {
      clearTimeout(timer);
      throw error;
    }
  );
}

async function main() {
  const mode = parseMode(process.argv);
  const ctx = makeContext(mode);
  console.log(`# compat: ${ctx.runtime} ${ctx.version}, mode ${mode}${ctx.nativeWaitAsync ? '' : ' (no native waitAsync)'}`);
  const counts = { passed: 0, failed: 0, skipped: 0 };
  const started = Date.now();
  for (const file of FILES) {
    for (const test of require(path.join(__dirname, `${file}.js`))) {
      const name = `${file}: ${test.name}`;
      const reason = test.skip ? test.skip(ctx) : null;
      if (reason) {
        counts.skipped++;
        console.log(`skip ${name} # ${reason}`);
        continue;
      }
      const t0 = Date.now();
      try {
        await withHangGuard(Promise.resolve().then(() => test.run(ctx)), name);
        counts.passed++;
        console.log(`ok   ${name} (${Date.now() - t0} ms)`);
      } catch (error) {
        counts.failed++;
        console.log(`FAIL ${name}\n     ${String((error && error.stack) || error).split('\n').join('\n     ')}`);
      }
      await ctx.cleanup();
    }
  }
  console.log(`# ${ctx.runtime} ${ctx.version} ${mode}: ${Date.now() - started} ms`);
  console.log(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  // Exit explicitly: a failed case may have left a worker or a wait behind.
  process.exit(counts.failed === 0 ? 0 : 1);
}

main().catch((error) => {
  console.log(`FAIL runner: ${(error && error.stack) || error}`);
  process.exit(1);
});
