// End-to-end tests of the built page's sections, its study and its quiz (dist/), in Debian's
// Chromium, driven by playwright-core: the second half of e2e.test.mjs, in a file of its own so
// that the two halves run side by side. By hand, `RATELAB_CLI=target/ci/ratelab node --test tests/`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setup, open, text, runs, act, root, artifacts, cli } from './helpers.mjs';

setup();

test('every section draws its figure; a screenshot of each is kept', async (t) => {
  const { page, problems } = await open(t);
  // The sections with a figure, each of which must draw it; the last two have none.
  const figured = ['rules', 'boundary', 'ceiling', 'strict', 'counter', 'lockout', 'split', 'herding'];
  for (const id of [...figured, 'takeaways', 'recall']) {
    await page.locator(`#${id}`).scrollIntoViewIfNeeded();
    if (figured.includes(id)) {
      assert.ok(await page.locator(`#${id} .figure`).count() > 0, `section ${id} has its figure`);
      await page.waitForFunction((sid) => document.querySelector(`#${sid} [data-drawn=true]`) || document.querySelector(`#${sid} [data-error]`), id, { timeout: 15000 });
      assert.equal(await page.locator(`#${id} [data-error]`).count(), 0, `section ${id} failed`);
      assert.ok(await page.locator(`#${id} [data-drawn=true]`).count() > 0, `section ${id} drew its figure`);
    }
    await page.locator(`#${id}`).screenshot({ path: join(artifacts, `section-${id}.png`) });
  }
  const boundary = await page.locator('[data-testid=boundary-table] tbody tr').allTextContents();
  assert.ok(boundary.some((row) => row.includes('120') && row.includes('60')), boundary.join(' | '));
  assert.deepEqual(problems, []);
});

