'use strict';
// scripts/check-docs.js (the first step of `npm test`): every relative link
// of the Markdown leads to a file that exists and, into Markdown, to one of
// its headings (GitHub's anchors). Run as a child process on a folder of its
// own; the repository's own links are checked by
// docs-name-no-issue-or-commit.spec.js's run on this repository.

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { root } = require('../helpers');

const SCRIPT = path.join(root, 'scripts', 'check-docs.js');

describe('docs links resolve (scripts/check-docs.js)', function () {
  let dir;

  /** Runs the check on a fresh folder holding `files` (relative path → text). */
  function check(files) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'awa-check-links-'));
    for (const name of Object.keys(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), files[name]);
    }
    const result = spawnSync(process.execPath, [SCRIPT, dir], { encoding: 'utf8', timeout: 30000 });
    if (result.error) throw result.error;
    return result;
  }

  afterEach(function () {
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

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
    const result = check({
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
        'Nor is `[this](nowhere.md)`.',
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
    const result = check({ 'README.md': '# x\n\nSee [the results](benchmark/results.md).\n' });
    assert.notStrictEqual(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /README\.md:3\b.*benchmark\/results\.md/);
  });

  it('fails on a link to a heading that does not exist', function () {
    const result = check({
      'README.md': '# x\n\n[gone](docs/api.md#what-changed-issue-11)\n',
      'docs/api.md': docs,
    });
    assert.notStrictEqual(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /README\.md:3\b.*docs\/api\.md#what-changed-issue-11/);
  });
});
