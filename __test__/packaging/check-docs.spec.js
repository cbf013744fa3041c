'use strict';
// scripts/check-docs.js, the first step of `npm test`: the user-facing
// Markdown names no issue number and no commit hash (CHANGELOG.md may), so
// that every doc reads as reference, and every relative link leads to a file
// that exists and, into Markdown, to one of its headings (GitHub's anchors).
// Run as `npm test` runs it, a child process, on a folder of its own and on
// the repository.

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { root, runNode } = require('../helpers');

const SCRIPT = path.join(root, 'scripts', 'check-docs.js');

let dir;

/** Runs the check on a fresh folder holding `files` (relative path → text). */
function checkTree(files) {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'awa-check-docs-'));
  for (const name of Object.keys(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), files[name]);
  }
  return runNode([SCRIPT, dir]);
}

afterEach(function () {
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('docs name no issue number or commit hash (scripts/check-docs.js)', function () {
  it('fails on an issue number, naming the file and the line', function () {
    const result = checkTree({ 'README.md': '# x\n\nThe fast path (see issue 21) skips it.\n' });
    assert.notStrictEqual(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /README\.md:3\b.*issue 21/);
  });

  it('fails on the other ways to cite an issue, in docs/ too, wrapped onto the next line too', function () {
    const result = checkTree({
      'README.md': '# x\n',
      'docs/a.md': 'Issues 11 and 21 set the goals.\n',
      'docs/b.md': 'Fixed in ISSUE #12.\n',
      'docs/c.md': 'Measured for #33.\n',
      'docs/d.md': 'As measured for the\nfast path of issue\n44, it skips it.\n',
    });
    assert.notStrictEqual(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /docs[\\/]a\.md:1\b.*Issues 11 and 21/);
    assert.match(result.stdout, /docs[\\/]b\.md:1\b.*ISSUE #12/);
    assert.match(result.stdout, /docs[\\/]c\.md:1\b.*#33/);
    assert.match(result.stdout, /docs[\\/]d\.md:2\b.*issue 44/);
  });

  it('fails on a commit hash, in the README and in benchmark/', function () {
    const result = checkTree({
      'README.md': '# x\n\nMeasured at commit 1a2b3c4.\n',
      'benchmark/results.md': 'core: commit ce57fa9 with uncommitted changes\n',
    });
    assert.notStrictEqual(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /README\.md:3\b.*1a2b3c4/);
    assert.match(result.stdout, /benchmark[\\/]results\.md:1\b.*ce57fa9/);
  });

  it('passes clean docs: hex constants, versions, colours, a changelog that cites issues', function () {
    const result = checkTree({
      'README.md': [
        '# x',
        '',
        'The count stops at 0x7fffffff; Node v20.20.2 (V8 11.3.244.8-node.38), 2026-11-27T05:30:37Z.',
        'Unlike the built-in (nodejs/node#61941), it keeps the loop alive; see [docs](#x).',
        '<span style="color: #a1b2c3d4">a colour</span>, 1,000,000 waiters, 4.0e-4 bytes, the deadbeef word.',
        'A SHA-256: 2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 (not a commit).',
        '',
      ].join('\n'),
      'CHANGELOG.md': '# Changelog\n\n- The fast path (issue 21, 1a2b3c4).\n',
      'node_modules/dep/README.md': 'Fixed in #12 (abc1234).\n',
      '__test__/fixtures/app/README.md': 'issue 5, commit 1a2b3c4\n',
    });
    assert.strictEqual(result.status, 0, result.stdout + result.stderr);
  });

  it('passes on this repository, reading its docs', function () {
    const result = runNode([SCRIPT, root]);
    assert.strictEqual(result.status, 0, result.stdout + result.stderr);
    const files = Number(/check-docs: (\d+) Markdown files/.exec(result.stdout)[1]);
    assert.ok(files >= 10, `only ${files} Markdown files were read`);
  });
});

describe('docs links resolve (scripts/check-docs.js)', function () {
  const docs = [
    '# API',
    '',
    '## `waitAsync(typedArray, index, value[, timeout[, options]])`',
    '',
    '## Keep-alive, and opting out',
    '',
    '## Workers, termination and exit',
    '',
    '<a id="errors"></a>',
    '',
  ].join('\n');

  it('passes links to files, headings (punctuation and code dropped), ids, and URLs', function () {
    const result = checkTree({
      'README.md': [
        '# x',
        '',
        '[api](docs/api.md), [keep-alive](docs/api.md#keep-alive-and-opting-out),',
        '[exit](docs/api.md#workers-termination-and-exit), [waitAsync](docs/api.md#waitasynctypedarray-index-value-timeout-options),',
        '[errors](docs/api.md#errors), [top](#x), ![chart](bench/chart.svg), [npm](https://www.npmjs.com/package/x).',
        '',
        '```md',
        '[not a link, in code](nowhere.md)',
        '```',
        '',
        'Nor is `[this](nowhere.md)`, nor `a code span that [wraps](nowhere.md)',
        'onto the next line`.',
        '',
        '[ref]: docs/api.md#errors',
        '',
      ].join('\n'),
      'docs/api.md': docs + '[back](../README.md)\n',
      'bench/chart.svg': '<svg/>',
    });
    assert.strictEqual(result.status, 0, result.stdout + result.stderr);
  });

  it('fails on a link to a file that does not exist, naming the file and line', function () {
    const result = checkTree({ 'README.md': '# x\n\nSee [the results](benchmark/results.md).\n' });
    assert.notStrictEqual(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /README\.md:3\b.*benchmark\/results\.md/);
  });

  it('fails on a reference definition that leads nowhere', function () {
    const result = checkTree({ 'README.md': '# x\n\nSee [the results][r].\n\n[r]: benchmark/results.md\n' });
    assert.notStrictEqual(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /README\.md:5\b.*benchmark\/results\.md/);
  });

  it('fails on a link to a heading that does not exist', function () {
    const result = checkTree({
      'README.md': '# x\n\n[gone](docs/api.md#what-changed-issue-11)\n',
      'docs/api.md': docs,
    });
    assert.notStrictEqual(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /README\.md:3\b.*docs\/api\.md#what-changed-issue-11/);
  });
});