test('the herding figure shows the jitter chosen against none, each limiter in its table', async (t) => {
  const { page, problems } = await open(t);
  await page.locator('#herding').scrollIntoViewIfNeeded();
  await page.waitForSelector('#plot-herding[data-drawn=true]', { timeout: 20000 });
  const rows = async () => page.locator('#herding-table tbody tr').allTextContents();
  const jitters = (r) => [...new Set(r.slice(1).map((row) => row.match(/(none|full|equal|decorrelated)/)?.[1]))];
  assert.deepEqual(jitters(await rows()), ['none', 'full']);
  assert.equal((await rows()).length, 11, 'a header and five limiters, without jitter and with it');
  // The mix: ninety without jitter and ten with the dial's, each with its tries, given up and
  // locked out, more tries a request for the ten (the native test holds the margins).
  await page.locator('#herding-mix-table').scrollIntoViewIfNeeded();
  await page.waitForSelector('#herding-mix-table[data-drawn=true]', { timeout: 20000 });
  const mix = async () => page.locator('#herding-mix-table tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  const [head, herd, few] = await mix();
  assert.deepEqual([head[0], head[1], head.at(-1)], ['clients', 'jitter', 'locked out']);
  assert.deepEqual([herd.slice(0, 2), few.slice(0, 2)], [['90', 'none'], ['10', 'full']]);
  assert.ok(Number(few[2]) > 2 * Number(herd[2]) && parseFloat(few[6]) > 50, `${few} against ${herd}`);
  await page.selectOption('#herding-jitter', 'equal');
  await page.waitForFunction(() => document.getElementById('herding-table').textContent.includes('equal'), null, { timeout: 20000 });
  assert.deepEqual(jitters(await rows()), ['none', 'equal']);
  await page.waitForFunction(() => document.getElementById('herding-mix-table').rows[2]?.cells[1].textContent === 'equal', null, { timeout: 20000 });
  assert.equal(await page.locator('#plot-herding[data-error]').count(), 0);
  assert.deepEqual(problems, []);
});

test('the gateways section runs when asked, follows its dials, and equals the command line', async (t) => {
  const { page, problems } = await open(t);
  await page.locator('#gateways').scrollIntoViewIfNeeded();
  await page.waitForTimeout(500);
  // Computed only when the reader asks: the tools module is not loaded by a scroll.
  assert.equal(await page.locator('#gateways-figure').isHidden(), true);
  await page.click('[data-testid=gateways-run]');
  await page.waitForSelector('#gateways[data-ready=true]', { timeout: 20000 });
  const row = async (i) => (await page.locator('#gateways-table tbody tr').nth(i).locator('td, th').allTextContents()).map((c) => c.trim());
  const status = () => page.locator('#gateways-status').textContent();
  // A row of the table against `ratelab simulate` with the same fleet, seed and size.
  const fleet = (n, coord) => {
    const args = ['simulate', '--limiter', 'sliding-log', '--traffic', 'steady:load=1.5', '--limit', '100', '--window', '1min', '--minutes', '10', '--runs', '3', '--seed', '1',
      '--gateways', String(n), '--route', 'random', '--coord', coord, '--format', 'json'];
    return JSON.parse(execFileSync(cli(), args, { encoding: 'utf8' })).results[0];
  };
  const rowIs = async (i, name, r) => {
    const [shown, busiest, , room, served] = await row(i);
    assert.equal(shown, name);
    assert.equal(Number(busiest), r.busiest_window_max, name);
    assert.equal(Number(room), r.room_instants, name);
    assert.equal(served, `${(100 * r.served_share).toFixed(1)}%`, name);
  };
  const check = async (n, every, shown) => {
    const r = fleet(n, `sync:every=${every}ms,delay=100ms`);
    await rowIs(3, `sync every ${shown}`, r);
    assert.match(await status(), new RegExp(`^With ${n} gateways syncing every ${shown}, the busiest minute held ${r.busiest_window_max}, ${r.busiest_window_max - 100} past L = 100, and ${r.room_instants} of`));
  };
  await check(8, 5000, '5 s');
  for (const id of ['plot-gateways', 'plot-gateways-sweep']) assert.equal(await page.locator(`#${id}`).getAttribute('data-drawn'), 'true');
  // The dials recompute it: a sync once a minute lets more through.
  await page.selectOption('#gateways-sync', '1min');
  await page.waitForFunction(() => /every 1 min/.test(document.getElementById('gateways-status').textContent), null, { timeout: 20000 });
  await check(8, 60000, '1 min');
  await page.locator('#gateways-n').fill('3');
  await page.waitForFunction(() => /^With 3 gateways/.test(document.getElementById('gateways-status').textContent), null, { timeout: 20000 });
  assert.equal(await page.locator('#gateways-n-out').textContent(), '3');
  await check(3, 60000, '1 min');
  await rowIs(1, 'each on its own', fleet(3, 'local'));
  // 100 does not split three ways: the row says so, and choosing it says what would.
  assert.deepEqual(await row(2), ['each with 1/3 of the limit', '3 does not divide 100', '-', '-', '-']);
  await page.selectOption('#gateways-coord', 'split');
  await page.waitForFunction(() => /could not run/.test(document.getElementById('gateways-status').textContent), null, { timeout: 20000 });
  assert.match(await status(), /invalid number of gateways for a split limit '3': expected one that divides the limit 100: 1, 2, 4, 5, 10/);
  assert.equal(await page.locator('#gateways-figure').isHidden(), true, 'no stale figure beside the message');
  await page.locator('#gateways-n').fill('4');
  await page.waitForFunction(() => /^With 4 gateways each with 1\/4/.test(document.getElementById('gateways-status').textContent), null, { timeout: 20000 });
  await rowIs(2, 'each with 1/4 of the limit', fleet(4, 'split'));
  await page.locator('#gateways-n').fill('3');
  // One central store: the sentence is of it, and every gateway believes the backend's count.
  await page.selectOption('#gateways-coord', 'central');
  await page.waitForFunction(() => /sharing one central store/.test(document.getElementById('gateways-status').textContent), null, { timeout: 20000 });
  const central = fleet(3, 'central');
  await rowIs(4, 'one central store', central);
  assert.equal(await status(), `With 3 gateways sharing one central store, the busiest minute held ${central.busiest_window_max}, within L = 100, and 0 of the fleet's admissions were room instants; the store decides every request, so none can be.`);
  const views = () => page.evaluate(() => ({
    bars: [...document.querySelectorAll('#gateways-views li')].map((li) => Number(li.lastElementChild.textContent)),
    text: document.getElementById('gateways-views-text').textContent,
    at: document.getElementById('gateways-at-out').textContent,
  }));
  let v = await views();
  assert.equal(v.bars.length, 4, 'the backend and 3 gateways');
  assert.ok(v.bars.every((b) => b === v.bars[0]), `one store: ${v.bars}`);
  assert.match(v.text, new RegExp(`^At ${v.at}, the backend's trailing minute held ${v.bars[0]}; every gateway believed ${v.bars[0]}`));
  // Each on its own: the playhead, moved by keyboard, shows beliefs that add up to the truth.
  await page.selectOption('#gateways-coord', 'local');
  await page.waitForFunction(() => /each on its own/.test(document.getElementById('gateways-status').textContent), null, { timeout: 20000 });
  const before = (await views()).at;
  await page.focus('#gateways-at');
  for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowLeft');
  await page.waitForFunction((b) => document.getElementById('gateways-at-out').textContent !== b, before, { timeout: 10000 });
  v = await views();
  assert.equal(v.bars.slice(1).reduce((a, b) => a + b, 0), v.bars[0], `each its own: ${v.bars}`);
  assert.match(v.text, new RegExp(`^At ${v.at}, the backend's trailing minute held ${v.bars[0]};`));
  const csv = await (async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export-csv-plot-gateways-sweep]')]);
    return readFileSync(await download.path(), 'utf8');
  })();
  assert.match(csv, /measured/);
  assert.equal(await page.locator('#gateways [data-error]').count(), 0);
  assert.deepEqual(problems, []);
});

