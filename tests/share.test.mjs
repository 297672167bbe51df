// Sharing and embedding, end to end: a figure's link restores the same figure, a bad link is
// named and the rest kept, the embed page shows one figure alone, and the built site works
// from a sub-path of a static host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setup, open, text, act, origin, cli } from './helpers.mjs';

setup();

/** What the main figure shows: every read-out and a fingerprint of the window plot. */
async function figure(page) {
  return page.evaluate(() => {
    const t = (id) => document.querySelector(`[data-testid=${id}]`).textContent;
    const c = document.getElementById('plot-window');
    const pixels = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let hash = 0;
    for (let i = 0; i < pixels.length; i += 4) hash = (hash * 31 + pixels[i] + 7 * pixels[i + 1] + 13 * pixels[i + 2]) >>> 0;
    return {
      worst: t('worst-window'), bound: t('bound'), served: t('served-share'),
      admits: t('wrong-admits'), rejects: t('wrong-rejects'), cli: document.getElementById('cli').textContent, hash,
    };
  });
}

test('a link restores the same figure, compare mode included', async (t) => {
  const { page, problems } = await open(t);
  await act(page, () => page.selectOption('[data-testid=algorithm]', 'sliding-window-counter'));
  await act(page, () => page.fill('[data-testid=limit]', '40'));
  await act(page, () => page.fill('[data-testid=seed]', '7'));
  await act(page, () => page.selectOption('[data-testid=traffic]', 'page-loads'));
  await act(page, () => page.click('[data-testid=record-rejects]'));
  await act(page, () => page.click('[data-testid=boundary-burst]'));
  await act(page, () => page.click('[data-testid=compare]'));
  // The address bar follows once the reader pauses.
  await page.waitForFunction(() => location.search.includes('compare=1'));
  const url = page.url();
  assert.match(url, /algorithm=sliding-window-counter/);
  assert.match(url, /limit=40/);
  assert.match(url, /attack=boundary-burst/);
  assert.match(url, /compare=1/);
  const before = await figure(page);
  // The comparison is computed by the tools module, which may still be loading.
  await page.waitForSelector('#compare-table[data-ready=true]');
  const rows = await page.locator('[data-testid=compare-table] tbody tr').allTextContents();
  // The copy-link button offers the same address.
  await page.click('[data-testid=copy-link]');
  assert.equal(await page.inputValue('[data-testid=share-text]'), url);

  const again = await open(t, { path: url.slice(origin.length) });
  assert.deepEqual(await figure(again.page), before, 'same read-outs, same command, same pixels');
  assert.equal(await again.page.locator('[data-testid=algorithm]').inputValue(), 'sliding-window-counter');
  assert.equal(await again.page.locator('[data-testid=boundary-burst]').getAttribute('aria-pressed'), 'true');
  assert.equal(await again.page.isChecked('[data-testid=record-rejects]'), true);
  await again.page.waitForSelector('#compare-table[data-ready=true]');
  assert.deepEqual(await again.page.locator('[data-testid=compare-table] tbody tr').allTextContents(), rows);
  assert.equal(await again.page.isVisible('[data-testid=url-error]'), false);
  // The capacity dial keeps a value above twice the limit rather than clamping it.
  const big = await open(t, { path: '/?capacity=500&limit=60' });
  assert.equal(await big.page.inputValue('[data-testid=capacity]'), '500');
  assert.equal(await text(big.page, 'bound'), String(500 + 60 - 1));
  // The section figures' controls are in the link too.
  const sec = await open(t, { path: '/?ceiling-capacity=70&honest-load=1' });
  assert.equal(await sec.page.inputValue('#ceiling-capacity'), '70');
  assert.equal(await sec.page.inputValue('#honest-load'), '1');
  await sec.page.selectOption('#honest-traffic', 'on-off');
  await sec.page.waitForFunction(() => location.search.includes('honest-traffic=on-off'));
  assert.match(sec.page.url(), /ceiling-capacity=70/);
  assert.deepEqual([...problems, ...again.problems, ...big.problems, ...sec.problems], []);
});

test('a bad parameter in a link is named, what is accepted is said, and the rest is kept', async (t) => {
  const { page, problems } = await open(t, { path: '/?algorithm=gcra&limit=abc&load=NaN&window=-5&bogus=1&traffic=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E' });
  const box = page.locator('[data-testid=url-error]');
  assert.equal(await box.isVisible(), true);
  const items = await box.locator('li').allTextContents();
  assert.equal(items.length, 5, items.join('\n'));
  assert.match(items[0], /limit='abc'.*a whole number from 1 to 100000/);
  assert.match(items[1], /load='NaN'.*from 0.01 to 3/);
  assert.match(items[2], /window='-5'/);
  assert.match(items[3], /'bogus' is not one ratelab knows/);
  assert.match(items[4], /<img src=x onerror=alert\(1\)>/, 'the value is shown as text');
  assert.equal(await page.locator('#url-problems img').count(), 0, 'and never as HTML');
  // The good parameter is kept, the figure runs on defaults for the bad ones, and the link stays
  // in the address bar as given until the reader changes something.
  assert.equal(await page.locator('[data-testid=algorithm]').inputValue(), 'gcra');
  assert.equal(await page.inputValue('[data-testid=limit]'), '60');
  assert.notEqual(await text(page, 'worst-window'), '–');
  assert.match(page.url(), /limit=abc/);
  await act(page, () => page.fill('[data-testid=seed]', '3'));
  await page.waitForFunction(() => location.search.includes('seed=3'));
  assert.doesNotMatch(page.url(), /abc/);
  assert.match(page.url(), /algorithm=gcra/);
  assert.deepEqual(problems, []);
});

