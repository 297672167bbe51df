// End-to-end tests of the built page (dist/) in Debian's Chromium, driven by playwright-core.
// Run by `cargo xtask test` after `trunk build`; by hand, `RATELAB_CLI=target/ci/ratelab node --test tests/`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { setup, open, text, runs, act, root, artifacts, cli } from './helpers.mjs';

setup();

async function readouts(page) {
  return {
    worst: Number(await text(page, 'worst-window')),
    bound: Number(await text(page, 'bound')),
    served: await text(page, 'served-share'),
    state: await page.locator('[data-testid=invariant]').getAttribute('data-state'),
  };
}

test('the page loads with a drawn figure, no console errors and no foreign requests', async (t) => {
  const { page, problems } = await open(t);
  const r = await readouts(page);
  assert.ok(Number.isInteger(r.worst) && r.worst > 0, JSON.stringify(r));
  assert.match(r.served, /^\d+(\.\d)?%$/);
  assert.ok(['ok', 'violated'].includes(r.state));
  // The main canvas has been drawn on: it is not blank.
  const inked = await page.evaluate(() => {
    const c = document.getElementById('plot-window');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const first = d.slice(0, 4).join();
    for (let i = 0; i < d.length; i += 4 * 97) if (d.slice(i, i + 4).join() !== first) return true;
    return false;
  });
  assert.ok(inked, 'the window plot is drawn');
  await page.screenshot({ path: join(artifacts, 'page-top.png') });
  assert.deepEqual(problems, []);
});

/** Whether the element with `testid` lies wholly inside the viewport. */
const inView = (page, testid) => page.locator(`[data-testid=${testid}]`).evaluate((el) => {
  const r = el.getBoundingClientRect();
  return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth && r.height > 0;
});

test('the first screen tells the essay\'s story: a fixed window serving everything, one press to 2L', async (t) => {
  const { page, problems } = await open(t, { viewport: { width: 1280, height: 800 } });
  assert.equal(await page.inputValue('[data-testid=algorithm]'), 'fixed-window');
  assert.equal(await page.getAttribute('[data-testid=honest]', 'aria-pressed'), 'true');
  assert.equal((await readouts(page)).served, '100.0%', 'steady traffic at 80% of L: every request served');
  for (const id of ['plot-window', 'invariant', 'boundary-burst', 'flood', 'retry-storm', 'worst-window']) {
    assert.ok(await inView(page, id), `${id} is on the first screen at 1280×800`);
  }
  const scrolled = await page.evaluate(() => scrollY);
  await act(page, () => page.click('[data-testid=boundary-burst]'));
  const r = await readouts(page);
  assert.equal(r.worst, 120, 'one press: the busiest window is 2L');
  assert.equal(r.state, 'violated');
  assert.equal(await page.evaluate(() => scrollY), scrolled, 'the press does not move the page');
  assert.deepEqual(problems, []);
  // On a phone, pressing an attack keeps the badge and the figure in view.
  const phone = await open(t, { viewport: { width: 390, height: 844 } });
  await phone.page.locator('[data-testid=boundary-burst]').scrollIntoViewIfNeeded();
  await act(phone.page, () => phone.page.click('[data-testid=boundary-burst]'));
  // The page scrolls smoothly (unless reduced motion is asked for): wait for it to settle.
  await phone.page.waitForFunction(() => ['invariant', 'plot-window'].every((id) => {
    const r = document.querySelector(`[data-testid=${id}]`).getBoundingClientRect();
    return r.top >= 0 && r.bottom <= innerHeight;
  }), null, { timeout: 3000 }).catch(() => {});
  for (const id of ['invariant', 'plot-window']) assert.ok(await inView(phone.page, id), `${id} in view on a phone after the press`);
});

test('every algorithm runs, and the badge agrees with the busiest window', async (t) => {
  const { page, problems } = await open(t);
  for (const algorithm of ['fixed-window', 'sliding-log', 'sliding-window-counter', 'token-bucket', 'gcra', 'leaky-bucket']) {
    await act(page, () => page.selectOption('[data-testid=algorithm]', algorithm));
    for (const attack of ['flood', 'boundary-burst']) {
      await act(page, () => page.click(`[data-testid=${attack}]`));
      const r = await readouts(page);
      assert.equal(r.state, r.worst > 60 ? 'violated' : 'ok', `${algorithm} ${attack}: ${JSON.stringify(r)}`);
      if (attack === 'flood') assert.equal(r.worst, r.bound, `${algorithm}: the flood reaches the bound`);
    }
  }
  assert.deepEqual(problems, []);
});

