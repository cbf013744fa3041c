#!/usr/bin/env node
'use strict';
// Draws benchmark/ratios.svg: one bar per row, the ratio addon / native
// (lower is better), from
//   benchmark/results-instructions.json   node benchmark/run.js --instructions
//   benchmark/results-wall.json           node benchmark/run.js --instructions --wall (if present)
//   benchmark/results-lock.json           node benchmark/lock-contention.js --threads 2,4,8 (if present)
//   benchmark/results.json                node benchmark/run.js --json (if present)
//   benchmark/results-family.json         node benchmark/lock-family.js --runtimes … (if present;
//                                          the newest Node's rows, against each alternative)
// Bars start at the 1.0 line (as fast as native) and go left when the addon
// does better, right when it does worse, on a logarithmic axis (0.5 and 2
// are the same distance from 1). Ratios beyond the axis are drawn to its
// end with their value written. No dependencies: the SVG is written by hand.
//
//   node benchmark/chart.js [--out benchmark/ratios.svg]

const fs = require('fs');
const path = require('path');

const AXIS_MIN = 1 / 16;
const AXIS_MAX = 4;
const TICKS = [1 / 16, 1 / 8, 1 / 4, 1 / 2, 1, 2, 4];

const WIDTH = 900;
const LABEL_WIDTH = 440; // row labels on the left
const PLOT_LEFT = LABEL_WIDTH + 10;
const PLOT_RIGHT = WIDTH - 60;
const ROW_HEIGHT = 22;
const BAR_HEIGHT = 14;
const FONT = 'font-family="DejaVu Sans, Arial, Helvetica, sans-serif"';

function readJson(file) {
  const full = path.join(__dirname, file);
  return fs.existsSync(full) ? JSON.parse(fs.readFileSync(full, 'utf8')) : null;
}

