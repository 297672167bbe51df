import { chromium } from 'playwright-core';
import { serve } from '../serve.mjs';
const dist = new URL('../../dist', import.meta.url).pathname;
const server = await serve(dist);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
await page.goto(`http://127.0.0.1:${server.address().port}/`);
await page.waitForSelector('#lab[data-ready=true]');
await page.locator('#gateways').scrollIntoViewIfNeeded();
await page.click('#gateways-run');
await page.waitForSelector('#gateways[data-ready=true]', { timeout: 30000 });
const r = await page.evaluate(async () => {
  const { loadTools, loadExtra } = await import('/js/modules.js');
  const tools = await loadTools();
  const extra = tools;
  const out = { fig: [], draw: [] };
  for (let i = 0; i < 40; i++) {
    const n = i % 2 ? 8 : 9;
    const t0 = performance.now();
    const f = tools.gatewaysFigure(n, 'random', 'sync', '5s', 1, undefined);
    const t1 = performance.now();
    extra.drawPacked('plot-gateways', f.timeline.numbers, f.timeline.text, false);
    extra.drawPacked('plot-gateways-sweep', f.sweep.numbers, f.sweep.text, false);
    const t2 = performance.now();
    out.fig.push(t1 - t0); out.draw.push(t2 - t1);
  }
  const q = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(2); };
  return { fig: [q(out.fig, 0.5), q(out.fig, 0.95)], draw: [q(out.draw, 0.5), q(out.draw, 0.95)] };
});
console.log(JSON.stringify(r));
await browser.close(); server.close();
