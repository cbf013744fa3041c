'use strict';
// The comments of a JavaScript file taken out, everything else kept as it
// is: scripts/stage.js ships the files a thread loads with the package
// without them (their text is what a fresh thread reads, scans and keeps
// in its young heap). Each comment becomes its own line breaks, so a line
// of the result is the same line of the source, and a stack trace's line
// numbers are the repository's.
//
// Tokens come from TypeScript's scanner (a devDependency): it tells a
// regular expression from a division and a template's text from code as
// the scanner of a parser does, from the token before. `stripComments`
// then checks its result two ways and throws unless both agree: scanned
// again, it holds the same tokens in the same order as the source without
// its comments; and TypeScript's parser reads the same program from both
// (each printed back without comments, the two texts are equal).

const ts = require('typescript');

const K = ts.SyntaxKind;

// After these a `/` divides; after anything else it starts a regular
// expression.
const ENDS_OPERAND = new Set([
  K.Identifier, K.PrivateIdentifier, K.NumericLiteral, K.BigIntLiteral, K.StringLiteral,
  K.RegularExpressionLiteral, K.NoSubstitutionTemplateLiteral, K.TemplateTail,
  K.CloseParenToken, K.CloseBracketToken, K.CloseBraceToken,
  K.ThisKeyword, K.SuperKeyword, K.TrueKeyword, K.FalseKeyword, K.NullKeyword,
  K.PlusPlusToken, K.MinusMinusToken,
]);

const isComment = (kind) => kind === K.SingleLineCommentTrivia || kind === K.MultiLineCommentTrivia;
const isTrivia = (kind) => isComment(kind) || kind === K.WhitespaceTrivia || kind === K.NewLineTrivia ||
  kind === K.ShebangTrivia || kind === K.ConflictMarkerTrivia;

/** The source's tokens as [{ kind, text }], comments and white space included. */
function tokens(source) {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, source, (message) => {
    throw new Error(`cannot scan at offset ${scanner.getTokenStart()}: ${message.message}`);
  });
  const out = [];
  // For each `{` or `${` open: whether a template's `}` closes it.
  const braces = [];
  let before = null; // the last token that is not trivia
  for (let kind = scanner.scan(); kind !== K.EndOfFileToken; kind = scanner.scan()) {
    if ((kind === K.SlashToken || kind === K.SlashEqualsToken) && !ENDS_OPERAND.has(before)) {
      kind = scanner.reScanSlashToken();
    } else if (kind === K.TemplateHead || kind === K.OpenBraceToken) {
      braces.push(kind === K.TemplateHead);
    } else if (kind === K.CloseBraceToken && braces.pop()) {
      kind = scanner.reScanTemplateToken(false);
      if (kind === K.TemplateMiddle) braces.push(true);
    }
    if (kind === K.Unknown) throw new Error(`cannot scan at offset ${scanner.getTokenStart()}`);
    out.push({ kind, text: scanner.getTokenText() });
    if (!isTrivia(kind)) before = kind;
  }
  return out;
}

const significant = (list) => list.filter((t) => !isTrivia(t.kind)).map((t) => `${t.kind}:${t.text}`);

/** The program `source` parses to, printed back without comments. */
function printed(source) {
  const file = ts.createSourceFile('file.js', source, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  return ts.createPrinter({ removeComments: true }).printFile(file);
}

/** `source` without its comments, line for line (`name` is for the error). */
function stripComments(source, name = 'the source') {
  const list = tokens(source);
  let out = '';
  for (const token of list) out += isComment(token.kind) ? token.text.replace(/[^\n]/g, '') : token.text;
  // Trailing spaces where a comment ended a line.
  out = out.replace(/[ \t]+\n/g, '\n');
  const want = significant(list);
  const got = significant(tokens(out));
  const at = want.findIndex((t, i) => got[i] !== t);
  if (at !== -1 || got.length !== want.length) {
    throw new Error(`${name}: stripping its comments changed its tokens (at token ${at === -1 ? want.length : at})`);
  }
  if (out.split('\n').length !== source.split('\n').length) throw new Error(`${name}: stripping its comments moved its lines`);
  if (printed(out) !== printed(source)) throw new Error(`${name}: stripping its comments changed the program it parses to`);
  return out;
}

module.exports = { stripComments };
