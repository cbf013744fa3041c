#!/usr/bin/env node
'use strict';
// Checks the user-facing Markdown (the first step of `npm test`): every
// git-tracked *.md of the repository (README.md, docs/, benchmark/, ...)
// but CHANGELOG.md, node_modules/ and test fixtures (a `fixture` or
// `fixtures` folder) must read as reference, so it may not
//   - cite an issue: `issue 12`, `issues 11 and 21`, `issue #12`, or a bare
//     `#12` (case-insensitive). `owner/repo#12` is allowed: it names a public
//     issue elsewhere (nodejs/node#61941) that a reader can open;
//   - name a commit: a word of 7 to 40 lowercase hex digits with at least one
//     digit and one letter a-f, standing alone (not part of a longer word, so
//     not `0x7fffffff`, nor a 64-digit SHA-256; not after `#`, a colour);
// and every relative link or image (`[text](path#anchor)`, `[ref]: path`)
// outside code must point to a file that exists and, into Markdown, to a
// heading's anchor (GitHub's slugs) or an `id`/`name` in it. Links from
// docs/ into benchmark/ resolve in the repository, not in the package
// (package.json `files` ships docs/ but not benchmark/).
// History (which commit or issue changed what) belongs in git and
// CHANGELOG.md. Prints `file:line: what: "match"` per finding and exits 1
// when there is any.
//
//   node scripts/check-docs.js [root]    root defaults to the package folder

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const SKIP_DIRS = new Set(['node_modules', '.git', 'fixture', 'fixtures', 'target']);

// An issue cited by number: `issue 12`, `issues 11 and 21`, `issue #12`, or
// a bare `#12` not after a word character or `/` (owner/repo#12, file.md#12),
// `&` (&#123;) or `#`. Matched over the whole text: a citation may wrap.
const ISSUE = /\bissues?\s+#?\d+(?:(?:\s*,\s*|\s*&\s*|\s+and\s+)#?\d+)*|(?<![\w/&#])#\d+(?![\w-])/gi;
const HEX_WORD = /(?<![\w#])[0-9a-f]{7,40}(?!\w)/g;

/** The Markdown files to check, relative to `root`, with `/` separators. */
function markdownFiles(root) {
  const listed = gitListed(root);
  const files = listed !== null ? listed : walk(root, '');
  return files.filter((file) => {
    const parts = file.split('/');
    if (parts[parts.length - 1] === 'CHANGELOG.md') return false;
    return !parts.slice(0, -1).some((part) => SKIP_DIRS.has(part));
  });
}

/** `git ls-files` of `root` when it is the top of a work tree, else null. */
function gitListed(root) {
  const top = spawnSync('git', ['rev-parse', '--show-toplevel'], { cwd: root, encoding: 'utf8' });
  if (top.status !== 0 || fs.realpathSync(top.stdout.trim()) !== fs.realpathSync(root)) return null;
  const listed = spawnSync('git', ['ls-files', '-z', '--', '*.md'], { cwd: root, encoding: 'utf8' });
  if (listed.status !== 0) return null;
  return listed.stdout.split('\0').filter((file) => file !== '' && fs.existsSync(path.join(root, file)));
}

/** Every *.md under `root`/`dir`, outside SKIP_DIRS (for a folder that is not a work tree). */
function walk(root, dir) {
  const found = [];
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) found.push(...walk(root, rel));
    } else if (entry.isFile() && entry.name.endsWith('.md')) {
      found.push(rel);
    }
  }
  return found;
}

/** The issue citations and commit hashes in `text`: [{ line, what, match }]. */
function findCitations(text) {
  const lineOf = (index) => text.slice(0, index).split('\n').length;
  const problems = [];
  for (const m of text.matchAll(ISSUE)) {
    problems.push({ line: lineOf(m.index), what: 'issue number', match: m[0].replace(/\s+/g, ' ') });
  }
  for (const m of text.matchAll(HEX_WORD)) {
    if (/\d/.test(m[0]) && /[a-f]/.test(m[0])) problems.push({ line: lineOf(m.index), what: 'commit hash', match: m[0] });
  }
  return problems;
}

