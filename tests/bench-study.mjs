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
  await page.close();
  return wall;
}

const times = dists.map(() => []);
for (let i = 0; i < n; i++) {
  for (let d = 0; d < dists.length; d++) times[d].push(await study(servers[d]));
}
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
for (let d = 0; d < dists.length; d++) {
  const v = times[d];
  console.log(`${dists[d]}: median ${(median(v) / 1000).toFixed(2)} s of ${v.length} (${(Math.min(...v) / 1000).toFixed(2)}–${(Math.max(...v) / 1000).toFixed(2)})`);
}
if (other) {
  const ratios = times[0].map((t, i) => t / times[1][i]);
  console.log(`ratio, this build over the other: median ${median(ratios).toFixed(3)} (pair by pair ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})`);
}
await browser.close();
for (const s of servers) s.close();
