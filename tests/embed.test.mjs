// The embed in a blog: the snippet from "Copy embed code", in a host page on another origin at
// the column widths of a phone, a narrow and a wide blog. Without the host's sizing lines, the
// snippet's own height shows the controls a reader needs and the figure; with the docs'
// three lines, the frame takes the height the embedded page posts, and follows it.
import { test, before, after } from 'node:test';
import { createServer } from 'node:http';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setup, open, browser, origin, root } from './helpers.mjs';

setup();

// The blog: another origin (another port), serving the post it is given. A real server, since
// Chromium will not frame the page's loopback origin from a page that was never fetched.
let blog;
let HOST;
let post = '';
before(async () => {
  blog = createServer((req, res) => { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }); res.end(post); });
  await new Promise((resolve) => blog.listen(0, '127.0.0.1', resolve));
  HOST = `http://127.0.0.1:${blog.address().port}`;
});
after(() => blog?.close());
/** The docs' sizing lines (the page chapter), exactly as a blog would paste them. */
const sizing = () => {
  const readme = readFileSync(join(root, 'docs', 'src', 'page.md'), 'utf8');
  const block = readme.split('<!-- embed-sizing -->')[1]?.match(/```html\n([\s\S]*?)```/)?.[1];
  assert.ok(block, 'docs/src/page.md has the sizing lines after <!-- embed-sizing -->');
  return block;
};

/** The snippet the page offers for `path`'s figure. */
async function snippet(t, path) {
  const { page } = await open(t, { path });
  await page.click('[data-testid=copy-embed]');
  return page.inputValue('[data-testid=share-text]');
}

/** A blog post `width` px wide holding `frame`, with the sizing lines if `sized`. */
async function host(t, frame, width, sized) {
  const context = await browser.newContext({ viewport: { width: Math.max(width, 360), height: 900 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const foreign = [];
  post = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A post</title><style>body{margin:0} main{width:${width}px}</style></head><body><main><p>Prose before the figure.</p>${frame}<p>Prose after.</p></main>${sized ? sizing() : ''}</body></html>`;
  page.on('request', (r) => { if (!r.url().startsWith(origin) && !r.url().startsWith(HOST)) foreign.push(r.url()); });
  await page.goto(`${HOST}/post`);
  const el = page.locator('iframe');
  await el.scrollIntoViewIfNeeded();
  const inner = await el.elementHandle().then((h) => h.contentFrame());
  await inner.waitForSelector('#lab[data-ready=true]', { timeout: 20000 });
  t.after(() => assert.deepEqual(foreign, [], 'the embed asks no other host for anything'));
  return { page, inner };
}

/** Bottoms of what the reader needs, in the frame's own coordinates, and the frame's width. */
const needed = (inner, own) => inner.evaluate((extra) => {
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const ids = ['algorithm', 'honest', 'boundary-burst', 'flood', 'retry-storm', 'invariant', 'plot-window', 'worst-window', 'open-full', ...extra];
  return {
    bottoms: Object.fromEntries(ids.map((id) => { const el = document.getElementById(id); return [id, visible(el) ? el.getBoundingClientRect().bottom : null]; })),
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth,
    innerHeight,
  };
}, own);

for (const width of [360, 700, 900]) {
  test(`in a ${width} px blog column, the snippet's height shows the controls, the badge and the figure`, async (t) => {
    // Each limiter's own control: the token bucket's capacity dial, the sliding log's recording.
    for (const [path, own] of [['/?algorithm=token-bucket&attack=boundary-burst', ['capacity']], ['/?algorithm=sliding-log&attack=retry-storm&record-rejects=1&compare=1', ['record-rejects']]]) {
      const frame = await snippet(t, path);
      assert.match(frame, /^<iframe src="[^"]*embed=1[^"]*"[^>]* height="760"/);
      const { inner } = await host(t, frame, width, false);
      const m = await needed(inner, own);
      assert.equal(m.innerWidth, width, 'the frame is as wide as the column');
      assert.ok(m.scrollWidth <= m.innerWidth, `${path}: nothing scrolls sideways (${m.scrollWidth} > ${m.innerWidth})`);
      for (const [id, bottom] of Object.entries(m.bottoms)) {
        assert.notEqual(bottom, null, `${path}: #${id} is shown`);
        assert.ok(bottom <= m.innerHeight, `${path}: #${id} ends at ${Math.round(bottom)} px, inside the ${m.innerHeight} px frame`);
      }
      // What an embed does not show, it does not compute: no section, no mechanism view.
      const loaded = await inner.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name));
      assert.ok(!loaded.some((u) => /ratelab-extra|section-worker/.test(u)), `the embed loads only the figure: ${loaded.join(', ')}`);
    }
  });
}

test('with the docs\' three lines, the host sizes the frame to the height the embed posts, and follows it', async (t) => {
  const frame = await snippet(t, '/?algorithm=fixed-window&attack=boundary-burst');
  for (const width of [360, 900]) {
    const { page, inner } = await host(t, frame, width, true);
    const fits = async () => {
      const want = await inner.evaluate(() => Math.ceil(document.getElementById('lab').getBoundingClientRect().bottom + scrollY));
      await page.waitForFunction((h) => document.querySelector('iframe').getBoundingClientRect().height === h, want, { timeout: 5000 });
      return want;
    };
    const before = await fits();
    assert.ok(before < 1500, `${width} px: the figure alone is ${before} px tall`);
    // The frame is its content's height: nothing inside it scrolls.
    assert.equal(await inner.evaluate(() => document.documentElement.scrollHeight <= innerHeight), true);
    // Turning on "Compare all algorithms" makes the figure taller; the frame follows.
    await inner.click('[data-testid=compare]');
    await inner.waitForSelector('#compare-table tbody tr');
    const after = await fits();
    assert.ok(after > before, `${width} px: ${after} px with the comparison, ${before} without`);
  }
});