test('a link sets the gateways dials and playhead, runs the section when near, and follows the dials', async (t) => {
  const path = '/?algorithm=gcra&gateways=4&gateways-route=round-robin&gateways-coord=local&gateways-sync=30s&gateways-at=61500';
  const { page, problems } = await open(t, { path });
  // No problem for the main figure: the section's keys are the section's.
  assert.equal(await page.locator('#url-problems').isHidden(), true);
  // Before the section has run, a change to the main figure keeps the section's part of the link.
  await act(page, () => page.selectOption('#traffic', 'page-loads'));
  await page.waitForFunction(() => /traffic=page-loads/.test(location.search), null, { timeout: 10000 });
  assert.match(page.url(), /gateways=4&gateways-route=round-robin&gateways-coord=local&gateways-sync=30s&gateways-at=61500/);
  await page.locator('#gateways').scrollIntoViewIfNeeded();
  await page.waitForSelector('#gateways[data-ready=true]', { timeout: 20000 });
  const dials = await page.evaluate(() => ['gateways-n', 'gateways-route', 'gateways-coord', 'gateways-sync', 'gateways-at'].map((id) => document.getElementById(id).value));
  assert.deepEqual(dials, ['4', 'round-robin', 'local', '30s', '61500']);
  assert.equal(await page.locator('#gateways-n-out').textContent(), '4');
  assert.equal(await page.locator('#gateways-at-out').textContent(), '1:01.5');
  assert.match(await page.locator('#gateways-status').textContent(), /^With 4 gateways each on its own/);
  assert.match(await page.locator('#gateways-views-text').textContent(), /^At 1:01\.5, /);
  assert.equal(await page.locator('#gateways li').count() >= 5, true, 'the backend and 4 gateways');
  // The dials move the address (the playhead's instant is kept).
  await page.selectOption('#gateways-coord', 'central');
  await page.waitForFunction(() => /gateways-coord=central/.test(location.search), null, { timeout: 10000 });
  assert.match(page.url(), /gateways=4&gateways-route=round-robin&gateways-coord=central&gateways-sync=30s&gateways-at=61500/);
  // What is wrong is named in the section, with what is accepted; the rest is kept.
  const bad = await open(t, { path: '/?gateways=40&gateways-coord=central&gateways-colour=red' });
  await bad.page.locator('#gateways').scrollIntoViewIfNeeded();
  await bad.page.waitForSelector('#gateways[data-ready=true]', { timeout: 20000 });
  const said = await bad.page.locator('#gateways-problems li').allTextContents();
  assert.equal(said.length, 2, said.join(' | '));
  assert.match(said[0], /gateways='40' is not accepted: a whole number from 1 to 16\. The gateways section uses 8 instead/);
  assert.match(said[1], /'gateways-colour' is not one the gateways section knows.*Accepted: gateways, gateways-route, gateways-coord, gateways-sync, gateways-at\./);
  assert.equal(await bad.page.locator('#gateways-coord').inputValue(), 'central');
  assert.match(await bad.page.locator('#gateways-status').textContent(), /^With 8 gateways sharing one central store/);
  // Not touched, the address stays as given beside the message.
  assert.match(bad.page.url(), /gateways=40&gateways-coord=central&gateways-colour=red$/);
  assert.deepEqual(problems, []);
  assert.deepEqual(bad.problems, []);
});

