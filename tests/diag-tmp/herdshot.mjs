import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
const server = spawn('python3', ['-m', 'http.server', '8092', '-d', 'dist'], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 800));
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
for (const [name, opts] of [['desk', { viewport: { width: 1280, height: 900 }, deviceScaleFactor: 2 }], ['phone', { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, colorScheme: 'dark' }]]) {
  const page = await browser.newPage(opts);
  await page.goto('http://127.0.0.1:8092/');
  await page.locator('#plot-herding').scrollIntoViewIfNeeded();
  await page.waitForSelector('#plot-herding[data-drawn=true]');
  await page.locator('#herding-mix-table').scrollIntoViewIfNeeded();
  await page.waitForSelector('#herding-mix-table[data-drawn=true]');
  await page.waitForSelector('#plot-herding[data-drawn=true]');
  await page.waitForTimeout(500);
  await page.locator('#herding').screenshot({ path: `/tmp/herd-${name}.png` });
  await page.locator('#herding-mix-table').screenshot({ path: `/tmp/herd-mix-${name}.png` });
  await page.close();
}
await browser.close(); server.kill();
