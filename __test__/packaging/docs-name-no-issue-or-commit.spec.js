'use strict';
// scripts/check-docs.js (the first step of `npm test`): the user-facing
// Markdown names no issue number and no commit hash (CHANGELOG.md may), so
// that every doc reads as reference. Run as `npm test` runs it, a child
// process, on a folder of its own and on the repository.

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { root } = require('../helpers');

const SCRIPT = path.join(root, 'scripts', 'check-docs.js');

/** Runs the check on `dir`; `{ status, stdout, stderr }`. */
function check(dir) {
  const result = spawnSync(process.execPath, [SCRIPT, dir], { encoding: 'utf8', timeout: 30000 });
  if (result.error) throw result.error;
  return result;
}

describe('docs name no issue number or commit hash (scripts/check-docs.js)', function () {
  let dir;

  /** A fresh folder holding `files` (relative path → text). */
  function tree(files) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'awa-check-docs-'));
    for (const name of Object.keys(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), files[name]);
    }
    return dir;
  }

  afterEach(function () {
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('fails on an issue number, naming the file and the line', function () {
    const result = check(tree({ 'README.md': '# x\n\nThe fast path (see issue 21) skips it.\n' }));
    assert.notStrictEqual(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /README\.md:3\b.*issue 21/);
  });

  it('fails on the other ways to cite an issue, in docs/ too', function () {
    const result = check(
      tree({
        'README.md': '# x\n',
        'docs/a.md': 'Issues 11 and 21 set the goals.\n',
        'docs/b.md': 'Fixed in ISSUE #12.\n',
        'docs/c.md': 'Measured for #33.\n',
      })
    );
    assert.notStrictEqual(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /docs[\\/]a\.md:1\b.*Issues 11 and 21/);
    assert.match(result.stdout, /docs[\\/]b\.md:1\b.*ISSUE #12/);
    assert.match(result.stdout, /docs[\\/]c\.md:1\b.*#33/);
  });

  it('fails on a commit hash, in the README and in benchmark/', function () {
    const result = check(
      tree({
        'README.md': '# x\n\nMeasured at commit 1a2b3c4.\n',
        'benchmark/results.md': 'core: commit ce57fa9 with uncommitted changes\n',
      })
    );
    assert.notStrictEqual(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /README\.md:3\b.*1a2b3c4/);
    assert.match(result.stdout, /benchmark[\\/]results\.md:1\b.*ce57fa9/);
  });

  it('passes clean docs: hex constants, versions, colours, a changelog that cites issues', function () {
    const result = check(
      tree({
        'README.md': [
          '# x',
          '',
          'The count stops at 0x7fffffff; Node v20.20.2 (V8 11.3.244.8-node.38), 2026-11-27T05:30:37Z.',
          'Unlike the built-in (nodejs/node#61941), it keeps the loop alive; see [docs](#x).',
          '<span style="color: #a1b2c3">a colour</span>, 1,000,000 waiters, 4.0e-4 bytes, the deadbeef word.',
          'A SHA-256: 2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 (not a commit).',
          '',
        ].join('\n'),
        'CHANGELOG.md': '# Changelog\n\n- The fast path (issue 21, 1a2b3c4).\n',
        'node_modules/dep/README.md': 'Fixed in #12 (abc1234).\n',
        '__test__/fixtures/app/README.md': 'issue 5, commit 1a2b3c4\n',
      })
    );
    assert.strictEqual(result.status, 0, result.stdout + result.stderr);
  });

  it('passes on this repository', function () {
    const result = check(root);
    assert.strictEqual(result.status, 0, result.stdout + result.stderr);
  });
});