test('the recall quiz remembers answers on this device', async (t) => {
  const { page } = await open(t);
  await page.locator('#recall').scrollIntoViewIfNeeded();
  await page.check('#q1a2');
  await page.reload();
  await page.waitForSelector('#lab[data-ready=true]');
  assert.equal(await page.isChecked('#q1a2'), true);
  assert.match(await page.locator('#quiz-score').textContent(), /1 of 5 right/);
  // Each answer is explained, right or wrong: the wrong one says why the right one is right.
  const why = page.locator('#quiz fieldset').nth(1).locator('.why');
  assert.equal(await why.isVisible(), true);
  assert.match(await why.textContent(), /B \+ L − 1: a full bucket/);
  assert.equal(await page.locator('#quiz fieldset').nth(0).locator('.why').isVisible(), false, 'unanswered: no explanation yet');
  await page.check('#q0a0');
  const first = page.locator('#quiz fieldset').nth(0);
  assert.equal(await first.locator('.verdict').textContent(), 'Not quite.');
  assert.match(await first.locator('.why').textContent(), /^120: the window that ends at a boundary/);
  assert.match(await page.locator('#quiz-score').textContent(), /1 of 5 right \(2 answered\)/);
});

test('the quick study runs in workers, reports progress, and equals the command line', async (t) => {
  const { page, problems } = await open(t);
  await page.locator('#study').scrollIntoViewIfNeeded();
  // Every status the study shows while it runs, in order.
  await page.evaluate(() => {
    const status = document.querySelector('#study-status');
    window.__statuses = [];
    new MutationObserver(() => window.__statuses.push(status.textContent)).observe(status, { childList: true, characterData: true, subtree: true });
  });
  await page.click('[data-testid=run-study]');
  await page.waitForSelector('[data-testid=study-done]', { state: 'attached', timeout: 120000 });
  // Progress in experiments (every job of one done) and jobs, ending with all of both.
  const statuses = await page.evaluate(() => window.__statuses);
  const counts = statuses.filter((s) => /experiments done/.test(s));
  assert.match(counts[0], /^0 of 15 experiments done \(0 of \d+ jobs\)$/, statuses.join(' | '));
  const last = counts[counts.length - 1].match(/^(\d+) of 15 experiments done \((\d+) of (\d+) jobs\)$/);
  assert.ok(last && last[1] === '15' && last[2] === last[3], counts[counts.length - 1]);
  const ms = Number(await page.textContent('[data-testid=study-done]'));
  assert.ok(ms > 0, 'wall time in milliseconds');
  const progress = await page.evaluate(() => { const p = document.querySelector('[data-testid=study-progress]'); return [p.value, p.max]; });
  assert.equal(progress[0], progress[1]);
  assert.ok(progress[1] > 100, `${progress[1]} jobs`);
  const pageRows = await page.evaluate(() => [...document.querySelectorAll('table[data-table=honest] tbody tr')].slice(1).map((tr) => [...tr.children].map((c) => c.textContent)));
  const out = JSON.parse(execFileSync(cli(), ['study', '--runs', '5', '--minutes', '200', '--seed', '1', '--format', 'json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  const honest = out.tables.find((x) => x.id === 'honest');
  assert.deepEqual(pageRows, honest.rows, 'the page and the CLI agree cell for cell');
  assert.equal(await page.locator('#study-plots canvas[data-drawn=true]').count(), 3, 'the three study plots are drawn');
  for (const id of ['attacker', 'counter-offsets', 'lockout', 'split', 'theory', 'checks']) {
    assert.ok(await page.locator(`table[data-table=${id}] tbody tr`).count() > 1, `table ${id} is drawn`);
  }
  // Every claim of both essays is a row under the study, in the CLI's order, and the saved
  // REPRODUCTION.md is the CLI's.
  const claimRows = await page.evaluate(() => [...document.querySelectorAll('#study-repro-tables table')].flatMap((t) => [...t.querySelectorAll('tbody tr')].slice(1).map((tr) => tr.children[0].textContent)));
  assert.deepEqual(claimRows, out.claims.map((c) => c.what), 'one row per claim, as the CLI has them');
  await page.click('#study-repro summary');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=save-repro]')]);
  const saved = readFileSync(await download.path(), 'utf8');
  const dir = mkdtempSync(join(tmpdir(), 'ratelab-repro-'));
  execFileSync(cli(), ['study', '--runs', '5', '--minutes', '200', '--seed', '1', '--out', dir], { stdio: 'ignore' });
  assert.equal(saved, readFileSync(join(dir, 'REPRODUCTION.md'), 'utf8'), 'the page saves the same REPRODUCTION.md as the CLI');
  await page.locator('#study').screenshot({ path: join(artifacts, 'section-study.png') });
  // A second run can be cancelled part-way, and the page stays live.
  await page.click('[data-testid=run-study]');
  await page.click('[data-testid=cancel-study]');
  assert.match(await page.textContent('#study-status'), /Cancelled/);
  assert.equal(await page.isEnabled('[data-testid=run-study]'), true);
  // The honest-client table alone: its 20 jobs, the same cells, and no other table.
  await page.check('#study-honest-only');
  await page.evaluate(() => { window.__statuses = []; });
  await page.click('[data-testid=run-study]');
  await page.waitForSelector('[data-testid=study-done]', { state: 'attached', timeout: 120000 });
  // The honest table alone is one experiment of 20 jobs.
  const aloneSaid = (await page.evaluate(() => window.__statuses)).filter((s) => /experiments done/.test(s));
  assert.equal(aloneSaid[aloneSaid.length - 1], '1 of 1 experiments done (20 of 20 jobs)');
  assert.equal(await page.evaluate(() => document.querySelector('[data-testid=study-progress]').max), 20);
  const alone = await page.evaluate(() => [...document.querySelectorAll('table[data-table=honest] tbody tr')].slice(1).map((tr) => [...tr.children].map((c) => c.textContent)));
  assert.deepEqual(alone, honest.rows, 'the honest table alone equals the CLI too');
  assert.equal(await page.locator('table[data-table=lockout]').count(), 0, 'no other table');
  assert.deepEqual(problems, []);
});
