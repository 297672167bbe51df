// The libraries in the page, end to end: each of the six is in the lab's menu, runs in the
// tools module (loaded when one is chosen), and its read-outs are `ratelab simulate` of the
// command line the page shows, with the library's own settings in it; a link brings it back.
// "Check your config" says of a pasted configuration what `ratelab check` says, in a worker,
// and opens the lab on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setup, open, text, act, cli, root } from './helpers.mjs';

setup();

const shown = (page) => page.evaluate(() => {
  const t = (id) => document.querySelector(`[data-testid=${id}]`).textContent;
  return { worst: t('worst-window'), bound: t('bound'), served: t('served-share'), cli: document.getElementById('cli').textContent, explain: document.getElementById('explain').textContent };
});

/** The page's command line run by the `ratelab` binary: its one limiter's results. */
function simulate(line) {
  const args = line.split(' ').slice(1).map((a) => a.replace(/^'|'$/g, ''));
  return JSON.parse(execFileSync(cli(), [...args, '--format', 'json'], { encoding: 'utf8' })).results[0];
}

function agrees(s, r, what) {
  assert.equal(Number(s.worst), r.busiest_window_max, `${what}: busiest window`);
  assert.equal(s.bound === '–' ? null : Number(s.bound), r.bound, `${what}: bound`);
  assert.equal(s.served, `${(100 * r.served_share).toFixed(1)}%`, `${what}: served`);
}

const LIBRARIES = [
  ['express-rate-limit', 'limit=100,window-ms=60000'],
  ['rate-limiter-flexible', 'points=100,duration=60'],
  ['go-rate', 'r=10,b=5'],
  ['redis-cell', 'max-burst=15,count=30,period=60'],
  ['vsthrottle', 'limit=15,period=10s,block=0s'],
  ['limits', 'rate=100/minute,strategy=moving-window'],
];

test('each library runs in the lab as `ratelab simulate` runs it, with its own settings or the lab\'s limit and window', async (t) => {
  const { page, problems } = await open(t);
  assert.equal(await page.isVisible('[data-testid=library]'), false, 'the settings show for a library alone');
  for (const [name, example] of LIBRARIES) {
    await page.selectOption('[data-testid=algorithm]', name);
    // The first library loads the tools module (a wasm of its own): time for it to compile.
    await page.waitForFunction((n) => document.getElementById('lab').dataset.settled === 'true'
      && document.getElementById('cli').textContent.includes(`--limiter ${n} `), name, { timeout: 60000 });
    assert.equal(await page.isVisible('[data-testid=library]'), true, name);
    assert.equal(await page.isVisible('[data-testid=capacity]'), false, name);
    assert.equal(await text(page, 'library-example'), example);
    let s = await shown(page);
    assert.match(s.cli, new RegExp(`^ratelab simulate --limiter ${name} --traffic`), s.cli);
    agrees(s, simulate(s.cli), `${name} at the lab's limit and window`);
    await act(page, () => page.fill('[data-testid=library]', example));
    await act(page, () => page.click('[data-testid=boundary-burst]'));
    s = await shown(page);
    assert.ok(s.cli.startsWith(`ratelab simulate --limiter ${name}:${example} --traffic boundary-burst`), s.cli);
    agrees(s, simulate(s.cli), `${name}:${example} under the boundary burst`);
    assert.match(s.explain, /(kept|broke) the rule/);
    await act(page, () => page.click('[data-testid=honest]'));
  }
  // The mechanism view follows a library too (from the tools module).
  await page.locator('#mechanism').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.getElementById('mechanism').dataset.runs === document.getElementById('lab').dataset.runs, null, { timeout: 20000 });
  assert.match(await page.locator('#frame-text').textContent(), /\S/);
  // A setting the library does not take is named, with what it takes, and kept in its box.
  await page.fill('[data-testid=library]', 'rate=100/minute,burst=5');
  await page.waitForSelector('#error', { state: 'visible', timeout: 10000 });
  assert.match(await page.locator('#error').textContent(), /burst/);
  assert.equal(await page.inputValue('[data-testid=library]'), 'rate=100/minute,burst=5');
  // A link brings a library and its settings back.
  await act(page, () => page.fill('[data-testid=library]', 'rate=100/minute,strategy=sliding-window-counter'));
  await page.waitForFunction(() => location.search.includes('library=rate=100/minute,strategy=sliding-window-counter'), null, { timeout: 5000 });
  const url = page.url();
  const before = await shown(page);
  const { page: again } = await open(t, { path: `/${new URL(url).search}` });
  await again.waitForFunction(() => document.getElementById('lab').dataset.settled === 'true' && document.getElementById('cli').textContent.includes('limits:'), null, { timeout: 20000 });
  assert.equal(await again.inputValue('[data-testid=algorithm]'), 'limits');
  assert.equal(await again.inputValue('[data-testid=library]'), 'rate=100/minute,strategy=sliding-window-counter');
  assert.deepEqual(await shown(again), before);
  assert.deepEqual(problems, []);
});

