// The strict page, end to end: the Content-Security-Policy admits only the page's own origin,
// wasm, and Trunk's loader by its hash; injected script never runs; and a panic inside the wasm
// shows a banner with what happened and a reset, instead of a page that silently stops.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { setup, open, text, act, root } from './helpers.mjs';
import { serve } from './serve.mjs';

setup();

test("the CSP's script hash is that of the built loader, and the CSP allows nothing else", () => {
  const html = readFileSync(join(root, 'dist', 'index.html'), 'utf8');
  const meta = [...html.matchAll(/<meta[^>]*>/g)].map((m) => m[0]).find((m) => /http-equiv="?Content-Security-Policy/.test(m));
  const csp = meta && /content="([^"]+)"/.exec(meta)[1];
  assert.ok(csp, 'the built page carries a CSP');
  const inline = [...html.matchAll(/<script type=module>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
  assert.equal(inline.length, 1, 'one inline script: the loader');
  const hash = `sha256-${createHash('sha256').update(inline[0]).digest('base64')}`;
  assert.ok(csp.includes(`'${hash}'`), `update the CSP in index.html to allow '${hash}'`);
  assert.doesNotMatch(csp, /unsafe-inline|'unsafe-eval'|\*|https?:/, 'no wildcard, no other host, no inline code');
  // The only inline styles: the one plotters sets on the span it measures text with, at the
  // charts' two font sizes.
  const styles = [...csp.matchAll(/'(sha256-[^']+)'/g)].map((m) => m[1]).filter((h) => h !== hash);
  const measuring = ['12', '14'].map((px) => `sha256-${createHash('sha256').update(`display: inline-block; font-family:sans-serif; font-style:normal; font-size: ${px}px; position: fixed; top: 100%`).digest('base64')}`);
  assert.deepEqual(styles.sort(), measuring.sort());
  assert.doesNotMatch(html, /\son[a-z]+=/i, 'no inline event handlers');
});

test('script injected into the page never runs', async (t) => {
  const { page, problems } = await open(t);
  const violations = await page.evaluate(async () => {
    const seen = [];
    document.addEventListener('securitypolicyviolation', (e) => seen.push(e.violatedDirective));
    document.body.insertAdjacentHTML('beforeend', '<img src="x:" onerror="window.pwned = 1">');
    const s = document.createElement('script');
    s.textContent = 'window.pwned = 2';
    document.body.append(s);
    await new Promise((r) => setTimeout(r, 300));
    return { seen, pwned: window.pwned };
  });
  assert.equal(violations.pwned, undefined, 'neither the handler nor the script ran');
  assert.ok(violations.seen.length >= 2, `violations reported: ${violations.seen}`);
  // The only console errors are those two refusals, and the lab still runs.
  assert.ok(problems.every((p) => /Content Security Policy/.test(p)), problems.join('\n'));
  problems.length = 0;
  await act(page, () => page.click('[data-testid=flood]'));
  assert.notEqual(await text(page, 'worst-window'), '–');
  assert.deepEqual(problems, []);
});

const faultDist = join(root, 'target', 'dist-fault');
test('a panic inside the wasm shows a banner saying what happened, and reset brings the figure back', async () => {
  assert.ok(existsSync(faultDist), `no fault build in ${faultDist}: cargo xtask test makes one`);
  const server = await serve(faultDist);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  try {
    const page = await browser.newPage();
    const url = `http://127.0.0.1:${server.address().port}/?algorithm=gcra&limit=40`;
    await page.goto(url);
    await page.waitForSelector('#lab[data-ready=true]');
    assert.equal(await page.locator('[data-testid=panic-banner]').count(), 0);
    await page.evaluate(() => { try { window.wasmBindings.injectFault('boom'); } catch { /* the trap that follows the hook */ } });
    const banner = page.locator('[data-testid=panic-banner]');
    await banner.waitFor();
    assert.match(await banner.textContent(), /deliberate fault for the test: boom/);
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'panic-reset', 'the reset has focus');
    // The figure stops instead of running on a broken module.
    const runs = await page.locator('#lab').getAttribute('data-runs');
    await page.click('[data-testid=flood]');
    await page.waitForTimeout(300);
    assert.equal(await page.locator('#lab').getAttribute('data-runs'), runs);
    // Reset reloads the same link: the reader's settings are kept and the figure runs again.
    await Promise.all([page.waitForNavigation(), page.click('[data-testid=panic-reset]')]);
    await page.waitForSelector('#lab[data-ready=true]');
    assert.equal(await page.locator('[data-testid=panic-banner]').count(), 0);
    assert.equal(await page.inputValue('[data-testid=algorithm]'), 'gcra');
    assert.equal(await page.inputValue('[data-testid=limit]'), '40');
  } finally {
    await browser.close();
    server.close();
  }
});

test('the published page has no fault hook', async (t) => {
  const { page } = await open(t);
  assert.equal(await page.evaluate(() => typeof window.wasmBindings.injectFault), 'undefined');
});
