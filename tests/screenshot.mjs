// The README's picture of the page: the lab at the top of the built page (dist/), as a
// visitor on a laptop sees it, written to docs/images/page.png. `cargo xtask screenshot`
// builds the page and runs this; by hand, `node tests/screenshot.mjs` after `cargo xtask build`.
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';
import { root } from './helpers.mjs';

const server = await serve(join(root, 'dist'), 0, '127.0.0.1', '/');
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 920 }, deviceScaleFactor: 1, reducedMotion: 'reduce' });
  const page = await context.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForSelector('#lab[data-ready=true]');
  // Let the lab's figures settle after their first draw.
  await page.waitForTimeout(500);
  const out = join(root, 'docs', 'images', 'page.png');
  // The page's top: its promise, the lab's controls, verdict, numbers and window chart.
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
  server.close();
}