test('the boundary burst gives a fixed window exactly 2L, and a bucket of 10 stays clean', async (t) => {
  const { page, problems } = await open(t);
  await act(page, () => page.selectOption('[data-testid=algorithm]', 'fixed-window'));
  await act(page, () => page.click('[data-testid=boundary-burst]'));
  let r = await readouts(page);
  assert.equal(r.worst, 120);
  assert.equal(r.bound, 120);
  assert.equal(r.state, 'violated');
  await act(page, () => page.selectOption('[data-testid=algorithm]', 'token-bucket'));
  r = await readouts(page);
  // The bucket refills one token a second (60 a minute) and starts full: the first tick (60 at
  // 59.5 s) takes its B tokens, the second (60 at 60.5 s) finds exactly one more, in the same
  // window: B + 1 gets through.
  assert.equal(r.state, 'violated', 'a bucket of one window lets its burst plus one token through');
  assert.equal(r.worst, 61, JSON.stringify(r));
  await act(page, () => page.fill('[data-testid=capacity]', '10'));
  r = await readouts(page);
  assert.equal(r.state, 'ok', JSON.stringify(r));
  assert.equal(r.worst, 11, JSON.stringify(r));
  assert.equal(r.bound, 69);
  await page.locator('#lab').screenshot({ path: join(artifacts, 'boundary-burst.png') });
  assert.deepEqual(problems, []);
});

test('the capacity dial moves by keyboard and the figure follows', async (t) => {
  // The page opens on a fixed window, which has no capacity: a link to a bucket.
  const { page } = await open(t, { path: '/?algorithm=token-bucket' });
  // Tab from the algorithm selector lands on the dial (the leaky-bucket form is hidden).
  await page.focus('[data-testid=algorithm]');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'capacity');
  const start = Number(await page.inputValue('[data-testid=capacity]'));
  for (let i = 0; i < 5; i++) await act(page, () => page.keyboard.press('ArrowLeft'));
  assert.equal(Number(await page.inputValue('[data-testid=capacity]')), start - 5);
  await act(page, () => page.keyboard.press('End'));
  assert.equal(Number(await page.inputValue('[data-testid=capacity]')), 120);
  await act(page, () => page.click('[data-testid=flood]'));
  assert.equal((await readouts(page)).bound, 120 + 60 - 1);
  // Focus reached by keyboard is visible.
  await page.focus('[data-testid=capacity]');
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Tab');
  const focus = await page.evaluate(() => ({ visible: document.activeElement.matches(':focus-visible'), outline: getComputedStyle(document.activeElement).outlineStyle }));
  assert.deepEqual(focus, { visible: true, outline: 'solid' });
});

test('the retry storm locks a client out only when rejects are recorded', async (t) => {
  const { page, problems } = await open(t);
  await act(page, () => page.selectOption('[data-testid=algorithm]', 'sliding-log'));
  await act(page, () => page.click('[data-testid=retry-storm]'));
  const open_ = parseFloat(await text(page, 'served-share'));
  await act(page, () => page.check('[data-testid=record-rejects]'));
  const locked = parseFloat(await text(page, 'served-share'));
  assert.ok(open_ > 80, `served ${open_}% without recording rejects`);
  assert.ok(locked < 30, `served ${locked}% when rejects are recorded`);
  await page.locator('#lab').screenshot({ path: join(artifacts, 'retry-storm.png') });
  assert.deepEqual(problems, []);
});