/**
 * `text` with fenced code blocks and (unless `keepSpans`) inline code spans
 * blanked out (same lines, same columns), so that links are looked for in
 * prose only.
 */
function withoutCode(text, keepSpans = false) {
  let fence = null;
  const prose = text
    .split('\n')
    .map((line) => {
      const opening = /^\s*(`{3,}|~{3,})/.exec(line);
      if (fence !== null) {
        if (opening !== null && opening[1][0] === fence[0] && opening[1].length >= fence.length) fence = null;
        return '';
      }
      if (opening !== null) {
        fence = opening[1];
        return '';
      }
      return line;
    })
    .join('\n');
  // Over the whole text: a span may wrap onto the next line.
  return keepSpans ? prose : prose.replace(/(`+)[^`]*?\1/g, (code) => code.replace(/[^\n]/g, ' '));
}

/** GitHub's anchor of a heading's text (github-slugger), before de-duplication. */
function slug(heading) {
  const plain = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link: its text
    .trim()
    .toLowerCase();
  return plain.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors a Markdown file defines: its headings' slugs, and `id`/`name` attributes. */
function anchorsOf(text) {
  const anchors = new Set();
  const seen = new Map();
  for (const line of withoutCode(text, true).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading !== null) {
      const base = slug(heading[1]);
      const n = seen.has(base) ? seen.get(base) + 1 : 0;
      seen.set(base, n);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/\b(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  }
  return anchors;
}

/** The relative links of `file` (in `root`) that lead nowhere: [{ line, what, match }]. */
function findBrokenLinks(root, file, text) {
  const problems = [];
  const anchorCache = new Map();
  const anchorsIn = (target) => {
    if (!anchorCache.has(target)) anchorCache.set(target, anchorsOf(fs.readFileSync(target, 'utf8')));
    return anchorCache.get(target);
  };
  withoutCode(text)
    .split('\n')
    .forEach((line, i) => {
      const targets = [];
      for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]);
      const reference = /^\s{0,3}\[(?!\^)[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/.exec(line);
      if (reference !== null) targets.push(reference[1]);
      for (const target of targets) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // a URL
        const hash = target.indexOf('#');
        const pathPart = decodeURI(hash === -1 ? target : target.slice(0, hash));
        const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
        const resolved =
          pathPart === ''
            ? path.join(root, file)
            : pathPart.startsWith('/')
            ? path.join(root, pathPart)
            : path.join(root, path.dirname(file), pathPart);
        if (!fs.existsSync(resolved)) {
          problems.push({ line: i + 1, what: 'broken link', match: target });
        } else if (anchor !== null && anchor !== '' && /\.md$/i.test(resolved) && fs.statSync(resolved).isFile()) {
          if (!anchorsIn(resolved).has(anchor)) problems.push({ line: i + 1, what: 'missing anchor', match: target });
        }
      }
    });
  return problems;
}

/** Every finding in the Markdown of `root`: [{ file, line, what, match }]. */
function checkDocs(root, files = markdownFiles(root)) {
  const problems = [];
  for (const file of files) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    for (const p of findCitations(text).concat(findBrokenLinks(root, file, text))) problems.push({ file, ...p });
  }
  problems.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
  return problems;
}

function main(argv) {
  const root = path.resolve(argv[0] !== undefined ? argv[0] : path.join(__dirname, '..'));
  const files = markdownFiles(root);
  const problems = checkDocs(root, files);
  for (const p of problems) console.log(`${p.file}:${p.line}: ${p.what}: "${p.match}"`);
  console.log(`check-docs: ${files.length} Markdown files, ${problems.length} finding${problems.length === 1 ? '' : 's'}`);
  return problems.length === 0 ? 0 : 1;
}

module.exports = { checkDocs, findCitations, findBrokenLinks, anchorsOf, slug, markdownFiles };

if (require.main === module) process.exitCode = main(process.argv.slice(2));
