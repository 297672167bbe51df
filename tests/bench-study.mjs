// The essay-size study in the page, every experiment, two Web Workers: wall time, median of
// `N` runs (default 5), of this build's dist/ and, with `--vs DIR`, of another build's
// alternately with it (the ratio pair by pair), in headless Chromium.
// `node tests/bench-study.mjs [--vs OTHER_DIST] [N]` after `cargo xtask build`.
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';

const args = process.argv.slice(2);
const vsAt = args.indexOf('--vs');
const other = vsAt >= 0 ? args.splice(vsAt, 2)[1] : null;
const n = Number(args[0] ?? 5);
const dists = [new URL('../dist', import.meta.url).pathname, ...(other ? [other] : [])];
const servers = await Promise.all(dists.map((d) => serve(d)));
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });

async function study(server) {
  const page = await browser.newPage();
  await page.addInitScript(() => Object.defineProperty(navigator, 'hardwareConcurrency', { get: () => 2 }));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForSelector('#lab[data-ready=true]');
  await page.check('#study-full');
  await page.click('[data-testid=run-study]');
  await page.waitForSelector('[data-testid=study-done]', { state: 'attached', timeout: 600000 });
  const wall = Number(await page.textContent('[data-testid=study-done]'));
  // Where the wall time goes: the jobs' own time (summed over both workers, halved), and
  // when the first job began (the workers' start-up: the module's load and compile).
  const [ms, at] = await page.evaluate(() => [window.__ratelab.jobMs, window.__ratelab.jobAt]);
  const half = ms.reduce((a, b) => a + b, 0) / 2;
  const first = at ? Math.min(...at.map((a, i) => a - ms[i])) : NaN;
  await page.close();
  return { wall, half, first };
}

const runs = dists.map(() => []);
for (let i = 0; i < n; i++) {
  for (let d = 0; d < dists.length; d++) runs[d].push(await study(servers[d]));
}
const times = runs.map((r) => r.map((x) => x.wall));
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
for (let d = 0; d < dists.length; d++) {
  const v = times[d];
  console.log(`${dists[d]}: median ${(median(v) / 1000).toFixed(2)} s of ${v.length} (${(Math.min(...v) / 1000).toFixed(2)}–${(Math.max(...v) / 1000).toFixed(2)})`);
  const r = runs[d];
  if (r.every((x) => Number.isFinite(x.half) && Number.isFinite(x.first))) {
    console.log(`  of which: the jobs' time on each worker (summed, halved) median ${(median(r.map((x) => x.half)) / 1000).toFixed(2)} s; the first job began after ${median(r.map((x) => x.first)).toFixed(0)} ms; the rest (start-up, hand-overs, the last jobs' imbalance) ${median(r.map((x) => x.wall - x.half)).toFixed(0)} ms`);
  }
}
if (other) {
  const ratios = times[0].map((t, i) => t / times[1][i]);
  console.log(`ratio, this build over the other: median ${median(ratios).toFixed(3)} (pair by pair ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})`);
}
await browser.close();
for (const s of servers) s.close();