test('the embed page shows the figure alone, sized to its frame, and the embed code points at it', async (t) => {
  const { page, problems } = await open(t);
  await act(page, () => page.selectOption('[data-testid=algorithm]', 'fixed-window'));
  await act(page, () => page.click('[data-testid=flood]'));
  await page.click('[data-testid=copy-embed]');
  const snippet = await page.inputValue('[data-testid=share-text]');
  const src = /src="([^"]+)"/.exec(snippet)[1].replace(/&amp;/g, '&');
  assert.match(src, /embed=1/);
  assert.match(snippet, /^<iframe [^>]*title="[^"]+"/);
  const worst = await text(page, 'worst-window');

  // A host page with the snippet in a 640 px column.
  // A host page of its own (a blank document, not ratelab's, so without ratelab's CSP).
  const host = { page: await page.context().newPage(), problems: [] };
  host.page.on('console', (m) => { if (m.type() === 'error') host.problems.push(`console: ${m.text()}`); });
  host.page.on('pageerror', (e) => host.problems.push(`page error: ${e}`));
  await host.page.setContent(`<!doctype html><body style="margin:0"><div style="width:640px">${snippet}</div></body>`);
  const frame = await (await host.page.waitForSelector('iframe')).contentFrame();
  await frame.waitForSelector('#lab[data-ready=true]');
  assert.equal(await frame.textContent('[data-testid=worst-window]'), worst, 'the same figure');
  assert.equal(worst, '120', 'a flood on a fixed window of 60 reaches 2L');
  const shown = await frame.evaluate(() => ({
    essay: getComputedStyle(document.querySelector('.essay')).display,
    intro: getComputedStyle(document.querySelector('.intro')).display,
    canvas: document.getElementById('plot-window').width,
    page: document.documentElement.clientWidth,
    sections: document.querySelectorAll('[data-drawn=true]').length,
  }));
  assert.equal(shown.essay, 'none');
  assert.equal(shown.intro, 'none');
  assert.equal(shown.sections, 0, 'nothing else is computed');
  assert.ok(shown.canvas <= shown.page && shown.canvas >= 280, `canvas ${shown.canvas} px in a ${shown.page} px frame`);
  assert.equal(await frame.isVisible('#open-full'), true);
  assert.doesNotMatch(await frame.getAttribute('#open-full', 'href'), /embed/);
  assert.deepEqual([...problems, ...host.problems], []);
});

test('the built site works from a sub-path, with relative URLs only', async (t) => {
  const { page, problems } = await open(t, { path: '/some/sub/path/' });
  assert.notEqual(await text(page, 'worst-window'), '–');
  await page.locator('#rules').scrollIntoViewIfNeeded();
  await page.waitForSelector('#fig-rules[data-drawn=true]');
  await page.locator('#ceiling').scrollIntoViewIfNeeded();
  await page.waitForSelector('#plot-ceiling[data-drawn=true]', { timeout: 20000 });
  const requested = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname));
  assert.ok(requested.length > 3);
  for (const p of requested) assert.ok(p.startsWith('/some/sub/path/'), `${p} is under the sub-path`);
  assert.deepEqual(problems, []);
});

/** Clicks `selector` and returns the downloaded file's name and contents. */
async function saved(page, selector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const path = await download.path();
  return { name: download.suggestedFilename(), body: readFileSync(path) };
}

const csvRows = (text) => text.trim().split('\n').map((l) => l.split(','));

