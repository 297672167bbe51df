// Sharing and embedding, end to end: a figure's link restores the same figure, a bad link is
// named and the rest kept, the embed page shows one figure alone, and the built site works
// from a sub-path of a static host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setup, open, text, act, origin } from './helpers.mjs';

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
  const url = page.url();
  assert.match(url, /algorithm=sliding-window-counter/);
  assert.match(url, /limit=40/);
  assert.match(url, /attack=boundary-burst/);
  assert.match(url, /compare=1/);
  const before = await figure(page);
  const rows = await page.locator('[data-testid=compare-table] tbody tr').allTextContents();
  // The copy-link button offers the same address.
  await page.click('[data-testid=copy-link]');
  assert.equal(await page.inputValue('[data-testid=share-text]'), url);

  const again = await open(t, { path: url.slice(origin.length) });
  assert.deepEqual(await figure(again.page), before, 'same read-outs, same command, same pixels');
  assert.equal(await again.page.locator('[data-testid=algorithm]').inputValue(), 'sliding-window-counter');
  assert.equal(await again.page.locator('[data-testid=boundary-burst]').getAttribute('aria-pressed'), 'true');
  assert.equal(await again.page.isChecked('[data-testid=record-rejects]'), true);
  assert.deepEqual(await again.page.locator('[data-testid=compare-table] tbody tr').allTextContents(), rows);
  assert.equal(await again.page.isVisible('[data-testid=url-error]'), false);
  // The capacity dial keeps a value above twice the limit rather than clamping it.
  const big = await open(t, { path: '/?capacity=500&limit=60' });
  assert.equal(await big.page.inputValue('[data-testid=capacity]'), '500');
  assert.equal(await text(big.page, 'bound'), String(500 + 60 - 1));
  assert.deepEqual([...problems, ...again.problems, ...big.problems], []);
});

test('a bad parameter in a link is named, what is accepted is said, and the rest is kept', async (t) => {
  const { page, problems } = await open(t, { path: '/?algorithm=gcra&limit=abc&load=NaN&window=-5&bogus=1&traffic=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E' });
  const box = page.locator('[data-testid=url-error]');
  assert.equal(await box.isVisible(), true);
  const items = await box.locator('li').allTextContents();
  assert.equal(items.length, 5, items.join('\n'));
  assert.match(items[0], /limit='abc'.*a whole number from 1 to 100000/);
  assert.match(items[1], /load='NaN'.*above 0 and at most 3/);
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
  const host = await open(t);
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
