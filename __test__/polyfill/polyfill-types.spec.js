'use strict';
// polyfill.d.ts and the `install` typings, checked by the TypeScript
// compiler: with a lib that has no Atomics.waitAsync (es2020) and with one
// that has it (es2024), so the two declarations are seen to merge.

const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');

const tsc = path.join(__dirname, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc');
const project = path.join(__dirname, '..', 'fixtures', 'polyfill-types.tsconfig.json');

describe('polyfill typings', function () {
  for (const lib of ['es2020', 'es2024']) {
    it(`type-check with lib ${lib}`, function () {
      const r = spawnSync(process.execPath, [tsc, '-p', project, '--lib', lib], { encoding: 'utf8', timeout: 120000 });
      assert.strictEqual(r.status, 0, r.stdout + r.stderr);
    });
  }
});
