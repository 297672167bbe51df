import { chromium } from 'playwright-core';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true });
const page = await ctx.newPage();
await page.goto('http://127.0.0.1:8080/');
await page.locator('#real').scrollIntoViewIfNeeded();
await page.waitForTimeout(3000);
await page.locator('#real .scroll').screenshot({ path: 'target/fade-real.png' });
await browser.close();
