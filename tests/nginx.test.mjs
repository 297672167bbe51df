// nginx (as configured) in the lab, end to end: a reader types their limit_req line's values
// in nginx's units (or pastes the lines), the read-outs equal `ratelab simulate` on the spec
// the page shows, the sentences say what nginx does with those values, and a link brings the
// same figure back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setup, open, text, act, origin, cli, root } from './helpers.mjs';

setup();

/** The read-outs, the command line, the explanation and nginx's fields as the page shows them. */
const shown = (page) => page.evaluate(() => {
  const t = (id) => document.querySelector(`[data-testid=${id}]`).textContent;
  const v = (id) => document.querySelector(`[data-testid=${id}]`).value;
  return {
    worst: t('worst-window'), bound: t('bound'), served: t('served-share'), state: document.getElementById('invariant').dataset.state,
    cli: document.getElementById('cli').textContent, explain: document.getElementById('explain').textContent,
    conf: t('nginx-conf'),
    fields: [v('nginx-rate'), v('nginx-unit'), v('nginx-burst'), v('nginx-delay'), document.querySelector('[data-testid=nginx-nodelay]').checked],
  };
});

/** Waits for nginx's notes (its sentences and nginx.conf lines, from the tools module) beside
 * the run on show. */
const notes = (page) => page.waitForFunction(() => document.querySelector('[data-testid=nginx-conf]').textContent !== '', null, { timeout: 20000 });

/** The page's command line run by the `ratelab` binary: its one limiter's results. */
function simulate(line) {
  const args = line.split(' ').slice(1).map((a) => a.replace(/^'|'$/g, ''));
  return JSON.parse(execFileSync(cli(), [...args, '--format', 'json'], { encoding: 'utf8' })).results[0];
}

/** The read-outs agree with the command line's numbers. */
function agrees(s, r, what) {
  assert.equal(Number(s.worst), r.busiest_window_max, `${what}: busiest window`);
  assert.equal(Number(s.bound), r.bound, `${what}: bound`);
  assert.equal(s.served, `${(100 * r.served_share).toFixed(1)}%`, `${what}: served`);
  assert.equal(s.state, r.busiest_window_max > 7 ? 'violated' : 'ok', what);
}

