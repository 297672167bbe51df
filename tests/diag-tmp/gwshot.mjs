import { chromium } from 'playwright-core';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
for (const [name, opts] of [['desk', { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 2 }], ['phone', { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true }]]) {
  const ctx = await browser.newContext(opts);
  const page = await ctx.newPage();
  await page.goto('http://127.0.0.1:8080/?gateways=8&gateways-coord=local');
  await page.locator('#gateways').scrollIntoViewIfNeeded();
  await page.waitForSelector('#gateways[data-ready=true]', { timeout: 30000 });
  await page.waitForTimeout(300);
  await page.locator('#plot-gateways').screenshot({ path: `target/gw-${name}.png` });
  await ctx.close();
}
await browser.close();
