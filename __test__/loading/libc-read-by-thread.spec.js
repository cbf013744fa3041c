'use strict';
// How binding.js tells glibc from musl, by thread: the main thread reads
// /proc/self/maps (one read of text the module loader's own code reads
// with), a worker the executable's ELF header, because the maps grow with
// every thread of the process (~60 lines a worker) and every worker of a
// pool loads the package. Each case in a fresh process.

const assert = require('assert');
const path = require('path');
const { runNode } = require('../helpers');

const root = path.join(__dirname, '..', '..');

// Counts, in this thread, fs.readFileSync of /proc/self/maps and fs.openSync of /proc/self/exe.
const COUNT = `
  const fs = require('fs');
  const reads = { maps: 0, exe: 0 };
  const readFileSync = fs.readFileSync;
  fs.readFileSync = function (file) {
    if (file === '/proc/self/maps') reads.maps++;
    return readFileSync.apply(this, arguments);
  };
  const openSync = fs.openSync;
  fs.openSync = function (file) {
    if (file === '/proc/self/exe') reads.exe++;
    return openSync.apply(this, arguments);
  };
`;

describe('the libc, as each thread tells it (binding.js)', function () {
  before(function () {
    if (process.platform !== 'linux') this.skip();
  });

  it('the main thread reads its maps, not the executable; a worker the executable, not the maps', function () {
    const code = `const root = ${JSON.stringify(root)}; ${COUNT}
      require(root);
      const main = reads;
      const { Worker } = require('worker_threads');
      const worker = new Worker(\`const root = \${JSON.stringify(root)}; \${${JSON.stringify(COUNT)}}
        require(root);
        require('worker_threads').parentPort.postMessage(reads);\`, { eval: true });
      worker.once('message', (inWorker) => {
        console.log(JSON.stringify({ main, inWorker }));
        process.exit(0);
      });`;
    const result = runNode(['-e', code]);
    assert.strictEqual(result.status, 0, result.stderr);
    assert.deepStrictEqual(JSON.parse(result.stdout), { main: { maps: 1, exe: 0 }, inWorker: { maps: 0, exe: 1 } });
  });
});
