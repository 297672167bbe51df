// A measured run of the built page in headless Chromium: transfer size (the first screen, and
// a reader scrolling through the whole page), time to the first figure, the time of a dial
// move (re-simulate and redraw a 10-minute scenario), the section figures' compute and draw.
// `node tests/bench-page.mjs` after `trunk build --release --offline` and
// `cargo build --release -p ratelab-cli`; the README has the numbers.
import { chromium } from 'playwright-core';
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join, sep } from 'node:path';
import { serve } from './serve.mjs';
import { recordFetches, scrollThrough, transfer } from './scroll.mjs';
import { spawnSync } from 'node:child_process';

const dist = new URL('../dist', import.meta.url).pathname;
// Paths in dist/, the page's modules under js/ included.
const files = readdirSync(dist, { recursive: true }).map((f) => f.split(sep).join('/')).filter((f) => /\.(wasm|js|css|html)$/.test(f) && !f.startsWith('probes/'));
const gz = files.map((f) => [f, gzipSync(readFileSync(join(dist, f)), { level: 9 }).length]);
// The study module and its worker load only when a reader runs the study.
const onDemand = (f) => /^(ratelab-study|ratelab-extra|ratelab-tools|study-worker|import-worker|section-worker|js\/panels\/)/.test(f);
const total = gz.filter(([f]) => !onDemand(f)).reduce((s, [, n]) => s + n, 0);
const later = gz.filter(([f]) => onDemand(f)).reduce((s, [, n]) => s + n, 0);