function escape(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** x position of a ratio on the log axis, clamped to the plot. */
function x(ratio) {
  const clamped = Math.min(AXIS_MAX, Math.max(AXIS_MIN, ratio));
  const t = (Math.log(clamped) - Math.log(AXIS_MIN)) / (Math.log(AXIS_MAX) - Math.log(AXIS_MIN));
  return PLOT_LEFT + t * (PLOT_RIGHT - PLOT_LEFT);
}

function tickLabel(t) {
  return t >= 1 ? String(t) : `1/${Math.round(1 / t)}`;
}

/** The panels: a title and rows { label, ratio } for each results file. */
function panels() {
  const out = [];
  const instr = readJson('results-instructions.json');
  if (instr) {
    out.push({
      title: `Instructions per operation (callgrind), Node ${instr.node}, ${instr.date.slice(0, 10)}`,
      rows: instr.rows.filter((r) => r.ratio !== null).map((r) => ({
        label: `${r.id}: ${r.what}`,
        ratio: r.ratio,
        spread: Math.max(r.addonSpread || 0, r.nativeSpread || 0),
      })),
    });
  }
  const paired = readJson('results-wall.json');
  if (paired) {
    out.push({
      title: `Wall clock of the same programs, median of ${paired.rounds} paired rounds (run.js --instructions --wall), Node ${paired.node}, ${paired.date.slice(0, 10)}`,
      rows: paired.rows.filter((r) => r.ratio !== null).map((r) => ({ label: `${r.id}: ${r.what}`, ratio: r.ratio })),
    });
  }
  const lock = readJson('results-lock.json');
  if (lock) {
    out.push({
      title: `AsyncLock contended, time per lock operation vs the post's lock (lock-contention.js --threads), Node ${lock.node}, ${lock.date.slice(0, 10)}`,
      rows: lock.rows.filter((r) => r.throughputRatio).map((r) => ({
        label: `${r.threads} threads: main executeLocked + ${r.threads - 1} workers lock()`,
        ratio: 1 / r.throughputRatio,
      })),
    });
  }
  const wall = readJson('results.json');
  if (wall) {
    out.push({
      title: `Wall clock, medians of ${wall.rounds} rounds (benchmark/run.js), Node ${wall.node}, ${wall.date.slice(0, 10)}`,
      rows: wall.rows
        .filter((r) => r.ratio !== null && !r.binding)
        .map((r) => ({ label: `${r.caseName}: ${r.label}`, ratio: r.ratio })),
    });
  }
  const family = readJson('results-family.json');
  if (family && family.runtimes.length) {
    const run = family.runtimes[family.runtimes.length - 1];
    const names = { mutex: 'Atomics.Mutex', weblocks: 'Web Locks', multithreading: 'multithreading' };
    const rows = [];
    for (const r of run.rows) {
      if (r.caseName.startsWith('fair')) continue;
      for (const [key, name] of Object.entries(names)) {
        const ratio = r.ratio && r.ratio[key];
        if (!ratio) continue;
        // Time per operation against the alternative: throughput ratios inverted.
        rows.push({ label: `${r.label}, vs ${name}`, ratio: r.better === 'higher' ? 1 / ratio : ratio });
      }
    }
    out.push({
      title: `AsyncLock and Condition vs the alternatives, time per operation (lock-family.js), Node ${run.node.replace(/^v/, '')}, ${family.date.slice(0, 10)}`,
      rows,
    });
  }
  if (!out.length) throw new Error('no results: run `node benchmark/run.js --instructions` (and `--json`) first');
  return out;
}

function shorten(text, max) {
  return text.length <= max ? text : text.slice(0, max - 1) + '…';
}

function svg(list) {
  const parts = [];
  let y = 20;
  parts.push(`<text x="${WIDTH / 2}" y="${y}" text-anchor="middle" font-size="15" font-weight="bold" ${FONT}>` +
    'atomics-waitasync: addon / native (lower is better; 1 = same as native)</text>');
  y += 10;
  for (const panel of list) {
    y += 26;
    parts.push(`<text x="10" y="${y}" font-size="13" font-weight="bold" ${FONT}>${escape(panel.title)}</text>`);
    y += 10;
    const top = y;
    const bottom = top + panel.rows.length * ROW_HEIGHT;
    // Grid lines and tick labels; the 1.0 line is drawn last, on top.
    for (const t of TICKS) {
      parts.push(`<line x1="${x(t).toFixed(1)}" y1="${top}" x2="${x(t).toFixed(1)}" y2="${bottom}" stroke="#ddd"/>`);
      parts.push(`<text x="${x(t).toFixed(1)}" y="${bottom + 14}" text-anchor="middle" font-size="11" fill="#555" ${FONT}>${tickLabel(t)}</text>`);
    }
    panel.rows.forEach((row, i) => {
      const rowY = top + i * ROW_HEIGHT;
      const mid = rowY + ROW_HEIGHT / 2;
      if (i % 2 === 1) parts.push(`<rect x="0" y="${rowY}" width="${WIDTH}" height="${ROW_HEIGHT}" fill="#000" fill-opacity="0.03"/>`);
      parts.push(`<text x="${LABEL_WIDTH}" y="${mid + 4}" text-anchor="end" font-size="11.5" ${FONT}>${escape(shorten(row.label, 66))}</text>`);
      const x0 = x(1);
      const x1 = x(row.ratio);
      const better = row.ratio < 1;
      const color = better ? '#2e7d32' : '#c62828';
      const left = Math.min(x0, x1);
      const width = Math.max(1, Math.abs(x1 - x0));
      // A measurement that did not repeat (spread over 1 %) is drawn pale,
      // with its spread.
      const shaky = row.spread > 1;
      parts.push(`<rect x="${left.toFixed(1)}" y="${(mid - BAR_HEIGHT / 2).toFixed(1)}" width="${width.toFixed(1)}" height="${BAR_HEIGHT}" fill="${color}" fill-opacity="${shaky ? 0.35 : 0.8}"/>`);
      const clipped = row.ratio < AXIS_MIN || row.ratio > AXIS_MAX;
      const value = row.ratio.toFixed(2) + (clipped ? (row.ratio < AXIS_MIN ? ' ◂' : ' ▸') : '') +
        (shaky ? ` (±${Math.round(row.spread)} %)` : '');
      // The value at the bar's far end: outside it, or inside (white) when
      // the bar reaches the labels on the left.
      const inside = better && left - PLOT_LEFT < 40;
      const textX = inside ? left + 4 : better ? left - 4 : left + width + 4;
      const anchor = inside || !better ? 'start' : 'end';
      const fill = inside ? ' fill="#fff" font-weight="bold"' : '';
      parts.push(`<text x="${textX.toFixed(1)}" y="${mid + 4}" text-anchor="${anchor}" font-size="11"${fill} ${FONT}>${escape(value)}</text>`);
    });
    parts.push(`<line x1="${x(1).toFixed(1)}" y1="${top - 4}" x2="${x(1).toFixed(1)}" y2="${bottom + 2}" stroke="#000" stroke-width="1.5"/>`);
    y = bottom + 18;
  }
  y += 16;
  parts.push(`<text x="10" y="${y}" font-size="11" fill="#555" ${FONT}>` +
    'Logarithmic axis. Green: the addon needs less than native; red: more. ' +
    'Values beyond the axis are drawn to its end (◂ ▸).</text>');
  y += 15;
  parts.push(`<text x="10" y="${y}" font-size="11" fill="#555" ${FONT}>` +
    'Pale bars, (±N %): instruction counts whose two measurements differ by N % of their mean, more than 1 % (threads, or load).</text>');
  y += 12;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y}" viewBox="0 0 ${WIDTH} ${y}">\n` +
    `<rect width="${WIDTH}" height="${y}" fill="#fff"/>\n` +
    parts.join('\n') +
    '\n</svg>\n'
  );
}

function main() {
  const at = process.argv.indexOf('--out');
  const out = at === -1 ? path.join(__dirname, 'ratios.svg') : path.resolve(process.argv[at + 1]);
  fs.writeFileSync(out, svg(panels()));
  console.error(`wrote ${path.relative(process.cwd(), out)}`);
}

main();