test('the retry storm runs the client the reader chose, as the command line does', async (t) => {
  const { page, problems } = await open(t);
  assert.equal(await page.locator('#client-fields').isHidden(), true, 'the client applies under the retry storm only');
  await act(page, () => page.selectOption('[data-testid=algorithm]', 'token-bucket'));
  await act(page, () => page.click('[data-testid=retry-storm]'));
  assert.equal(await page.locator('#client-fields').isVisible(), true);
  await act(page, () => page.selectOption('[data-testid=backoff]', 'exponential'));
  await act(page, () => page.selectOption('[data-testid=jitter]', 'full'));
  await act(page, () => page.check('[data-testid=retry-after]'));
  const command = await page.locator('#cli').textContent();
  assert.match(command, /policy=exponential,base=1s,factor=2,cap=1min,jitter=full,retry-after=honor/);
  const args = command.split(' ').slice(1).map((a) => a.replace(/^'|'$/g, ''));
  const out = JSON.parse(execFileSync(cli(), [...args, '--format', 'json'], { encoding: 'utf8' }));
  const r = out.results[0];
  assert.equal(await text(page, 'served-share'), `${(100 * r.served_share).toFixed(1)}%`);
  const explanation = await page.locator('#explain').textContent();
  assert.match(explanation, new RegExp(`It sent ${r.client.attempts} tries for ${r.client.requests} requests`), explanation);
  assert.match(explanation, /never sooner than the limiter's Retry-After/);
  // The link carries the client, and a wrong one is named.
  await page.waitForFunction(() => location.search.includes('backoff=exponential') && location.search.includes('retry-after=honor'));
  await page.goto(`${page.url().split('?')[0]}?algorithm=gcra&attack=retry-storm&backoff=exponential&jitter=sideways`);
  await page.waitForSelector('#lab[data-ready=true]');
  assert.match(await page.locator('[data-testid=url-error]').textContent(), /jitter='sideways' is not accepted: one of none, full, equal, decorrelated/);
  assert.equal(await page.inputValue('[data-testid=backoff]'), 'exponential');
  assert.deepEqual(problems, []);
});

test('read-outs equal the command line on the same scenario', async (t) => {
  const { page } = await open(t);
  const cases = [
    ['sliding-window-counter', 'honest', 'page-loads'],
    ['gcra', 'flood', 'steady'],
    ['leaky-bucket', 'boundary-burst', 'steady'],
    ['fixed-window', 'honest', 'on-off'],
    // nginx as configured, at nginx's defaults (rate=60r/m, no burst): typed values are in nginx.test.mjs.
    ['nginx', 'flood', 'steady'],
    ['nginx', 'honest', 'page-loads'],
  ];
  for (const [algorithm, button, traffic] of cases) {
    await act(page, () => page.selectOption('[data-testid=traffic]', traffic));
    await act(page, () => page.selectOption('[data-testid=algorithm]', algorithm));
    await act(page, () => page.click(`[data-testid=${button}]`));
    const args = (await page.locator('#cli').textContent()).split(' ').slice(1).map((a) => a.replace(/^'|'$/g, ''));
    const out = JSON.parse(execFileSync(cli(), [...args, '--format', 'json'], { encoding: 'utf8' }));
    const r = out.results[0];
    assert.equal(Number(await text(page, 'worst-window')), r.busiest_window_max, `${algorithm} ${button}`);
    assert.equal(await text(page, 'served-share'), `${(100 * r.served_share).toFixed(1)}%`, `${algorithm} ${button}`);
    assert.equal(Number(await text(page, 'bound')), r.bound);
  }
});

test('the honest-traffic and new-seed buttons rerun the figure with the chosen traffic', async (t) => {
  const { page, problems } = await open(t);
  await act(page, () => page.click('[data-testid=flood]'));
  assert.equal(await page.getAttribute('[data-testid=flood]', 'aria-pressed'), 'true');
  await act(page, () => page.click('[data-testid=honest]'));
  assert.equal(await page.getAttribute('[data-testid=honest]', 'aria-pressed'), 'true');
  assert.match(await page.locator('#cli').textContent(), /--traffic steady:load=0\.8/);
  const seed = await page.inputValue('[data-testid=seed]');
  await act(page, () => page.click('[data-testid=new-seed]'));
  const next = await page.inputValue('[data-testid=seed]');
  assert.notEqual(next, seed);
  assert.match(await page.locator('#cli').textContent(), new RegExp(`--seed ${next}$`));
  assert.deepEqual(problems, []);
});

test('compare mode shows every algorithm on the same arrivals', async (t) => {
  const { page, problems } = await open(t);
  await act(page, () => page.click('[data-testid=compare]'));
  // The comparison is computed by the tools module, which may still be loading.
  await page.waitForSelector('#compare-table[data-ready=true]');
  const rows = await page.locator('[data-testid=compare-table] tbody tr').count();
  assert.equal(rows, 6);
  assert.equal(await page.locator('#multiples canvas').count(), 6);
  // Each small multiple is titled with its own limiter, above its chart.
  const titles = await page.locator('#multiples figure').evaluateAll((figs) => figs.map((f) => {
    const caption = f.querySelector('figcaption');
    return { first: f.firstElementChild === caption, above: caption.getBoundingClientRect().bottom <= f.querySelector('canvas').getBoundingClientRect().top, name: caption.textContent };
  }));
  const names = await page.locator('[data-testid=compare-table] tbody tr th').allTextContents();
  assert.deepEqual(titles.map((x) => x.name), names);
  assert.ok(titles.every((x) => x.first && x.above), JSON.stringify(titles));
  await page.locator('#compare-view').screenshot({ path: join(artifacts, 'compare.png') });
  assert.deepEqual(problems, []);
});

test('bad input gets a message naming the control, keeps what was typed, and the page lives', async (t) => {
  const { page, problems } = await open(t);
  for (const [id, value, needle] of [['limit', '-5', 'Limit'], ['limit', '0', 'Limit'], ['window', '99999', 'Window'], ['load', '1e9', 'Load'], ['seed', '1.5', 'Seed']]) {
    await page.fill(`[data-testid=${id}]`, value);
    await page.waitForFunction(() => !document.getElementById('error').hidden);
    assert.match(await text(page, 'error'), new RegExp(needle));
    assert.equal(await page.inputValue(`[data-testid=${id}]`), value, 'the input is kept');
    await act(page, () => page.fill(`[data-testid=${id}]`, id === 'load' ? '0.8' : id === 'window' ? '60' : id === 'seed' ? '1' : '60'));
    assert.equal(await page.locator('#error').isHidden(), true);
  }
  assert.deepEqual(problems, []);
});