test('every plot saves as PNG, SVG and CSV, and the files hold what the figure shows', async (t) => {
  const { page, problems } = await open(t);
  await act(page, () => page.selectOption('[data-testid=algorithm]', 'fixed-window'));
  await act(page, () => page.click('[data-testid=boundary-burst]'));
  const worst = Number(await text(page, 'worst-window'));

  const png = await saved(page, '[data-testid=export-png-plot-window]');
  assert.equal(png.name, 'ratelab-window.png');
  assert.deepEqual([...png.body.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  // Twice the chart's size (its IHDR's width and height), whatever the screen's pixel ratio.
  const chart = await page.evaluate(() => { const c = document.getElementById('plot-window'); return [Number(c.dataset.w), Number(c.dataset.h)]; });
  assert.ok(chart[0] >= 280, `the chart is laid out ${chart[0]} wide`);
  assert.deepEqual([png.body.readUInt32BE(16), png.body.readUInt32BE(20)], [2 * chart[0], 2 * chart[1]], 'the PNG is drawn at 2x');

  const svg = await saved(page, '[data-testid=export-svg-plot-window]');
  const doc = svg.body.toString('utf8');
  assert.match(doc, /^<svg[^>]+width="\d+"/);
  assert.match(doc, /Admitted in the trailing window/);
  assert.match(doc, new RegExp(`worst case in theory = ${await text(page, 'bound')}`));

  const windowCsv = csvRows((await saved(page, '[data-testid=export-csv-plot-window]')).body.toString('utf8'));
  assert.deepEqual(windowCsv[0], ['time_s', 'admitted_in_window', 'limit', 'worst_case']);
  assert.equal(Math.max(...windowCsv.slice(1).map((r) => Number(r[1]))), worst, 'the busiest window of the CSV is the read-out');

  const bins = csvRows((await saved(page, '[data-testid=export-csv-plot-arrivals]')).body.toString('utf8')).slice(1);
  const admitted = bins.reduce((s, r) => s + Number(r[2]), 0);
  const offered = admitted + bins.reduce((s, r) => s + Number(r[3]), 0);
  assert.equal(`${(100 * admitted / offered).toFixed(1)}%`, await text(page, 'served-share'), 'the bins add up to the share served');

  // A section's plot, computed by the on-demand module.
  await page.locator('#ceiling').scrollIntoViewIfNeeded();
  await page.waitForSelector('#plot-ceiling[data-drawn=true]');
  const ceiling = csvRows((await saved(page, '[data-testid=export-csv-plot-ceiling]')).body.toString('utf8'));
  assert.deepEqual(ceiling[0], ['series', 'x', 'y']);
  // The flood's measured worst window is B + L − 1 at every capacity plotted (L = 60).
  const flood = ceiling.slice(1).filter((r) => r[0] === 'flood (measured)');
  // The capacities plotted: 1 to 2L = 120 in 24 steps of 5 (1, 6, ..., 116), and the
  // slider's own 10.
  const caps = [...Array.from({ length: 24 }, (_, i) => 1 + 5 * i), 10].sort((a, b) => a - b);
  assert.deepEqual(flood.map((r) => Number(r[1])), caps);
  for (const [, b, worstB] of flood) assert.equal(Number(worstB), Number(b) + 60 - 1, `B = ${b}`);
  assert.ok(ceiling.some((r) => r[0] === 'limit L = 60'), 'the reference line is in the data');
  const section = (await saved(page, '[data-testid=export-svg-plot-ceiling]')).body.toString('utf8');
  assert.match(section, /Worst window of a token bucket against its capacity/);
  // Section 1's small multiples: each saves the plot its table row describes.
  await page.locator('#fig-rules').scrollIntoViewIfNeeded();
  await page.waitForSelector('#fig-rules[data-drawn=true]');
  const rules = csvRows((await saved(page, '[data-testid=export-csv-rules-0]')).body.toString('utf8'));
  assert.deepEqual(rules[0], windowCsv[0]);
  const row = await page.locator('#rules-table tbody tr').nth(1).locator('th, td').allTextContents();
  assert.equal(await page.locator('#rules-multiples figcaption').first().textContent(), row[0]);
  assert.equal(String(Math.max(...rules.slice(1).map((r) => Number(r[1])))), row[2], 'the busiest window of the CSV is the table\'s');
  assert.deepEqual(problems, []);
});

test('the study tables save as CSV and Markdown, equal to the command line', async (t) => {
  const { page, problems } = await open(t);
  await page.locator('#study').scrollIntoViewIfNeeded();
  await page.check('#study-honest-only');
  await page.click('[data-testid=run-study]');
  await page.waitForSelector('[data-testid=study-done]', { state: 'attached', timeout: 120000 });
  const csv = (await saved(page, '[data-testid=export-csv-table-honest]')).body.toString('utf8');
  const md = (await saved(page, '[data-testid=export-md-table-honest]')).body.toString('utf8');
  const dir = mkdtempSync(join(tmpdir(), 'ratelab-study-'));
  execFileSync(cli(), ['study', '--runs', '5', '--minutes', '200', '--seed', '1', '--only', 'honest', '--out', dir], { stdio: 'ignore' });
  assert.equal(csv, readFileSync(join(dir, 'honest.csv'), 'utf8'), 'the same CSV as ratelab study --out');
  assert.ok(readFileSync(join(dir, 'tables.md'), 'utf8').includes(md.trim()), 'the same Markdown table');
  const plot = (await saved(page, '[data-testid=export-svg-study-plot-honest-page-loads]')).body.toString('utf8');
  assert.match(plot, /^<svg/);
  assert.deepEqual(problems, []);
});
