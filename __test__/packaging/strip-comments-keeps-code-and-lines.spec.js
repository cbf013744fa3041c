'use strict';
// scripts/lib/strip-comments.js, with which scripts/stage.js takes the
// comments out of the published load path: everything but comments stays,
// line for line, and it refuses a result that is not the same program.

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const { stripComments } = require('../../scripts/lib/strip-comments');

const root = path.join(__dirname, '..', '..');

describe('stripComments keeps the code and its lines', function () {
  it('takes out line and block comments, each line where it was', function () {
    const source = [
      "'use strict'; // a",
      '/**',
      ' * b',
      ' */',
      'const x = 1; /* c */ const y = 2;',
      '',
    ].join('\n');
    assert.strictEqual(stripComments(source), "'use strict';\n\n\n\nconst x = 1;  const y = 2;\n");
  });

  it('leaves what only looks like a comment: in strings, templates and regular expressions', function () {
    const source = [
      "const url = 'http://example.org/*x*/';",
      'const re = /\\/\\/ not a comment/g;',
      'const half = 4 / 2 / 1; // comment',
      'const t = `a // b ${ { c: 1 }.c /* d */ } e /* f */ ${`g // ${half}`}`;',
      'const div = (1) / 2 /* h */ / 3;',
      '',
    ].join('\n');
    const out = stripComments(source);
    assert.strictEqual(out, [
      "const url = 'http://example.org/*x*/';",
      'const re = /\\/\\/ not a comment/g;',
      'const half = 4 / 2 / 1;',
      'const t = `a // b ${ { c: 1 }.c  } e /* f */ ${`g // ${half}`}`;',
      'const div = (1) / 2  / 3;',
      '',
    ].join('\n'));
    const run = (code) => JSON.stringify(vm.runInNewContext(`${code}; [url, re.source, half, t, div]`));
    assert.strictEqual(run(out), run(source));
  });

  it('every JS file of the package: the same program, as many lines, and it compiles', function () {
    const files = ['index.js', 'binding.js', 'polyfill.js', 'async-mutex.js']
      .concat(fs.readdirSync(path.join(root, 'lib')).map((name) => `lib/${name}`));
    for (const name of files) {
      const source = fs.readFileSync(path.join(root, name), 'utf8');
      const out = stripComments(source, name);
      assert.strictEqual(out.split('\n').length, source.split('\n').length, name);
      assert.ok(out.length < source.length, `${name}: nothing taken out`);
      assert.doesNotThrow(() => new vm.Script(`(function (exports, require, module, __filename, __dirname) {${out}\n})`), name);
    }
  });

  it('refuses a source it cannot scan', function () {
    assert.throws(() => stripComments('const a = "unterminated\n'), /cannot scan/);
  });
});
