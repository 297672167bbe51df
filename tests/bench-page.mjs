// A measured run of the built page in headless Chromium: transfer size, time to the first
// figure, and the time of a dial move (re-simulate and redraw a 10-minute scenario).
// `node tests/bench-page.mjs` after `trunk build --release --offline`; the README has the numbers.
import { chromium } from 'playwright-core';
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { serve } from './serve.mjs';

const dist = new URL('../dist', import.meta.url).pathname;
const files = readdirSync(dist).filter((f) => /\.(wasm|js|css|html)$/.test(f));
const gz = files.map((f) => [f, gzipSync(readFileSync(join(dist, f)), { level: 9 }).length]);
// The study module and its worker load only when a reader runs the study.
const onDemand = (f) => f.startsWith('ratelab-study') || f.startsWith('study-worker');
const total = gz.filter(([f]) => !onDemand(f)).reduce((s, [, n]) => s + n, 0);
const later = gz.filter(([f]) => onDemand(f)).reduce((s, [, n]) => s + n, 0);

const server = await serve(dist);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
const firsts = [];
let moves = [];
for (let i = 0; i < 5; i++) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForSelector('#lab[data-ready=true]');
  firsts.push(await page.evaluate(() => window.__ratelab.firstFigureMs));
  if (i === 0) {
    // 200 dial moves by keyboard on honest traffic, each a full re-run and redraw.
    await page.focus('[data-testid=capacity]');
    for (let k = 0; k < 200; k++) {
      const before = await page.evaluate(() => window.__ratelab.runs);
      await page.keyboard.press(k % 2 ? 'ArrowRight' : 'ArrowLeft');
      await page.waitForFunction((n) => window.__ratelab.runs > n, before);
    }
    moves = await page.evaluate(() => window.__ratelab.timings.slice(1));
  }
  await page.close();
}
// The essay-size study in Web Workers, against the CLI's time for the same work.
const page = await browser.newPage();
await page.goto(`http://127.0.0.1:${server.address().port}/`);
await page.waitForSelector('#lab[data-ready=true]');
await page.check('#study-full');
await page.click('[data-testid=run-study]');
await page.waitForSelector('[data-testid=study-done]', { state: 'attached', timeout: 600000 });
const studyMs = Number(await page.textContent('[data-testid=study-done]'));
const computeMs = await page.evaluate(() => window.__ratelab.studyComputeMs);
const workers = await page.evaluate(() => navigator.hardwareConcurrency);
await browser.close();
server.close();
const q = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]; };
console.log(`transfer (gzip -9): ${gz.map(([f, n]) => `${f} ${(n / 1024).toFixed(1)} KB`).join(', ')}; page load ${(total / 1024).toFixed(1)} KB, study on demand ${(later / 1024).toFixed(1)} KB`);
console.log(`first figure drawn after load: median ${q(firsts, 0.5).toFixed(0)} ms, max ${Math.max(...firsts).toFixed(0)} ms (${firsts.length} loads)`);
console.log(`essay-size study (all experiments, ${workers} workers): ${(studyMs / 1000).toFixed(2)} s wall, ${(computeMs / 1000).toFixed(2)} s inside the simulator summed over jobs`);
console.log(`dial move (re-simulate + redraw, 10-minute scenario): p50 ${q(moves, 0.5).toFixed(2)} ms, p95 ${q(moves, 0.95).toFixed(2)} ms, max ${Math.max(...moves).toFixed(2)} ms (${moves.length} moves)`);
