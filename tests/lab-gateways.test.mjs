// The lab's gateways control (issue 19): the reader's own figure behind N gateways, computed
// by the tools module when turned on, following the figure and its own dials, equal to the
// command line it shows, and carried by the link.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { setup, open, act, cli } from './helpers.mjs';

setup();

/** The control's table rows and command line, once the latest run is shown. */
async function shown(page) {
  await page.waitForSelector('#lab-gateways-view[data-ready=true]', { timeout: 20000 });
  return page.evaluate(() => ({
    rows: [...document.querySelectorAll('#lab-gw-table tr')].map((tr) => [...tr.cells].map((c) => c.textContent)),
    command: document.getElementById('lab-gw-cli').textContent,
    sentence: document.getElementById('lab-gw-sentence').textContent,
    status: document.getElementById('lab-gw-status').textContent,
    drawn: !document.getElementById('plot-lab-gateways').hidden,
  }));
}

/** The fleet's row against the command line the control shows, run as JSON. */
function sameAsCli(s) {
  const args = s.command.split(' ').slice(1).concat(['--format', 'json']);
  const r = JSON.parse(execFileSync(cli(), args, { encoding: 'utf8' })).results[0];
  const [, busiest, bound, room, served] = s.rows[2];
  assert.equal(Number(busiest), r.busiest_window_max, s.command);
  assert.equal(Number(bound), r.bound, s.command);
  assert.equal(Number(room), r.room_instants, s.command);
  assert.equal(served, `${(100 * r.served_share).toFixed(1)}%`, s.command);
  assert.ok(s.sentence.includes(`held ${r.busiest_window_max}`), s.sentence);
  return r;
}

test('the lab runs its own figure behind gateways, follows its dials and equals the command line', async (t) => {
  const { page, problems } = await open(t);
  assert.equal(await page.locator('#lab-gateways-view').isHidden(), true, 'off until asked');
  await page.click('[data-testid=lab-gateways]');
  let s = await shown(page);
  assert.equal(await page.locator('#lab-gateways').getAttribute('aria-pressed'), 'true');
  assert.deepEqual(s.rows[0], ['enforced by', 'busiest window', 'worst case, any traffic', 'room instants', 'served']);
  assert.equal(s.rows[2][0], '8 gateways syncing every 5 s');
  assert.match(s.command, /--gateways 8 --route random --coord sync:every=5000ms,delay=100ms$/);
  sameAsCli(s);
  // The figure's own controls: a flood of a sliding log, each gateway on its own, in turn.
  await act(page, () => page.selectOption('[data-testid=algorithm]', 'sliding-log'));
  await act(page, () => page.click('[data-testid=flood]'));
  await page.selectOption('#lab-gw-coord', 'local');
  await page.selectOption('#lab-gw-route', 'round-robin');
  await page.locator('#lab-gw-n').fill('4');
  await page.waitForFunction(() => /^Behind 4 gateways each on its own/.test(document.getElementById('lab-gw-sentence').textContent), null, { timeout: 20000 });
  s = await shown(page);
  assert.match(s.command, /--limiter sliding-log --traffic flood:start=worst .*--gateways 4 --route round-robin --coord local$/);
  const r = sameAsCli(s);
  assert.equal(r.busiest_window_max, 4 * Number(s.rows[1][1]), 'four lone logs in turn let four windows through');
  // A split the limit does not allow: said, and no earlier run left on show.
  await page.selectOption('#lab-gw-coord', 'split');
  await page.locator('#lab-gw-n').fill('7');
  await page.waitForFunction(() => /divides the limit/.test(document.getElementById('lab-gw-status').textContent), null, { timeout: 20000 });
  s = await shown(page);
  assert.equal(s.drawn, false);
  assert.deepEqual([s.rows.length, s.sentence, s.command], [0, '', '']);
  await page.locator('#lab-gw-n').fill('6');
  await page.waitForFunction(() => /^Behind 6 gateways each with 1\/6/.test(document.getElementById('lab-gw-sentence').textContent), null, { timeout: 20000 });
  s = await shown(page);
  assert.ok(Number(sameAsCli(s).busiest_window_max) <= 60, 'a split keeps L');
  // A figure that cannot run leaves nothing stale in the control either, and says why.
  await page.fill('#limit', '0');
  await page.waitForFunction(() => /Limit/.test(document.getElementById('lab-gw-status').textContent), null, { timeout: 10000 });
  const none = await shown(page);
  assert.deepEqual([none.drawn, none.rows.length, none.sentence, none.command], [false, 0, '', '']);
  await page.fill('#limit', '60');
  await page.waitForFunction(() => /^Behind 6 gateways/.test(document.getElementById('lab-gw-sentence').textContent), null, { timeout: 20000 });
  assert.deepEqual((await shown(page)).rows, s.rows);
  // The address carries the control; a link opens it with its dials.
  await page.waitForFunction(() => /lab-gateways=6/.test(location.search), null, { timeout: 10000 });
  const url = await page.evaluate(() => location.href);
  assert.match(url, /lab-gateways-coord=split/);
  const again = await open(t, { path: `/${url.slice(url.indexOf('?'))}` });
  const s2 = await shown(again.page);
  assert.deepEqual(s2.rows, s.rows);
  assert.equal(await again.page.locator('#lab-gw-n').inputValue(), '6');
  // Turned off: hidden, and the address no longer carries it.
  await page.click('[data-testid=lab-gateways]');
  await page.waitForSelector('#lab-gateways-view', { state: 'hidden', timeout: 10000 });
  assert.equal(await page.locator('#lab-gateways').getAttribute('aria-pressed'), 'false');
  await page.waitForFunction(() => !/lab-gateways/.test(location.search), null, { timeout: 10000 });
  assert.deepEqual([...problems, ...again.problems], []);
});

test('a link with a bad lab-gateways value says so and keeps the rest', async (t) => {
  const { page, problems } = await open(t, { path: '/?algorithm=gcra&lab-gateways=99&lab-gateways-coord=central' });
  const s = await shown(page);
  assert.match(s.status, /The link's lab-gateways='99' is not accepted: a whole number from 1 to 16\. The lab's gateways control uses 8 instead/);
  assert.equal(s.rows[2][0], '8 gateways sharing one central store');
  assert.equal(s.rows[1][1], s.rows[2][1], 'a central store is one limiter');
  assert.match(s.command, /--limiter gcra:burst=60 /);
  assert.deepEqual(problems, []);
});