/** Pastes `config` into "Check your config" with the window and instances given, checks it,
 * and waits for the results or the message. */
async function check(page, config, { window = '', instances = '2' } = {}) {
  const run = async () => {
    await page.evaluate(() => { document.getElementById('fig-check').dataset.state = ''; });
    await page.click('[data-testid=check-run]');
    await page.waitForFunction(() => document.getElementById('fig-check').dataset.state === 'done', null, { timeout: 60000 });
  };
  await page.fill('[data-testid=check-text]', config);
  // The panel's other fields come with its code, at the first press (which checks too).
  if (await page.locator('#check-window').count() === 0) await run();
  await page.fill('[data-testid=check-window]', window);
  await page.fill('[data-testid=check-instances]', instances);
  await run();
}

const items = (page) => page.evaluate(() => [...document.querySelectorAll('#check-results .check-item')].map((a) => ({
  heading: a.querySelector('h4').textContent,
  lines: [...a.querySelectorAll('dt')].map((dt) => `${dt.textContent}: ${dt.nextElementSibling.textContent}`),
})));

test('"Check your config" says what `ratelab check` says, and opens the lab on what it read', async (t) => {
  const { page, problems } = await open(t);
  for (const [file, flags] of [['express.js', []], ['haproxy.cfg', ['--window', '1min', '--instances', '4']], ['limiter.go', []], ['throttle.redis', []]]) {
    const path = join(root, 'docs/examples', file);
    const window = flags[1] ?? '';
    await check(page, readFileSync(path, 'utf8'), { window, instances: flags[3] ?? '2' });
    assert.equal(await page.isVisible('[data-testid=check-error]'), false, await text(page, 'check-error'));
    const out = execFileSync(cli(), ['check', path, ...flags], { encoding: 'utf8' });
    // The command line's text: a heading, then each finding under its label.
    const expected = out.trim().split('\n\n').map((block) => {
      const [heading, ...rest] = block.split('\n');
      return { heading, lines: rest.map((l) => l.trim().replace(/:\s+/, ': ')) };
    });
    assert.deepEqual(await items(page), expected, file);
  }
  // The lab opens on what was read: Go's rate.Every(100ms) audited over a whole second.
  await check(page, readFileSync(join(root, 'docs/examples/limiter.go'), 'utf8'));
  await act(page, () => page.click('[data-testid=check-lab-0]'));
  assert.equal(await page.inputValue('[data-testid=algorithm]'), 'go-rate');
  assert.equal(await page.inputValue('[data-testid=library]'), 'every=100ms,b=5');
  assert.equal(await page.inputValue('[data-testid=limit]'), '10');
  assert.equal(await page.inputValue('[data-testid=window]'), '1');
  const s = await shown(page);
  agrees(s, simulate(s.cli), 'the checked Go limiter in the lab');
  // Not understood: named, with what is accepted; the pasted text is kept.
  await check(page, 'rate limit me please');
  assert.equal(await page.isVisible('[data-testid=check-error]'), true);
  assert.match(await text(page, 'check-error'), /expected an nginx limit_req_zone/);
  assert.equal(await page.inputValue('[data-testid=check-text]'), 'rate limit me please');
  await check(page, readFileSync(join(root, 'docs/examples/nginx.conf'), 'utf8'), { window: 'soon' });
  assert.match(await text(page, 'check-error'), /window/);
  assert.deepEqual(problems, []);
});

test('the check panel and the library settings have no axe-core violation, light or dark', async (t) => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, problems } = await open(t, { colorScheme, bypassCSP: true });
    await act(page, () => page.selectOption('[data-testid=algorithm]', 'go-rate'));
    await check(page, readFileSync(join(root, 'docs/examples/express.js'), 'utf8'));
    await page.addScriptTag({ content: readFileSync(join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8') });
    const results = await page.evaluate(async () => [
      ...(await window.axe.run(document.getElementById('fig-check'), { resultTypes: ['violations'] })).violations,
      ...(await window.axe.run(document.getElementById('controls'), { resultTypes: ['violations'] })).violations,
    ]);
    assert.deepEqual(results.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(' ')}`), [], colorScheme);
    await page.locator('#fig-check').screenshot({ path: join(root, 'tests', 'artifacts', `check-${colorScheme}.png`) });
    assert.deepEqual(problems, []);
  }
});
