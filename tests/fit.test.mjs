// "Explain my 429s", end to end: an access log dropped on the import panel is fitted in the
// import worker to every limiter ratelab models, as `ratelab fit` fits it, shown with its
// timeline, and the lab opens on the best fit; a fit the lab cannot run says why, and a bad
// list of statuses is refused with what is accepted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setup, open, text, cli, root } from './helpers.mjs';

setup();

/** Reads the example log `name` (docs/examples/fit/) in the import panel; unless `readable`
 * is false, its times must import as traffic too. */
async function importLog(page, name, readable = true) {
  const buffer = readFileSync(join(root, 'docs/examples/fit', name));
  await page.setInputFiles('[data-testid=import-file]', { name, mimeType: 'text/plain', buffer });
  await page.waitForFunction(() => /^Read .* in [\d.]+ s\.$/.test(document.getElementById('import-status').textContent)
    || !document.getElementById('import-error').hidden, null, { timeout: 60000 });
  assert.equal(await page.isVisible('[data-testid=import-error]'), !readable, await text(page, 'import-error'));
}

/** Clicks "Explain my 429s" and waits for the fit, or for the message saying why there is none. */
async function explain(page) {
  await page.evaluate(() => { document.getElementById('import-fit').hidden = true; });
  await page.click('[data-testid=import-explain]');
  await page.waitForFunction(() => !document.getElementById('import-fit').hidden
    || !document.getElementById('import-error').hidden, null, { timeout: 120000 });
}

const fitLines = (page) => page.evaluate(() => [...document.querySelectorAll('[data-testid=import-fits] li')].map((li) => li.textContent));

test('a recorded nginx log is fitted as ratelab fit fits it, and the lab opens on the fit', async (t) => {
  const { page, problems } = await open(t);
  await importLog(page, 'nginx-msec.log');
  await explain(page);
  assert.equal(await page.isVisible('[data-testid=import-error]'), false, await text(page, 'import-error'));
  const cliFit = JSON.parse(execFileSync(cli(), ['fit', join(root, 'docs/examples/fit/nginx-msec.log'), '--format', 'json'], { encoding: 'utf8' }));
  const best = cliFit.fits[0];
  assert.equal(best.limiter, 'nginx:rate=10r/s,burst=5,nodelay');
  const lines = await fitLines(page);
  assert.equal(lines.length, Math.min(3, cliFit.fits.length));
  lines.forEach((line, i) => assert.ok(line.startsWith(`${cliFit.fits[i].limiter}: `), `${line} is fit ${i}: ${cliFit.fits[i].limiter}`));
  const n = cliFit.requests;
  assert.match(lines[0], new RegExp(`decides ${n - best.wrong_count} of ${n} requests as the log says`));
  assert.equal(await text(page, 'import-fit-verdict'), cliFit.verdict);
  // The timeline: a red mark in each slice holding a request the fit decides otherwise, at
  // least one and at most one a request; its text alternative says how many.
  const marks = await page.locator('[data-testid=import-fit-timeline] rect.fit-wrong').count();
  assert.ok(marks >= 1 && marks <= best.wrong_count, `${marks} marks for ${best.wrong_count} disagreements`);
  const label = await page.getAttribute('[data-testid=import-fit-timeline]', 'aria-label');
  assert.match(label, new RegExp(`they disagree on ${best.wrong_count} \\(${marks} slices hold a disagreement\\)`));
  assert.equal(await page.locator('[data-testid=import-fit-wrong] li').count(), Math.min(5, best.wrong_count));
  // The lab opens on nginx, rate=10r/s burst=5 nodelay, with the log as its traffic.
  assert.equal(await page.isDisabled('[data-testid=import-fit-lab]'), false);
  await page.click('[data-testid=import-fit-lab]');
  await page.waitForFunction(() => document.querySelector('[data-testid=algorithm]').value === 'nginx'
    && document.getElementById('traffic').value === 'file');
  assert.equal(await page.inputValue('#nginx-rate'), '10');
  assert.equal(await page.inputValue('#nginx-burst'), '5');
  assert.equal(await page.isChecked('#nginx-nodelay'), true);
  assert.deepEqual(problems, []);
});

test('a log whose times the traffic import cannot read is still explained; a fit the lab cannot run says why; a bad list of statuses is refused', async (t) => {
  const { page, problems } = await open(t);
  // HAProxy's HTTP log is not a traffic file the import reads, but fit reads it.
  await importLog(page, 'haproxy.log', false);
  await explain(page);
  assert.equal(await page.isVisible('[data-testid=import-error]'), false, await text(page, 'import-error'));
  const lines = await fitLines(page);
  assert.ok(lines[0].startsWith('haproxy:period=10s,limit=10: decides every request as the log says'), lines[0]);
  assert.equal(await page.isDisabled('[data-testid=import-fit-lab]'), true);
  assert.match(await text(page, 'import-fit-lab-note'), /^The lab does not run haproxy:period=10s,limit=10: /);
  await page.fill('[data-testid=import-statuses]', '429,abc');
  await explain(page);
  assert.equal(await text(page, 'import-error'), 'The rejected statuses “429,abc” are not understood: give HTTP statuses from 100 to 599, separated by commas, such as 429 or 429,503.');
  assert.equal(await page.inputValue('[data-testid=import-statuses]'), '429,abc', 'what the reader typed is kept');
  assert.deepEqual(problems, []);
});

test('the explanation has no axe-core violation, light or dark, and is drawn in each', async (t) => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, problems } = await open(t, { colorScheme, bypassCSP: true });
    await importLog(page, 'nginx-queue.log');
    await explain(page);
    assert.ok((await fitLines(page))[0].startsWith('nginx:rate=4r/s,burst='), (await fitLines(page))[0]);
    await page.addScriptTag({ content: readFileSync(join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8') });
    const results = await page.evaluate(() => window.axe.run(document.getElementById('your-traffic'), { resultTypes: ['violations'] }));
    assert.deepEqual(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(' ')}`), [], colorScheme);
    // The fit's bars are drawn in the theme's colours (not the default black).
    const fill = await page.evaluate(() => getComputedStyle(document.querySelector('#import-fit-timeline rect.fit-log')).fill);
    assert.notEqual(fill, 'rgb(0, 0, 0)', colorScheme);
    await page.locator('#import-fit-box').screenshot({ path: join(root, 'tests', 'artifacts', `fit-${colorScheme}.png`) });
    assert.deepEqual(problems, []);
  }
});