test('nginx typed in its own units: the read-outs are `ratelab simulate` of the same limit_req line, and a link brings it back', async (t) => {
  const { page, problems } = await open(t);
  // Only nginx's own fields show for nginx; the capacity dial is for the others.
  assert.equal(await page.isVisible('[data-testid=nginx-rate]'), false);
  await act(page, () => page.selectOption('[data-testid=algorithm]', 'nginx'));
  assert.equal(await page.isVisible('[data-testid=nginx-rate]'), true);
  assert.equal(await page.isVisible('[data-testid=capacity]'), false);
  // nginx's defaults: burst 0, no nodelay, delay 0; the lab's 60 a minute.
  assert.deepEqual((await shown(page)).fields, ['60', 'r/m', '0', '0', false]);
  // The rule the reader means, 7 a minute, and the line they configured: rate=7r/m burst=5 delay=2.
  await act(page, () => page.fill('[data-testid=limit]', '7'));
  await act(page, () => page.fill('[data-testid=nginx-rate]', '7'));
  await act(page, () => page.selectOption('[data-testid=nginx-unit]', 'r/m'));
  await act(page, () => page.fill('[data-testid=nginx-burst]', '5'));
  await act(page, () => page.fill('[data-testid=nginx-delay]', '2'));
  await notes(page);
  let s = await shown(page);
  assert.equal(s.cli, 'ratelab simulate --limiter nginx:rate=7r/m,burst=5,delay=2 --traffic steady:load=0.8 --limit 7 --window 60s --minutes 10 --seed 1');
  assert.equal(s.conf, 'limit_req_zone $binary_remote_addr zone=lab:10m rate=7r/m;\nlimit_req zone=lab burst=5 delay=2;');
  agrees(s, simulate(s.cli), 'honest');
  // The sentences say what nginx makes of these values, worked out from them.
  assert.match(s.explain, /nginx stores rate=7r\/m as 116 thousandths of a request a second \(7 × 1000 \/ 60, rounded down\): one request per 8\.621 s, not 8\.571 s\./);
  assert.match(s.explain, /With delay=2, the first 2 requests above the rate pass at once and the next 3 wait, for up to 25\.86 s/);
  assert.match(s.explain, /^nginx \(as configured\) (kept|broke) the rule/, 'the run\'s own sentences come first');
  assert.match(s.explain, new RegExp(`No window can hold more than ${s.bound} here`));
  // The flood: its busiest window, the real worst window of this line, against the bound.
  await act(page, () => page.click('[data-testid=flood]'));
  await notes(page);
  s = await shown(page);
  agrees(s, simulate(s.cli), 'flood');
  assert.equal(s.worst, '9', 'rate=7r/m burst=5 delay=2 lets 9 into a minute');
  assert.equal(s.state, 'violated');
  // nodelay sets delay= aside (kept, disabled) and the line says nodelay.
  await act(page, () => page.check('[data-testid=nginx-nodelay]'));
  assert.equal(await page.isDisabled('[data-testid=nginx-delay]'), true);
  await notes(page);
  s = await shown(page);
  assert.match(s.cli, /--limiter nginx:rate=7r\/m,burst=5,nodelay /);
  assert.match(s.conf, /limit_req zone=lab burst=5 nodelay;$/);
  agrees(s, simulate(s.cli), 'flood, nodelay');
  assert.equal(s.fields[3], '2', 'the delay typed is kept');
  await act(page, () => page.uncheck('[data-testid=nginx-nodelay]'));
  assert.equal(await page.isDisabled('[data-testid=nginx-delay]'), false);
  await notes(page);

  // The address bar holds the line in nginx's units; opening it gives the same figure.
  // The address bar follows 150 ms after the last change: wait for this state's own.
  await page.waitForFunction(() => location.search.endsWith('&attack=flood&nginx=rate=7r/m,burst=5,delay=2'));
  const url = page.url();
  assert.match(url, /\?algorithm=nginx&limit=7&attack=flood&nginx=rate=7r\/m,burst=5,delay=2$/);
  const before = await shown(page);
  const again = await open(t, { path: url.slice(origin.length) });
  await notes(again.page);
  assert.deepEqual(await shown(again.page), before, 'same fields, read-outs, sentences and command');
  assert.equal(await again.page.isVisible('[data-testid=url-error]'), false);
  assert.deepEqual([...problems, ...again.problems], []);
});

test('pasted nginx.conf lines fill nginx\'s fields; a wrong value is named and kept', async (t) => {
  const { page, problems } = await open(t, { path: '/?algorithm=nginx&limit=7' });
  await page.fill('[data-testid=nginx-paste]', 'limit_req_zone $binary_remote_addr zone=one:10m rate=7r/m;  limit_req zone=one burst=5 delay=2;');
  await act(page, () => page.press('[data-testid=nginx-paste]', 'Enter'));
  await notes(page);
  let s = await shown(page);
  assert.deepEqual(s.fields, ['7', 'r/m', '5', '2', false]);
  assert.match(s.cli, /--limiter nginx:rate=7r\/m,burst=5,delay=2 /);
  agrees(s, simulate(s.cli), 'pasted');
  // Text with none of nginx's words is refused under the box; the fields stay as they were.
  await page.fill('[data-testid=nginx-paste]', 'limit_conn addr 10;');
  await page.press('[data-testid=nginx-paste]', 'Enter');
  assert.match(await text(page, 'nginx-paste-error'), /Found no rate=, burst=, delay= or nodelay/);
  assert.deepEqual((await shown(page)).fields, ['7', 'r/m', '5', '2', false]);
  // A wrong field is named with what to enter, what was typed is kept, and the read-outs go blank.
  await page.fill('[data-testid=nginx-burst]', '-3');
  await page.waitForFunction(() => !document.getElementById('error').hidden);
  assert.equal(await text(page, 'error'), "nginx's burst '-3' is not a whole number: enter one from 0 to 10000000");
  assert.equal(await page.inputValue('[data-testid=nginx-burst]'), '-3');
  assert.equal(await text(page, 'worst-window'), '–');
  assert.equal(await text(page, 'nginx-conf'), '');
  await act(page, () => page.fill('[data-testid=nginx-burst]', '5'));
  assert.equal(await page.isHidden('#error'), true);
  // Another limiter hides nginx's fields, and nothing in them stands in its way.
  await page.fill('[data-testid=nginx-rate]', '');
  await act(page, () => page.selectOption('[data-testid=algorithm]', 'token-bucket'));
  assert.equal(await page.isHidden('#error'), true);
  assert.equal(await page.isVisible('[data-testid=nginx-rate]'), false);
  assert.deepEqual(problems, []);
});

