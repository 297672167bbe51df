// Readable everywhere (issue 16): at a 360 px phone, a 390 px phone at devicePixelRatio 3, a
// 1280 px laptop at 2 and a 1920 px screen, the page never scrolls sideways, every chart is
// drawn crisp for its screen at its box's width with text no smaller than 11 CSS px, and
// follows its box when the window changes; axe-core finds nothing in light or dark, on the
// desktop or the phone; every chart has a caption and its numbers a keyboard away; a failed
// action leaves no stale result on show.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setup, open, root, artifacts, act, text } from './helpers.mjs';

setup();

/** Scrolls through the whole page, so that every part that loads when seen has loaded. */
async function scrollThrough(page) {
  for (const id of ['mechanism', 'rules', 'boundary', 'ceiling', 'strict', 'counter', 'lockout', 'split', 'herding', 'real', 'recall']) {
    await page.locator(`#${id}`).scrollIntoViewIfNeeded();
    await page.waitForTimeout(250);
  }
  await page.waitForSelector('#boundary-table tbody tr', { timeout: 20000 });
  await page.waitForFunction(() => ['fig-rules', 'plot-ceiling', 'plot-honest', 'plot-swc', 'plot-lockout', 'plot-split', 'plot-herding'].every((id) => document.getElementById(id).dataset.drawn === 'true')
    && document.getElementById('fig-real').dataset.ready === 'true', null, { timeout: 30000 });
  // The gateways section's figure is computed when asked for.
  await page.locator('#gateways-run').click();
  await page.waitForSelector('#gateways[data-ready=true]', { timeout: 30000 });
}

/** Every shown canvas: its CSS box, its backing store, the chart size it is laid out at. */
const canvases = (page) => page.evaluate(() => [...document.querySelectorAll('canvas')].filter((c) => c.getClientRects().length).map((c) => {
  const r = c.getBoundingClientRect();
  const s = getComputedStyle(c.parentElement);
  const box = c.parentElement.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  return { id: c.id, css: r.width, box, backing: c.width, chart: Number(c.dataset.w), dpr: devicePixelRatio };
}));

const screens = [
  { viewport: { width: 360, height: 740 }, scale: 1 },
  { viewport: { width: 390, height: 844 }, scale: 3 },
  { viewport: { width: 1280, height: 800 }, scale: 2 },
  { viewport: { width: 1920, height: 1080 }, scale: 1 },
];

for (const { viewport, scale } of screens) {
  test(`${viewport.width}×${viewport.height} at ${scale}x: no sideways scroll, crisp charts at their box's width, chart text ≥ 11 px`, async (t) => {
    const { page, problems } = await open(t, { viewport, scale, path: '/?compare=1' });
    await scrollThrough(page);
    const where = `${viewport.width} px at ${scale}x`;
    const width = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
    assert.ok(width[0] <= width[1], `${where}: the page is ${width[0]} px wide in a ${width[1]} px window`);
    const all = await canvases(page);
    assert.ok(all.length >= 20, `${where}: ${all.length} charts shown`);
    for (const c of all) {
      assert.ok(c.backing >= Math.floor(c.dpr * c.css), `${where}: #${c.id} has ${c.backing} pixels across for ${c.css} CSS px at ${c.dpr}x`);
      assert.ok(c.css <= c.box + 0.5, `${where}: #${c.id} (${c.css} px) fits its box (${c.box} px)`);
      assert.ok(c.css >= Math.min(c.box, 880) - 1.5, `${where}: #${c.id} (${c.css} px) fills its box (${c.box} px)`);
      // Chart text is 12 px or more in chart pixels; shown at css/chart CSS px per chart px.
      assert.ok((12 * c.css) / c.chart >= 11, `${where}: #${c.id}'s text is ${((12 * c.css) / c.chart).toFixed(1)} CSS px`);
    }
    await page.screenshot({ path: join(artifacts, `readable-${viewport.width}.png`) });
    assert.deepEqual(problems, []);
  });
}

test('charts follow their box: a window narrowed to a phone and back redraws every chart at its new width', async (t) => {
  const { page, problems } = await open(t, { viewport: { width: 1280, height: 800 } });
  await page.locator('#ceiling').scrollIntoViewIfNeeded();
  await page.waitForSelector('#plot-ceiling[data-drawn=true]', { timeout: 20000 });
  const wide = Object.fromEntries((await canvases(page)).map((c) => [c.id, c.chart]));
  const runs = Number(await page.getAttribute('#lab', 'data-runs'));
  await page.setViewportSize({ width: 390, height: 800 });
  await page.waitForFunction((n) => Number(document.getElementById('lab').dataset.runs) > n, runs);
  await page.waitForTimeout(300);
  for (const id of ['plot-window', 'plot-arrivals', 'plot-share', 'plot-mechanism', 'plot-ceiling']) assert.ok(wide[id] > 600, `#${id} was ${wide[id]} wide`);
  for (const c of await canvases(page)) {
    if (!(c.id in wide)) continue; // drawn first on the phone
    assert.ok(c.chart <= 390 && c.chart < wide[c.id], `#${c.id} is laid out ${c.chart} wide on the phone (was ${wide[c.id]})`);
    assert.ok(c.backing >= c.css, `#${c.id} backing store follows`);
  }
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth));
  assert.deepEqual(problems, []);
});

