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
//
// And benchmark/growth.svg: how the ratios move as the number of pending
// waiters grows (10^3 to 10^6, one element each: notify on an idle element,
// a worker's notify of main-thread waiters, fan-out, bytes per waiter, from
// results-instructions.json, results-wall.json and
// results-memory-growth.json) and as AsyncLock's threads do (1 to 8,
// results-lock.json): one line per cost, addon / native on the same
// logarithmic axis. A line that climbs is a cost that grows faster than
// native's.
//
//   node benchmark/chart.js [--out benchmark/ratios.svg] [--growth-out benchmark/growth.svg]

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

/** Where a ratio falls on the log axis: 0 at AXIS_MIN to 1 at AXIS_MAX, clamped. */
function logFraction(ratio) {
  const clamped = Math.min(AXIS_MAX, Math.max(AXIS_MIN, ratio));
  return (Math.log(clamped) - Math.log(AXIS_MIN)) / (Math.log(AXIS_MAX) - Math.log(AXIS_MIN));
}

/** x position of a ratio on the log axis, clamped to the plot. */
function x(ratio) {
  return PLOT_LEFT + logFraction(ratio) * (PLOT_RIGHT - PLOT_LEFT);
}

/**
 * An SVG page of both charts: `heading`, then for each panel its title and
 * what `draw(panel, parts, top)` adds below it (returning the y it ends
 * at), then the `notes`, one line each.
 */
function page(heading, list, titleGap, draw, notes) {
  const parts = [];
  let y = 20;
  parts.push(`<text x="${WIDTH / 2}" y="${y}" text-anchor="middle" font-size="15" font-weight="bold" ${FONT}>` +
    `${heading}</text>`);
  y += 10;
  for (const panel of list) {
    y += 26;
    parts.push(`<text x="10" y="${y}" font-size="13" font-weight="bold" ${FONT}>${escape(panel.title)}</text>`);
    y = draw(panel, parts, y + titleGap);
  }
  y += 1; // 16 above the first note, 15 between them
  for (const note of notes) {
    y += 15;
    parts.push(`<text x="10" y="${y}" font-size="11" fill="#555" ${FONT}>${note}</text>`);
  }
  y += 12;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y}" viewBox="0 0 ${WIDTH} ${y}">\n` +
    `<rect width="${WIDTH}" height="${y}" fill="#fff"/>\n` +
    parts.join('\n') +
    '\n</svg>\n'
  );
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
      title: `Wall clock of the same programs, median of paired rounds (run.js --instructions --wall), Node ${paired.node}, ` +
        [...new Set(paired.rows.map((r) => (r.run ? r.run.date : paired.date).slice(0, 10)))].sort().join(', '),
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
  return page('atomics-waitasync: addon / native (lower is better; 1 = same as native)', list, 10, drawBars, [
    'Logarithmic axis. Green: the addon needs less than native; red: more. ' +
      'Values beyond the axis are drawn to its end (◂ ▸).',
    'Pale bars, (±N %): instruction counts whose two measurements differ by N % of their mean, more than 1 % (threads, or load).',
  ]);
}

/** A panel of bars, one per row, from the 1.0 line; returns the y below it. */
function drawBars(panel, parts, top) {
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
  return bottom + 18;
}

// The growth chart's x positions: pending waiters (0 is drawn with 10^3)
// and AsyncLock's threads.
const GROWTH_KS = [1000, 10000, 100000, 1000000];
const GROWTH_K_LABELS = ['0 or 10³', '10⁴', '10⁵', '10⁶'];
const LOCK_THREADS = [1, 2, 4, 8];
const SERIES_COLORS = ['#1565c0', '#c62828', '#2e7d32', '#6a1b9a', '#ef6c00', '#00838f', '#5d4037', '#ad1457'];

