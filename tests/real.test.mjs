// Real limiters, end to end: the recorded `ratelab probe` reports shipped with the page, a model
// compared in the page, and a report recorded here by the real CLI against a small HTTP limiter
// loaded as a reader would load their own; bad files and bad models get a clear message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setup, open, text, cli, root } from './helpers.mjs';

setup();

const rows = (page) => page.evaluate(() => [...document.querySelectorAll('[data-testid=real-table] tbody tr')]
  .map((tr) => [...tr.children].map((c) => c.textContent)));

/** Scrolls to the section and waits until a report is shown. */
async function section(page) {
  await page.locator('#real').scrollIntoViewIfNeeded();
  await page.waitForSelector('#fig-real[data-ready=true]', { timeout: 20000 });
}

/** Waits until the summary changes from `before`, or an error shows. */
const changed = (page, before) => page.waitForFunction((b) => document.getElementById('real-summary').textContent !== b
  || !document.getElementById('real-error').hidden, before, { timeout: 10000 });

test('the recorded runs show the real limiter beside its model, with the command that recorded them', async (t) => {
  const { page, problems } = await open(t);
  await section(page);
  const shipped = JSON.parse(readFileSync(join(root, 'www', 'probes', 'nginx-nodelay-boundary-burst.json'), 'utf8'));
  assert.match(await text(page, 'real-summary'), new RegExp(`same decision on ${shipped.comparison.agree} of ${shipped.comparison.compared}`));
  let r = await rows(page);
  assert.deepEqual(r.map((row) => row.slice(0, 2)), [['The real limiter', String(shipped.audit.admitted)], ['The model', String(shipped.comparison.audit.admitted)]]);
  assert.equal(await text(page, 'real-command'), shipped.command);
  assert.match(shipped.command, /^ratelab probe --target http:\/\/127\.0\.0\.1:8080\/nodelay /);
  assert.equal(await page.inputValue('[data-testid=real-model]'), 'leaky-bucket:burst=5,mode=meter');
  // Another model on the same send times: a burst of 4 lets one fewer through at each burst.
  let before = await text(page, 'real-summary');
  await page.fill('[data-testid=real-model]', 'leaky-bucket:burst=4,mode=meter');
  await page.click('[data-testid=real-compare]');
  await changed(page, before);
  r = await rows(page);
  assert.equal(r[1][1], String(shipped.comparison.audit.admitted - 2), JSON.stringify(r));
  assert.match(await text(page, 'real-summary'), /the real limiter alone admitted 2, the model alone 0/);
  // A bad model is named; the figure keeps the last good one.
  await page.fill('[data-testid=real-model]', 'leaky-bucket:burst=lots');
  await page.press('[data-testid=real-model]', 'Enter');
  await page.waitForSelector('[data-testid=real-error]:not([hidden])');
  assert.match(await text(page, 'real-error'), /The model 'leaky-bucket:burst=lots' is not accepted: .*burst.*lots/);
  assert.equal((await rows(page))[1][1], r[1][1]);
  // The Redis lockout: the recipe that logs rejects serves the retrying client under half.
  before = await text(page, 'real-summary');
  await page.selectOption('[data-testid=real-run]', 'redis-sorted-set-record-rejects-retry-storm');
  await changed(page, before);
  assert.equal(await page.isHidden('[data-testid=real-error]'), true);
  r = await rows(page);
  // The recorded run's own numbers, shown as they are: 20 admitted of 133 first tries.
  const lockout = JSON.parse(readFileSync(join(root, 'www', 'probes', 'redis-sorted-set-record-rejects-retry-storm.json'), 'utf8')).audit;
  assert.ok(lockout.served_share < 0.5, `the recorded lockout served ${lockout.served_share}`);
  assert.deepEqual(r[0].slice(1, 4), [String(lockout.admitted), `${(100 * lockout.served_share).toFixed(1)}%`, String(lockout.busiest)], JSON.stringify(r));
  assert.equal(await page.inputValue('[data-testid=real-model]'), 'sliding-log:record-rejects=true');
  // HAProxy's common recipe counts the requests it denies: the same storm, locked out, beside
  // its own arithmetic as the model.
  const shipped2 = (name) => JSON.parse(readFileSync(join(root, 'www', 'probes', `${name}.json`), 'utf8'));
  before = await text(page, 'real-summary');
  await page.selectOption('[data-testid=real-run]', 'haproxy-retry-storm');
  await changed(page, before);
  const haproxy = shipped2('haproxy-retry-storm');
  assert.ok(haproxy.audit.served_share < 0.5, `HAProxy served ${haproxy.audit.served_share}`);
  r = await rows(page);
  assert.deepEqual(r[0].slice(1, 3), [String(haproxy.audit.admitted), `${(100 * haproxy.audit.served_share).toFixed(1)}%`], JSON.stringify(r));
  assert.equal(await page.inputValue('[data-testid=real-model]'), 'haproxy:period=1s,limit=20');
  // nginx with delay=4: the summary says how many the model delays and how long the real
  // limiter's answers took.
  before = await text(page, 'real-summary');
  await page.selectOption('[data-testid=real-run]', 'nginx-delay4-boundary-burst');
  await changed(page, before);
  const delayed = shipped2('nginx-delay4-boundary-burst').comparison.delayed;
  assert.match(await text(page, 'real-summary'), new RegExp(`through at once and delays ${delayed}, by up to \\d+ ms; the real limiter's ${delayed} slowest admitted answers took \\d+ to \\d+ ms`));
  // Every recorded run loads.
  for (const option of await page.$$eval('#real-run option', (os) => os.map((o) => o.value))) {
    before = await text(page, 'real-summary');
    await page.selectOption('[data-testid=real-run]', option);
    if (before.startsWith(`${option}.json`)) continue;
    await changed(page, before);
    assert.equal(await page.isHidden('[data-testid=real-error]'), true, `${option}: ${await text(page, 'real-error')}`);
    assert.match(await text(page, 'real-summary'), new RegExp(`^${option}\\.json, probing `));
  }
  // The figure saves as SVG and CSV from the same report.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export-csv-plot-real]')]);
  const csv = readFileSync(await download.path(), 'utf8');
  assert.equal(csv.split('\n')[0], 'series,x,y');
  assert.match(csv, /^sent,/m);
  assert.match(csv, /^"?admitted by the model, /m);
  assert.deepEqual(problems, []);
});

/** A small HTTP limiter: at most `limit` requests per calendar second of its own clock. */
function fixedWindowServer(limit) {
  let second = -1;
  let count = 0;
  const server = createServer((req, res) => {
    const now = Math.floor(performance.now() / 1000);
    if (now !== second) { second = now; count = 0; }
    count += 1;
    res.writeHead(count <= limit ? 200 : 429, { 'content-type': 'text/plain' });
    res.end(count <= limit ? 'ok\n' : 'slow down\n');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('a report the reader recorded with ratelab probe loads and compares in the page', async (t) => {
  const server = await fixedWindowServer(5);
  t.after(() => server.close());
  const target = `http://127.0.0.1:${server.address().port}/api`;
  const { stdout } = await promisify(execFile)(cli(), ['probe', '--target', target, '--traffic', 'flood:every=20ms,for=2s',
    '--limit', '5', '--window', '1s', '--model', 'sliding-log', '--seed', '18446744073709551615', '--format', 'json']);
  // The largest seed: above 2^53, so the browser's JSON parser rounds it; the report still loads.
  assert.match(stdout, /"seed": 18446744073709551615,/);
  const report = JSON.parse(stdout);
  assert.equal(report.errors + report.timeouts + report.other, 0, stdout);
  assert.ok(report.audit.rejected > 0, 'the small limiter rejected some');
  const { page, problems } = await open(t);
  await section(page);
  const before = await text(page, 'real-summary');
  await page.setInputFiles('[data-testid=real-file]', { name: 'my-gateway.json', mimeType: 'application/json', buffer: Buffer.from(stdout) });
  await changed(page, before);
  assert.equal(await page.isHidden('[data-testid=real-error]'), true, await text(page, 'real-error'));
  const summary = await text(page, 'real-summary');
  assert.match(summary, new RegExp(`^my-gateway\\.json, probing ${target.replace(/[/.]/g, '\\$&')}: ${report.sent} requests`));
  assert.match(summary, new RegExp(`same decision on ${report.comparison.agree} of ${report.comparison.compared}`));
  const r = await rows(page);
  assert.equal(r[0][1], String(report.audit.admitted));
  assert.equal(r[0][3], String(report.audit.busiest));
  // The same report against a fixed window (the small server's own algorithm, on its own clock).
  await page.fill('[data-testid=real-model]', 'fixed-window');
  await page.click('[data-testid=real-compare]');
  await page.waitForFunction(() => /model fixed-window made/.test(document.getElementById('real-summary').textContent));
  assert.deepEqual(problems, []);
});

test('bad report files are named with what is accepted, and the section keeps answering', async (t) => {
  const { page, problems } = await open(t);
  await section(page);
  const good = readFileSync(join(root, 'www', 'probes', 'nginx-nodelay-flood.json'), 'utf8');
  const parsed = JSON.parse(good);
  const tampered = { ...parsed, audit: { ...parsed.audit, admitted: parsed.audit.admitted + 1 } };
  const shortTrace = { ...parsed, trace: { ...parsed.trace, sent_us: parsed.trace.sent_us.slice(1) } };
  const cases = [
    ['empty.json', '', /'empty\.json' is empty: expected the JSON that `ratelab probe --format json` writes/],
    ['words.json', 'hello there', /'words\.json' is not a probe report .*ratelab probe --format json/],
    ['other.json', '{"results": []}', /'other\.json' is not a probe report \(missing field/],
    ['tampered.json', JSON.stringify(tampered), /'tampered\.json'.*says \d+ admitted but its trace has \d+/],
    ['short.json', JSON.stringify(shortTrace), /'short\.json'.*trace has \d+ times/],
    ['<b>x</b>.json', '[1', /'<b>x<\/b>\.json' is not a probe report/],
  ];
  for (const [name, body, wanted] of cases) {
    await page.evaluate(() => { document.getElementById('real-error').hidden = true; });
    await page.setInputFiles('[data-testid=real-file]', { name, mimeType: 'application/json', buffer: Buffer.from(body) });
    await page.waitForSelector('[data-testid=real-error]:not([hidden])');
    assert.match(await text(page, 'real-error'), wanted, `${name}: ${await text(page, 'real-error')}`);
    assert.equal(await page.locator('#real-error b').count(), 0, 'shown as text');
  }
  // Still answering: a recorded run loads after the bad files.
  const before = await text(page, 'real-summary');
  await page.selectOption('[data-testid=real-run]', 'redis-sorted-set-retry-storm');
  await page.waitForFunction((b) => document.getElementById('real-summary').textContent !== b, before);
  assert.deepEqual(problems, []);
});