const server = await serve(dist);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
const firsts = [];
let fetchedAtLoad = [];
let moves = [];
for (let i = 0; i < 5; i++) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForSelector('#lab[data-ready=true]');
  firsts.push(await page.evaluate(() => window.__ratelab.firstFigureMs));
  if (i === 0) {
    // What a reader's browser really fetched for the first screen, a second after it was drawn.
    await page.waitForTimeout(1000);
    fetchedAtLoad = await page.evaluate(() => ['index.html', ...performance.getEntriesByType('resource').map((e) => e.name.split(/[?#]/)[0]).filter((u) => u.startsWith(location.origin + '/')).map((u) => u.slice(location.origin.length + 1))]);
  }
  await page.close();
}

// A reader scrolling through the whole page, half a screen at a time, until every section
// figure, the mechanism view, the real limiters and the quiz are drawn: everything fetched, by
// the page and its workers. Then each section figure computed again in the section worker
// (the time from asking to the data back on the page's thread) and drawn on the page's thread.
let scrolled;
const sectionTimes = {};
{
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const base = `http://127.0.0.1:${server.address().port}/`;
  const fetched = recordFetches(page, base);
  await page.goto(base);
  await page.waitForSelector('#lab[data-ready=true]');
  await scrollThrough(page, fetched);
  scrolled = transfer(dist, fetched);
  const times = await page.evaluate(async () => {
    const { sectionData, loadExtra } = await import('./js/modules.js');
    const extra = await loadExtra();
    const sections = [['rules', {}, 'rules-'], ['boundary-table', {}, null], ['ceiling', { capacity: 10 }, 'plot-ceiling'],
      ['honest', { traffic: 'page-loads', load: 0.8 }, 'plot-honest'], ['swc-offsets', {}, 'plot-swc'], ['lockout', {}, 'plot-lockout'], ['split', {}, 'plot-split'], ['herding', { jitter: 'full' }, 'plot-herding']];
    const out = {};
    for (let round = 0; round < 7; round++) {
      for (const [name, dials, canvas] of sections) {
        const t0 = performance.now();
        const data = await sectionData(name, dials);
        const t1 = performance.now();
        const plots = name === 'rules' ? data.plots.map((p, i) => [`${canvas}${i}`, p]) : data.plot ? [[canvas, data.plot]] : [];
        for (const [id, p] of plots) extra.drawPlot(id, p.numbers, p.text, false);
        const t2 = performance.now();
        (out[name] ??= { compute: [], draw: [] }).compute.push(t1 - t0);
        out[name].draw.push(t2 - t1);
      }
    }
    return out;
  });
  Object.assign(sectionTimes, times);
  await page.close();
}

// The gateways section, run once, then moved along its gateways dial: each move recomputes the
// figure in the tools module (the timeline, the sweep of 7 sync intervals and the table of 3
// coordinations) and redraws its two charts and table. Timed from the dial's input event to the
// sentence it ends with: forty moves to each of 1, 8 and 16 gateways, each from a neighbouring
// setting (syncing every 5 s).
const gatewayMoves = {};
{
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForSelector('#lab[data-ready=true]');
  await page.locator('#gateways').scrollIntoViewIfNeeded();
  await page.click('#gateways-run');
  await page.waitForSelector('#gateways[data-ready=true]', { timeout: 30000 });
  Object.assign(gatewayMoves, await page.evaluate(async () => {
    const dial = document.getElementById('gateways-n');
    const status = document.getElementById('gateways-status');
    const out = {};
    for (const n of [1, 8, 16]) {
      for (let i = 0; i < 81; i++) {
        // Alternating between n and a neighbour, so that each move changes the figure.
        const to = i % 2 ? n : (n === 16 ? 15 : n + 1);
        const said = new Promise((resolve) => {
          const seen = new MutationObserver(() => { seen.disconnect(); resolve(performance.now()); });
          seen.observe(status, { childList: true, characterData: true, subtree: true });
        });
        dial.value = String(to);
        const t0 = performance.now();
        dial.dispatchEvent(new Event('input'));
        const t1 = await said;
        if (to === n && i > 0) (out[n] ??= []).push(t1 - t0);
        await new Promise((r) => setTimeout(r, 30));
      }
    }
    return out;
  }));
  await page.close();
}

/** 200 dial moves by keyboard on honest traffic (a token bucket's capacity), each a full
 * re-run and redraw; with `mechanism`, the mechanism view is in sight and reruns too. */
async function dialMoves(mechanism) {
  // With the view: a screen tall enough to hold the dial and the view at once (out of sight
  // the view does not rerun).
  const page = await browser.newPage({ viewport: { width: 1280, height: mechanism ? 1800 : 900 } });
  await page.goto(`http://127.0.0.1:${server.address().port}/?algorithm=token-bucket`);
  await page.waitForSelector('#lab[data-ready=true]');
  if (mechanism) {
    await page.locator('#mechanism').scrollIntoViewIfNeeded();
    await page.waitForSelector('#mechanism[data-ready=true]');
  }
  const skip = await page.evaluate(() => window.__ratelab.timings.length);
  await page.focus('[data-testid=capacity]');
  for (let k = 0; k < 200; k++) {
    const before = await page.evaluate(() => window.__ratelab.runs);
    await page.keyboard.press(k % 2 ? 'ArrowRight' : 'ArrowLeft');
    await page.waitForFunction((n) => window.__ratelab.runs > n, before);
  }
  const out = await page.evaluate((skip) => window.__ratelab.timings.slice(skip), skip);
  // The mechanism view's own rerun and redraw, on the frame after each move's.
  await page.waitForTimeout(200);
  const view = mechanism ? await page.evaluate(() => window.__ratelab.mechanismTimings.slice(1)) : [];
  if (mechanism && view.length < 100) throw new Error(`the mechanism view reran ${view.length} times in 200 moves: was it in sight?`);
  await page.close();
  return [out, view];
}
[moves] = await dialMoves(false);
const [mechanismMoves, mechanismReruns] = await dialMoves(true);

/** Plays the mechanism view of `query` for 180 frames: frame intervals and long tasks. */
async function playback(query) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`http://127.0.0.1:${server.address().port}/${query}`);
  await page.waitForSelector('#lab[data-ready=true]');
  await page.locator('#mechanism').scrollIntoViewIfNeeded();
  await page.waitForSelector('#mechanism[data-ready=true]');
  const r = await page.evaluate(async () => {
    const long = [];
    new PerformanceObserver((l) => long.push(...l.getEntries().map((e) => e.duration))).observe({ type: 'longtask' });
    const range = document.getElementById('playhead');
    range.value = '0';
    range.dispatchEvent(new Event('input'));
    document.getElementById('play').click();
    const gaps = [];
    let last = performance.now();
    await new Promise((done) => {
      const f = (now) => { gaps.push(now - last); last = now; if (gaps.length < 180) requestAnimationFrame(f); else done(); };
      requestAnimationFrame(f);
    });
    document.getElementById('play').click();
    return { gaps, long, decisions: Number(range.max) + 1 };
  });
  await page.close();
  return r;
}
const plays = [];
for (const query of ['', '?algorithm=sliding-log&attack=retry-storm&record-rejects=1', '?algorithm=token-bucket&limit=5000']) {
  plays.push([query || '(the opening)', await playback(query)]);
}
// The essay-size study in Web Workers: the honest-client table alone, then every experiment on
// all cores, then every experiment in one worker against the CLI on one thread (the same work,
// neither sharing its core).
async function study({ honestOnly = false, workers = null } = {}) {
  const page = await browser.newPage();
  if (workers) await page.addInitScript((n) => Object.defineProperty(navigator, 'hardwareConcurrency', { get: () => n }), workers);
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForSelector('#lab[data-ready=true]');
  await page.check('#study-full');
  if (honestOnly) await page.check('#study-honest-only');
  await page.click('[data-testid=run-study]');
  await page.waitForSelector('[data-testid=study-done]', { state: 'attached', timeout: 600000 });
  const out = {
    wallMs: Number(await page.textContent('[data-testid=study-done]')),
    computeMs: await page.evaluate(() => window.__ratelab.studyComputeMs),
    workers: await page.evaluate(() => navigator.hardwareConcurrency),
  };
  await page.close();
  return out;
}
// A million lines of epoch milliseconds, read in a worker: time from choosing the file to the
// summary and the replay through every limiter.
const lines = new Array(1_000_000);
for (let i = 0; i < lines.length; i++) lines[i] = String(Date.UTC(2026, 11, 1) + Math.floor(i * 2.7));
const million = Buffer.from(lines.join('\n'));
const imports = [];
for (let i = 0; i < 3; i++) {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForSelector('#lab[data-ready=true]');
  await page.setInputFiles('#import-file', { name: 'million.txt', mimeType: 'text/plain', buffer: million });
  await page.waitForFunction(() => window.__ratelab.importMs !== undefined, null, { timeout: 60000 });
  imports.push(await page.evaluate(() => window.__ratelab.importMs));
  await page.close();
}
const honest = [];
for (let i = 0; i < 3; i++) honest.push(await study({ honestOnly: true }));
const all = await study();
const single = await study({ workers: 1 });
const cli = new URL('../target/release/ratelab', import.meta.url).pathname;
const native = spawnSync(cli, ['study', '--threads', '1'], { encoding: 'utf8' });
const nativeMs = native.status === 0 ? 1000 * Number(/([\d.]+) s inside the simulator/.exec(native.stderr)?.[1]) : NaN;
await browser.close();
server.close();
const q = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]; };
console.log(`transfer (gzip -9): ${gz.map(([f, n]) => `${f} ${(n / 1024).toFixed(1)} KB`).join(', ')}; page load ${(total / 1024).toFixed(1)} KB, study on demand ${(later / 1024).toFixed(1)} KB`);
const fetchedGz = gz.filter(([f]) => fetchedAtLoad.includes(f)).reduce((s, [, n]) => s + n, 0);
console.log(`fetched for the first screen (1280 × 900, a second after the first figure): ${fetchedAtLoad.join(', ')}: ${(fetchedGz / 1024).toFixed(1)} KB gzipped`);
console.log(`a scroll through the whole page (1280 × 900, every section figure, the mechanism view, the real limiters and the quiz drawn): ${scrolled.show()}: ${(scrolled.bytes / 1024).toFixed(1)} KB gzipped in all`);
for (const [name, { compute, draw }] of Object.entries(sectionTimes)) {
  console.log(`section ${name}: computed in the section worker, p50 ${q(compute, 0.5).toFixed(1)} ms (max ${Math.max(...compute).toFixed(1)}); drawn, p50 ${q(draw, 0.5).toFixed(1)} ms (${compute.length} rounds)`);
}
for (const [n, ms] of Object.entries(gatewayMoves)) {
  console.log(`gateways section at ${n} gateway(s): a dial move recomputed and redrawn, p50 ${q(ms, 0.5).toFixed(1)} ms, p95 ${q(ms, 0.95).toFixed(1)} ms (${ms.length} moves)`);
}
console.log(`first figure drawn after load: median ${q(firsts, 0.5).toFixed(0)} ms, max ${Math.max(...firsts).toFixed(0)} ms (${firsts.length} loads)`);
console.log(`a million-line file read, parsed and replayed through every limiter in a worker: ${imports.map((x) => (x / 1000).toFixed(2)).join(', ')} s (${(million.length / 1e6).toFixed(1)} MB)`);
console.log(`essay-size honest-client table alone, ${honest[0].workers} workers: ${honest.map((h) => (h.wallMs / 1000).toFixed(2)).join(', ')} s wall (${honest.length} runs)`);
console.log(`essay-size study, every experiment, ${all.workers} workers: ${(all.wallMs / 1000).toFixed(2)} s wall, ${(all.computeMs / 1000).toFixed(2)} s inside the simulator summed over jobs`);
console.log(`same work on one core: wasm in 1 worker ${(single.computeMs / 1000).toFixed(2)} s, native (ratelab study --threads 1) ${(nativeMs / 1000).toFixed(2)} s: ${(single.computeMs / nativeMs).toFixed(2)}x`);
if (native.status !== 0) console.log(`(build the CLI first: cargo build --release -p ratelab-cli) ${native.stderr}`);
console.log(`dial move (re-simulate + redraw, 10-minute scenario): p50 ${q(moves, 0.5).toFixed(2)} ms, p95 ${q(moves, 0.95).toFixed(2)} ms, max ${Math.max(...moves).toFixed(2)} ms (${moves.length} moves)`);
console.log(`dial move with the mechanism view in sight: p50 ${q(mechanismMoves, 0.5).toFixed(2)} ms, p95 ${q(mechanismMoves, 0.95).toFixed(2)} ms, max ${Math.max(...mechanismMoves).toFixed(2)} ms; the view's rerun and redraw on the next frame (${mechanismReruns.length}): p50 ${q(mechanismReruns, 0.5).toFixed(2)} ms, p95 ${q(mechanismReruns, 0.95).toFixed(2)} ms`);
for (const [query, r] of plays) {
  console.log(`playback ${query}, ${r.decisions} decisions: frame interval p50 ${q(r.gaps, 0.5).toFixed(1)} ms, p95 ${q(r.gaps, 0.95).toFixed(1)} ms; long tasks: ${r.long.length ? r.long.map((d) => d.toFixed(0)).join(', ') + ' ms' : 'none'}`);
}
