// Shared set-up of the end-to-end tests: the built page (dist/) served on loopback, Debian's
// Chromium through playwright-core, and a page opener that fails a test on console errors or
// on any request to another origin.
import { before, after } from 'node:test';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const artifacts = join(root, 'tests', 'artifacts');
mkdirSync(artifacts, { recursive: true });

/** The `ratelab` binary to compare the page with: exactly the one `cargo xtask test` just built,
 * passed in RATELAB_CLI. A test that needs it fails without it (never skips, never falls back
 * to an older build). By hand: `cargo build --profile ci -p ratelab-cli` and
 * `RATELAB_CLI=target/ci/ratelab node --test tests/`. */
export function cli() {
  const path = process.env.RATELAB_CLI;
  if (!path) throw new Error('RATELAB_CLI is not set: run these through `cargo xtask test`, or set it to the ratelab binary built from this tree');
  if (!existsSync(path)) throw new Error(`RATELAB_CLI is ${path}, which does not exist`);
  return path;
}

let server;
export let browser;
export let origin;

/** Registers the file's before and after hooks: one server and one browser per test file. */
export function setup() {
before(async () => {
  server = await serve(join(root, 'dist'), 0, '127.0.0.1', '/some/sub/path/');
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      // window.gc, so a test can collect its own garbage before it times the page's work.
      '--js-flags=--expose-gc'],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
});
}

/** A fresh page on the lab, with console errors and foreign requests collected; `before(page)`
 * runs before the page is loaded (to watch its requests from the first). */
export async function open(t, { viewport = { width: 1280, height: 900 }, colorScheme = 'light', path = '/', bypassCSP = false, workers = null, before = null, scale = 1 } = {}) {
  // `bypassCSP` only for tests that inject a tool's script (axe-core) into the page; `scale`:
  // the screen's devicePixelRatio.
  const context = await browser.newContext({ viewport, colorScheme, bypassCSP, deviceScaleFactor: scale });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith('data:')) return route.continue();
    problems.push(`request to another origin: ${url}`);
    return route.abort();
  });
  // `workers`: how many cores the page believes it has (the study starts one worker per core).
  if (workers) await page.addInitScript((n) => Object.defineProperty(navigator, 'hardwareConcurrency', { get: () => n }), workers);
  await before?.(page);
  await page.goto(origin + path);
  await page.waitForSelector('#lab[data-ready=true]', { timeout: 20000 });
  t.after(() => context.close());
  return { page, problems };
}

export const text = (page, id) => page.locator(`[data-testid=${id}]`).textContent();
export const runs = (page) => page.locator('#lab').getAttribute('data-runs').then(Number);

/** Does something to the main figure and waits until the figure has been drawn again. */
export async function act(page, action) {
  const before = await runs(page);
  await action();
  // A new figure, drawn for the latest change: a field filled after a blur's `change` ran
  // the figure once with the new field still empty, and that run alone is not the answer.
  await page.waitForFunction((n) => {
    const lab = document.getElementById('lab');
    return Number(lab.dataset.runs) > n && lab.dataset.settled === 'true';
  }, before, { timeout: 10000 });
}

