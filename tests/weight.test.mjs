// The page's weight budgets, gzipped at level 9. The first screen, what the page loads before
// a reader scrolls, is at most 150 KB (153,600 bytes): the set of files is read from the built
// dist/ (index.html's links and scripts, then every static import of those scripts,
// recursively) and checked against what Chromium really fetched for the first screen, so
// that neither a new static import nor an early dynamic one escapes the count. The on-demand
// modules (the study's, the extra and tools modules, the workers, the panels) must not be
// among them. A reader who scrolls through the whole page, slowly enough for every lazy part
// to load and draw, fetches at most 300 KB (307,200 bytes) in all, counted from what Chromium
// fetched (tests/scroll.mjs, as tests/bench-page.mjs measures it), and nothing that only an
// action needs. Files are named by their path in dist/ (the page's modules are in js/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join, posix } from 'node:path';
import { setup, open, root, origin } from './helpers.mjs';
import { recordFetches, scrollThrough, transfer } from './scroll.mjs';

setup();

const BUDGET = 150 * 1024;
const SCROLL_BUDGET = 300 * 1024;
const dist = join(root, 'dist');
// Paths in dist/: the panels' modules are js/panels/*.js.
const onDemand = (f) => /^(ratelab-study|ratelab-extra|ratelab-tools|study-worker|import-worker|section-worker|js\/panels\/)/.test(f);
// What only an action loads: the study (its module, workers and panel), a file's import (its
// worker and panel), the gateways section (its panel) and the lab's gateways control (its
// panel), export and probe reports read in the
// browser (the tools module).
const onAction = (f) => /^(ratelab-study|ratelab-tools|study-worker|import-worker|js\/panels\/(study|import|gateways|lab-gateways|fit|compare|check)\.js|js\/panels\/(gateways|check)\.css)/.test(f);
const gz = (f) => gzipSync(readFileSync(join(dist, f)), { level: 9 }).length;

/** Local .js, .wasm and .css files a piece of HTML or JS names statically, as paths in dist/
 * (`from`: the naming file's own path there, which relative imports resolve against). */
function named(text, { js = false, from = 'index.html' } = {}) {
  const out = new Set();
  const local = (u) => {
    if (/^[a-z]+:/i.test(u)) return;
    const f = posix.normalize(posix.join(posix.dirname(from), u.split(/[?#]/)[0]));
    if (/\.(js|wasm|css)$/.test(f) && !f.startsWith('..') && existsSync(join(dist, f))) out.add(f);
  };
  if (!js) for (const m of text.matchAll(/<(?:link|script)\b[^>]*?\b(?:href|src)=["']?([^"'\s>]+)/g)) local(m[1]);
  // Static imports (`import x from '...'`, `import '...'`, `export ... from '...'`);
  // `import(...)` is on demand. In the HTML, also the wasm its inline loader starts.
  for (const m of text.matchAll(/(?:^|[;\s}])(?:import|export)\b[^'"();]*?from\s*["']([^"']+)["']|(?:^|[;\s])import\s*["']([^"']+)["']/g)) local(m[1] ?? m[2]);
  if (!js) for (const m of text.matchAll(/["']([^"'\s]+\.wasm)["']/g)) local(m[1]);
  return out;
}

/** index.html and everything it loads statically, with their gzipped sizes. */
function firstScreen() {
  const files = new Set(['index.html']);
  const todo = [...named(readFileSync(join(dist, 'index.html'), 'utf8'))];
  while (todo.length) {
    const f = todo.pop();
    if (files.has(f)) continue;
    files.add(f);
    if (f.endsWith('.js')) todo.push(...named(readFileSync(join(dist, f), 'utf8'), { js: true, from: f }));
  }
  return files;
}

const total = (files) => [...files].reduce((s, f) => s + gz(f), 0);
const show = (files) => [...files].sort().map((f) => `${f} ${(gz(f) / 1024).toFixed(1)} KB`).join(', ');

test('the first screen, read from dist/, is at most 150 KB gzipped and loads nothing on demand', () => {
  assert.ok(existsSync(join(dist, 'index.html')), 'build the page first (cargo xtask build)');
  const files = firstScreen();
  // The parse found the page's parts: its main module's JS and wasm, its CSS, app.js and the
  // modules app.js imports from js/.
  for (const kind of [/\.wasm$/, /^ratelab-web.*\.js$/, /\.css$/, /^app.*\.js$/, /^js\/lab\.js$/]) {
    assert.ok([...files].some((f) => kind.test(f)), `no ${kind} among ${[...files]}`);
  }
  assert.deepEqual([...files].filter(onDemand), [], 'on-demand modules in the first screen');
  const bytes = total(files);
  assert.ok(bytes <= BUDGET, `first screen ${(bytes / 1024).toFixed(1)} KB gzipped, over the ${BUDGET / 1024} KB budget: ${show(files)}`);
});

test('what Chromium fetches for the first screen is that set, within the same budget', async (t) => {
  const { page, problems } = await open(t);
  // A second after the first figure, as tests/bench-page.mjs measures it.
  await page.waitForTimeout(1000);
  // Each fetched file by its path under the page's own folder (the page is served at a sub-path).
  const fetched = await page.evaluate(() => {
    const base = new URL('./', location.href).href;
    return performance.getEntriesByType('resource').map((e) => e.name.split(/[?#]/)[0]).filter((u) => u.startsWith(base)).map((u) => u.slice(base.length));
  });
  const known = fetched.filter((f) => existsSync(join(dist, f)) && /\.(js|wasm|css|html)$/.test(f));
  const files = new Set([...firstScreen(), ...known]);
  const early = known.filter((f) => !firstScreen().has(f));
  t.diagnostic(`fetched: ${show(new Set(['index.html', ...known]))}; beyond the static set: ${early.join(', ') || 'none'}`);
  const bytes = total(files);
  t.diagnostic(`first screen: ${(bytes / 1024).toFixed(1)} KB gzipped (${bytes} of ${BUDGET} bytes)`);
  assert.ok(bytes <= BUDGET, `first screen ${(bytes / 1024).toFixed(1)} KB gzipped, over the ${BUDGET / 1024} KB budget: ${show(files)}`);
  assert.deepEqual(problems, []);
});

test('a reader who scrolls through the whole page fetches at most 300 KB gzipped, and no tools', async (t) => {
  let fetched = [];
  const { page, problems } = await open(t, { before: (p) => { fetched = recordFetches(p, `${origin}/`); } });
  await scrollThrough(page, fetched);
  const all = transfer(dist, fetched);
  t.diagnostic(`fetched in a scroll through the page: ${all.show()}: ${(all.bytes / 1024).toFixed(1)} KB gzipped (${all.bytes} of ${SCROLL_BUDGET} bytes)`);
  // The lazy parts were loaded, and nothing an action alone needs.
  for (const part of ['ratelab-extra_bg.wasm', 'section-worker.js', 'js/sections.js', 'js/playhead.js', 'js/panels/real.js', 'js/panels/quiz.js']) {
    assert.ok(all.files.includes(part), `${part} was not fetched: ${all.files}`);
  }
  assert.deepEqual(all.files.filter(onAction), [], 'what only an action needs, fetched by scrolling');
  assert.ok(all.bytes <= SCROLL_BUDGET, `a scroll through the page fetched ${(all.bytes / 1024).toFixed(1)} KB gzipped, over the ${SCROLL_BUDGET / 1024} KB budget: ${all.show()}`);
  assert.deepEqual(problems, []);
});
