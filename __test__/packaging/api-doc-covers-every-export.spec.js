'use strict';
// docs/api.md documents every export: each name the three entry points
// export at run time (and their ESM twins), each class's statics, methods,
// getters and instance fields (in the class's own section), the properties
// of its release functions, every type and interface member the .d.ts files
// declare, and every error code the JavaScript and the loader throw. A name
// counts as documented when it appears in code (`name`, `X.name`,
// `name(...)`, or in a code block) in the page, or in the class's section.
// The names are read in a child process (__test__/fixtures/export-names.js):
// loading the polyfill patches Atomics on Node 12-15, which must not leak
// into the other tests of this process.

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { root, runNode, fixture } = require('../helpers');

const DOC = path.join(root, 'docs', 'api.md');

/** The identifiers that appear inside inline code spans or code blocks of `markdown`. */
function codeWords(markdown) {
  const words = new Set();
  const spans = markdown.match(/```[\s\S]*?```|`[^`]+`/g) || [];
  for (const span of spans) for (const word of span.split(/[^A-Za-z0-9_$]+/)) if (word !== '') words.add(word);
  return words;
}

/** The text of each `## ` section of `markdown`, by heading. */
function sections(markdown) {
  const bySection = new Map();
  let heading = '';
  for (const line of markdown.split('\n')) {
    const match = /^## (.*)$/.exec(line);
    if (match !== null) heading = match[1].trim();
    bySection.set(heading, (bySection.get(heading) || '') + line + '\n');
  }
  return bySection;
}

/** The names a .d.ts file exports, and the members of its interfaces and classes. */
function declaredNames(file) {
  const text = fs.readFileSync(path.join(root, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
  const names = new Set();
  for (const m of text.matchAll(/export\s+(?:declare\s+)?(?:function|class|interface|type|const|namespace)\s+([A-Za-z_$][\w$]*)/g)) {
    names.add(m[1]);
  }
  for (const m of text.matchAll(/(?:interface|class)\s+[A-Za-z_$][\w$]*[^{]*\{([^}]*)\}/g)) {
    for (const member of m[1].matchAll(/^\s*(?:static\s+)?(?:readonly\s+)?([A-Za-z_$][\w$]*)\s*[?(<:]/gm)) {
      if (member[1] !== 'constructor') names.add(member[1]);
    }
  }
  return names;
}

describe('docs/api.md covers every export', function () {
  let documented, bySection, exported;

  before(function () {
    const markdown = fs.readFileSync(DOC, 'utf8');
    documented = codeWords(markdown);
    bySection = sections(markdown);
    const run = runNode([fixture('export-names.js')]);
    assert.strictEqual(run.status, 0, run.stderr);
    exported = JSON.parse(run.stdout);
  });

  /** Asserts that each of `names` is in `words` (the page's, or a section's), saying where it looked. */
  function assertCovered(names, words, where) {
    const missing = [...names].filter((name) => !words.has(name));
    assert.deepStrictEqual(missing, [], `not in ${where} of docs/api.md: ${missing.join(', ')}`);
  }

  /** The code words of the `## heading` section. */
  function sectionWords(heading) {
    assert.ok(bySection.has(heading), `docs/api.md has no "## ${heading}" section`);
    return codeWords(bySection.get(heading));
  }

  it('names every export of the three entry points, CommonJS and ESM', function () {
    assertCovered(exported.index, documented, 'the page (atomics-waitasync)');
    assert.deepStrictEqual(exported.polyfill, [], 'atomics-waitasync/polyfill exports nothing');
    assertCovered(exported.asyncMutex, documented, 'the page (atomics-waitasync/async-mutex)');
    for (const [file, names] of Object.entries(exported.esm)) assertCovered(names, documented, `the page (${file})`);
  });

  it("documents each class's statics, methods, getters and fields in its own section", function () {
    const expected = ['AsyncLock', 'Barrier', 'Condition', 'Latch', 'RwLock', 'Semaphore', 'SignalSemaphore'];
    assert.deepStrictEqual(Object.keys(exported.classes).sort(), expected, 'the classes of atomics-waitasync');
    for (const [name, names] of Object.entries(exported.classes)) assertCovered(names, sectionWords(name), `"## ${name}"`);

    const mutexSection = sectionWords('atomics-waitasync/async-mutex');
    assertCovered(exported.mutex, mutexSection, 'the async-mutex section (Mutex)');
    assertCovered(exported.mutexSemaphore, mutexSection, 'the async-mutex section (Semaphore)');
    assertCovered(exported.withTimeout, mutexSection, 'the async-mutex section (withTimeout)');
  });

  it('documents the properties of release functions and of the test-only counts', function () {
    for (const keys of exported.releasers) assertCovered(keys, documented, 'the page (release functions)');
    assertCovered(exported.waitersForTesting, documented, 'the page (waitersForTesting)');
  });

  it('names every type, interface and member the .d.ts files declare', function () {
    for (const file of ['index.d.ts', 'polyfill.d.ts', 'async-mutex.d.ts']) {
      assertCovered(declaredNames(file), documented, `the page (${file})`);
    }
  });

  it('names every error code the JavaScript and the loader throw', function () {
    const sources = ['binding.js', ...fs.readdirSync(path.join(root, 'lib')).map((f) => path.join('lib', f))];
    for (const f of fs.readdirSync(path.join(root, 'src', 'napi'))) sources.push(path.join('src', 'napi', f));
    const codes = new Set();
    for (const file of sources) {
      const text = fs.readFileSync(path.join(root, file), 'utf8');
      for (const m of text.matchAll(/['"`](ERR_[A-Z0-9_]+|ABORT_ERR)['"`]/g)) codes.add(m[1]);
    }
    assert.ok(codes.size > 10, `found only ${[...codes].join(', ')}`);
    assertCovered(codes, documented, 'the page (error codes)');
  });
});