test('the playhead shows nginx\'s excess, and a request that waits is counted when it leaves', async (t) => {
  const { page, problems } = await open(t, { path: '/?algorithm=nginx&limit=7&attack=boundary-burst&nginx=rate=7r/m,burst=5,delay=2' });
  await page.locator('#mechanism').scrollIntoViewIfNeeded();
  await page.waitForSelector('#mechanism[data-ready=true]', { timeout: 20000 });
  await page.waitForFunction(() => document.getElementById('mechanism').dataset.runs === document.getElementById('lab').dataset.runs, null, { timeout: 10000 });
  const frames = await page.evaluate(() => {
    const range = document.querySelector('[data-testid=playhead]');
    const out = [];
    for (let i = 0; i <= Number(range.max); i += 1) {
      range.value = String(i);
      range.dispatchEvent(new Event('input'));
      const state = document.querySelector('[data-testid=state-value]');
      out.push({ band: Number(document.querySelector('[data-testid=band-count]').textContent), kind: state.dataset.kind, value: Number(state.dataset.value), text: document.getElementById('frame-text').textContent });
    }
    return out;
  });
  assert.ok(frames.every((f) => f.kind === 'excess' && f.value <= 5), JSON.stringify(frames.slice(0, 8)));
  assert.ok(frames.some((f) => /admitted, queued until/.test(f.text)), 'some requests wait');
  assert.equal(Math.max(...frames.map((f) => f.band)), Number(await text(page, 'worst-window')));
  assert.deepEqual(problems, []);
});

test('nginx\'s fields are labelled, reached and set by keyboard with visible focus, and axe-clean in light and dark', async (t) => {
  const { page, problems } = await open(t, { path: '/?algorithm=nginx&limit=7&nginx=rate=7r/m,burst=5,nodelay' });
  await notes(page);
  const tabTo = async () => { await page.keyboard.press('Tab'); return page.evaluate(() => document.activeElement.id); };
  await page.focus('[data-testid=algorithm]');
  // With nodelay ticked, delay= is disabled and skipped.
  const order = [];
  for (let i = 0; i < 5; i++) order.push(await tabTo());
  assert.deepEqual(order, ['nginx-rate', 'nginx-unit', 'nginx-burst', 'nginx-nodelay', 'nginx-paste']);
  await page.focus('[data-testid=nginx-nodelay]');
  assert.deepEqual(await page.evaluate(() => ({ visible: document.activeElement.matches(':focus-visible'), outline: getComputedStyle(document.activeElement).outlineStyle })), { visible: true, outline: 'solid' });
  await act(page, () => page.keyboard.press('Space'));
  assert.equal(await page.isDisabled('[data-testid=nginx-delay]'), false);
  await page.focus('[data-testid=nginx-burst]');
  assert.equal(await tabTo(), 'nginx-delay');
  await act(page, () => page.keyboard.press('ArrowUp'));
  assert.equal(await page.inputValue('[data-testid=nginx-delay]'), '1');
  await notes(page);
  assert.match(await page.locator('#cli').textContent(), /--limiter nginx:rate=7r\/m,burst=5,delay=1 /);
  assert.deepEqual(problems, []);
  for (const [viewport, colorScheme] of [[{ width: 390, height: 844 }, 'dark'], [{ width: 1280, height: 900 }, 'light']]) {
    const { page: p } = await open(t, { viewport, colorScheme, bypassCSP: true, path: '/?algorithm=nginx&limit=7&nginx=rate=7r/m,burst=5,delay=2' });
    await notes(p);
    // The paste box's message shown too.
    await p.fill('[data-testid=nginx-paste]', 'limit_conn addr 10;');
    await p.press('[data-testid=nginx-paste]', 'Enter');
    await p.waitForSelector('[data-testid=nginx-paste-error]:not([hidden])');
    await p.addScriptTag({ content: readFileSync(join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8') });
    const results = await p.evaluate(() => window.axe.run('#lab', { resultTypes: ['violations'] }));
    assert.deepEqual(results.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`), [], `${colorScheme} ${viewport.width}px`);
  }
});