test('axe-core finds no violation in light or dark, on the desktop or the phone', async (t) => {
  for (const [viewport, colorScheme] of [[{ width: 390, height: 844 }, 'dark'], [{ width: 390, height: 844 }, 'light'], [{ width: 1280, height: 900 }, 'dark'], [{ width: 1280, height: 900 }, 'light']]) {
    const { page } = await open(t, { viewport, colorScheme, bypassCSP: true, path: '/?compare=1' });
    await scrollThrough(page);
    await page.addScriptTag({ content: readFileSync(join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8') });
    const results = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    // Any impact: minor and moderate ones too.
    assert.deepEqual(results.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`), [], `${colorScheme} ${viewport.width}px`);
    await page.screenshot({ path: join(artifacts, `page-${colorScheme}-${viewport.width}.png`) });
  }
});

test('every chart has a caption saying what it shows, and its numbers a keypress away', async (t) => {
  const { page, problems } = await open(t, { path: '/?compare=1' });
  await scrollThrough(page);
  const charts = await page.evaluate(() => [...document.querySelectorAll('canvas')].filter((c) => c.getClientRects().length).map((c) => {
    const caption = document.getElementById(c.getAttribute('aria-describedby') ?? '');
    const csv = document.querySelector(`[data-testid=export-csv-${c.id}]`);
    return { id: c.id, name: c.getAttribute('aria-label') ?? '', caption: caption?.getClientRects().length ? caption.textContent.trim() : '', csv: csv ? csv.tabIndex >= 0 && !csv.disabled && csv.getClientRects().length > 0 : false };
  }));
  for (const c of charts) {
    assert.ok(c.name.length > 10, `#${c.id} is named: "${c.name}"`);
    assert.ok(c.caption.length > 3, `#${c.id} has a visible caption`);
    // The mechanism view's text alternative is its sentence on each decision (its caption).
    if (c.id !== 'plot-mechanism') assert.ok(c.csv, `#${c.id} has a reachable CSV button`);
  }
  // The CSV button is reached by keyboard: Tab from the chart's caption region lands on the
  // export group of the main chart in a few presses.
  await page.focus('[data-testid=export-svg-plot-window]');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'export-csv-plot-window');
  assert.deepEqual(problems, []);
});

test('a failed run leaves no stale result: a bad limit blanks the read-outs and the charts', async (t) => {
  const { page } = await open(t, { path: '/?compare=1' });
  await page.waitForSelector('#compare-table tbody tr');
  assert.notEqual(await text(page, 'worst-window'), '–');
  await page.fill('[data-testid=limit]', '0');
  await page.waitForFunction(() => !document.getElementById('error').hidden);
  for (const id of ['worst-window', 'bound', 'served-share', 'wrong-admits', 'wrong-rejects']) assert.equal(await text(page, id), '–', `${id} is blank`);
  assert.equal(await page.getAttribute('#invariant', 'data-state'), 'none');
  assert.doesNotMatch(await page.textContent('#invariant-text'), /Rule (kept|broken)/);
  assert.equal(await page.locator('#compare-table tbody tr').count(), 0, 'no stale comparison');
  const blank = await page.evaluate(() => {
    const c = document.getElementById('plot-window');
    return c.getContext('2d').getImageData(0, 0, c.width, c.height).data.every((v, i) => i % 4 !== 3 || v === 0);
  });
  assert.equal(blank, true, 'the chart is cleared');
  await act(page, () => page.fill('[data-testid=limit]', '60'));
  assert.notEqual(await text(page, 'worst-window'), '–');
  assert.equal(await page.getAttribute('#invariant', 'data-state') === 'none', false);
});

test('on a phone, a table wider than the screen fades at the edge it goes on past, until scrolled to its end', async (t) => {
  const { page, problems } = await open(t, { viewport: { width: 390, height: 844 } });
  await scrollThrough(page);
  const regions = () => page.evaluate(() => [...document.querySelectorAll('.scroll')].filter((e) => e.getClientRects().length && e.querySelector('tbody tr')).map((e) => ({
    id: e.querySelector('table').id, wide: e.scrollWidth > e.clientWidth + 1, faded: getComputedStyle(e).maskImage !== 'none',
  })));
  const before = await regions();
  const wide = before.filter((r) => r.wide);
  assert.ok(wide.length >= 3, `tables wider than a phone: ${JSON.stringify(before)}`);
  for (const r of before) assert.equal(r.faded, r.wide, `${r.id}: faded exactly when it goes on past the edge`);
  // Scrolled to its end, a table shows it has no more.
  await page.evaluate(() => { for (const e of document.querySelectorAll('.scroll')) e.scrollLeft = e.scrollWidth; });
  // The mask follows the scroll on a coming frame: waited for, then checked table by table.
  await page.waitForFunction(() => [...document.querySelectorAll('.scroll')].every((e) => getComputedStyle(e).maskImage === 'none'), null, { timeout: 5000 }).catch(() => {});
  for (const r of await regions()) assert.equal(r.faded, false, `${r.id}: at its end`);
  assert.deepEqual(problems, []);
});
