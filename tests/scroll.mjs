// A reader scrolling through the whole page: every request the page and its workers make, and a
// slow scroll to the bottom that waits for each lazy part to be ready (the section figures
// drawn, the mechanism view run, the real limiters' report shown, the panels' code loaded).
// Shared by tests/weight.test.mjs (the budget) and tests/bench-page.mjs (the numbers).
import { readFileSync, existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';

/** Starts recording the page's requests, its workers' included: returns the list it fills with
 * each finished request's path under `base` (the page's folder), in order, repeats kept. */
export function recordFetches(page, base) {
  const paths = [];
  let last = Date.now();
  const note = () => { last = Date.now(); };
  page.on('request', note);
  page.on('requestfailed', note);
  page.on('requestfinished', (r) => {
    note();
    const url = r.url().split(/[?#]/)[0];
    if (url.startsWith(base)) paths.push(url.slice(base.length) || 'index.html');
  });
  paths.quietFor = () => Date.now() - last;
  return paths;
}

/** What a reader who scrolls through the page sees drawn: each section figure, the mechanism
 * view, the real limiters' figure, the recall quiz. */
export const READY = [
  ...['fig-rules', 'fig-boundary', 'plot-ceiling', 'plot-honest', 'plot-swc', 'plot-lockout', 'plot-split', 'plot-herding'].map((id) => `#${id}[data-drawn=true]`),
  '#mechanism[data-ready=true]',
  '#fig-real[data-ready=true]',
  '#quiz fieldset',
];

/** Scrolls from the top to the bottom by half a screen at a time, pausing `pause` ms at each
 * step (slow enough for every lazy part to see itself come into view), then waits until every
 * part in READY is ready and no request has started or ended for a second. `fetched` is the
 * list recordFetches returned. */
export async function scrollThrough(page, fetched, { pause = 250, timeout = 120000 } = {}) {
  await page.evaluate(() => window.scrollTo(0, 0));
  for (;;) {
    const { y, h, bottom } = await page.evaluate(() => ({ y: window.scrollY, h: window.innerHeight, bottom: document.documentElement.scrollHeight }));
    await page.waitForTimeout(pause);
    if (y + h >= bottom) break;
    await page.evaluate((dy) => window.scrollBy({ top: dy, behavior: 'instant' }), Math.floor(h / 2));
  }
  for (const sel of READY) await page.waitForSelector(sel, { state: 'attached', timeout });
  const until = Date.now() + timeout;
  while (fetched.quietFor() < 1000 && Date.now() < until) await page.waitForTimeout(200);
}

/** Gzip -9 sizes of files in `dist`, computed once each. */
export function gzipSizes(dist) {
  const known = new Map();
  return (f) => {
    if (!known.has(f)) known.set(f, existsSync(join(dist, f)) ? gzipSync(readFileSync(join(dist, f)), { level: 9 }).length : 0);
    return known.get(f);
  };
}

/** The distinct files of `fetched` that exist in `dist` (a file fetched twice, as the script
 * `ratelab-extra.js` is by the page and by the section worker, is counted once: the test server
 * forbids caching, a real host does not), with their gzipped sizes and the total. */
export function transfer(dist, fetched) {
  const gz = gzipSizes(dist);
  const files = [...new Set(fetched)].filter((f) => existsSync(join(dist, f))).sort();
  const sizes = files.map((f) => [f, gz(f)]);
  const times = (f) => fetched.filter((x) => x === f).length;
  return {
    files,
    bytes: sizes.reduce((s, [, n]) => s + n, 0),
    show: () => sizes.map(([f, n]) => `${f} ${(n / 1024).toFixed(1)} KB${times(f) > 1 ? ` (×${times(f)})` : ''}`).join(', '),
  };
}