/** The growth chart's panels: { title, xs, xLabels, series: [{ label, points: [[x, ratio]] }] }. */
function growthPanels() {
  const byId = (file) => {
    const json = readJson(file);
    return json ? { json, rows: new Map(json.rows.map((r) => [r.id, r])) } : null;
  };
  const pick = (source, ids) =>
    source
      ? ids
          .map((id, i) => [GROWTH_KS[i], source.rows.get(id)])
          .filter(([, r]) => r && r.ratio !== null && r.ratio !== undefined)
          .map(([k, r]) => [k, r.ratio])
      : [];
  const instr = byId('results-instructions.json');
  const wall = byId('results-wall.json');
  const memory = readJson('results-memory-growth.json');
  const series = [
    // notify-growth has 0, 10^4, 10^5 and 10^6 pending: 0 is drawn at 10^3.
    { label: 'notify on an element nobody waits on (instructions)', points: pick(instr, ['notify-growth-0', 'notify-growth-10k', 'notify-growth-100k', 'notify-growth-1m']) },
    { label: 'a worker notifies K main waiters, until settled (wall)', points: pick(wall, ['cross-thread-1k', 'cross-thread-10k', 'cross-thread-100k']) },
    { label: 'the worker\'s notify call alone (wall)', points: pick(wall, ['cross-thread-notify-1k', 'cross-thread-notify-10k', 'cross-thread-notify-100k']) },
    { label: 'the main thread\'s waitAsync calls (wall)', points: pick(wall, ['cross-thread-create-1k', 'cross-thread-create-10k', 'cross-thread-create-100k']) },
    { label: 'fan-out: one notify wakes K waiters, per waiter (wall)', points: pick(wall, ['fan-out-1k', 'fan-out-10k', 'fan-out-100k']) },
  ];
  if (memory) {
    for (const where of ['main', 'worker']) {
      series.push({
        label: `bytes per pending waiter, ${where === 'main' ? 'main thread' : 'worker'} (anonymous RSS)`,
        points: memory.rows.filter((r) => r.where === where).map((r) => [r.k, r.ratio]),
      });
    }
  }
  const out = [];
  const dates = [instr && instr.json.date, wall && wall.json.date, memory && memory.date].filter(Boolean).map((d) => d.slice(0, 10));
  out.push({
    title: `Costs against pending waiters, one element each (Node ${(instr || wall || { json: { node: '?' } }).json.node}; ${[...new Set(dates)].join(', ')})`,
    xs: GROWTH_KS,
    xLabels: GROWTH_K_LABELS,
    series: series.filter((x) => x.points.length),
  });
  const lock = readJson('results-lock.json');
  if (lock) {
    out.push({
      title: `AsyncLock, main executeLocked + workers lock(), time per operation vs the post's lock (lock-contention.js, ${lock.date.slice(0, 10)})`,
      xs: LOCK_THREADS,
      xLabels: LOCK_THREADS.map((t) => `${t} thread${t > 1 ? 's' : ''}`),
      series: [{ label: 'AsyncLock / the V8 post\'s lock', points: lock.rows.filter((r) => r.throughputRatio).map((r) => [r.threads, 1 / r.throughputRatio]) }],
    });
  }
  return out.filter((panel) => panel.series.length);
}

function growthSvg(list) {
  return page('atomics-waitasync: how costs grow, addon / native (lower is better; 1 = same as native)', list, 16, drawLines, [
    'Logarithmic axes. A line that climbs is a cost that grows faster than native\'s; docs/performance.md ("Many waiters") says why.',
  ]);
}

/** A panel of lines, ratio against size, with their legend; returns the y below it. */
function drawLines(panel, parts, top) {
  const plotLeft = 60;
  const plotRight = 520;
  const plotHeight = 220;
  const legendX = plotRight + 20;
  const yOf = (ratio) => top + (1 - logFraction(ratio)) * plotHeight;
  const bottom = top + plotHeight;
  const xOf = (value) => {
    const i = panel.xs.indexOf(value);
    return plotLeft + 20 + (i * (plotRight - plotLeft - 40)) / (panel.xs.length - 1);
  };
  for (const t of TICKS) {
    const ty = yOf(t);
    parts.push(`<line x1="${plotLeft}" y1="${ty.toFixed(1)}" x2="${plotRight}" y2="${ty.toFixed(1)}" stroke="${t === 1 ? '#000' : '#ddd'}" stroke-width="${t === 1 ? 1.5 : 1}"/>`);
    parts.push(`<text x="${plotLeft - 6}" y="${(ty + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="#555" ${FONT}>${tickLabel(t)}</text>`);
  }
  panel.xs.forEach((value, i) => {
    parts.push(`<text x="${xOf(value).toFixed(1)}" y="${bottom + 16}" text-anchor="middle" font-size="11" fill="#555" ${FONT}>${escape(panel.xLabels[i])}</text>`);
  });
  panel.series.forEach((series, i) => {
    const color = SERIES_COLORS[i % SERIES_COLORS.length];
    const points = series.points.map(([value, ratio]) => [xOf(value), yOf(ratio), ratio]);
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(' ')}"/>`);
    for (const [px, py] of points) parts.push(`<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="3" fill="${color}"/>`);
    const ly = top + 10 + i * 30;
    parts.push(`<line x1="${legendX}" y1="${ly}" x2="${legendX + 18}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    const values = series.points.map(([, ratio]) => ratio.toFixed(2)).join(', ');
    parts.push(`<text x="${legendX + 24}" y="${ly + 4}" font-size="11" ${FONT}>${escape(shorten(series.label, 58))}</text>`);
    parts.push(`<text x="${legendX + 24}" y="${ly + 17}" font-size="10.5" fill="#555" ${FONT}>${escape(values)}</text>`);
  });
  return Math.max(bottom + 28, top + 10 + panel.series.length * 30);
}

function main() {
  const at = process.argv.indexOf('--out');
  const out = at === -1 ? path.join(__dirname, 'ratios.svg') : path.resolve(process.argv[at + 1]);
  fs.writeFileSync(out, svg(panels()));
  console.error(`wrote ${path.relative(process.cwd(), out)}`);
  const growthAt = process.argv.indexOf('--growth-out');
  const growthOut = growthAt === -1 ? path.join(__dirname, 'growth.svg') : path.resolve(process.argv[growthAt + 1]);
  const growth = growthPanels();
  if (growth.length) {
    fs.writeFileSync(growthOut, growthSvg(growth));
    console.error(`wrote ${path.relative(process.cwd(), growthOut)}`);
  }
}

main();
