// Bring your own traffic, end to end: files are read in a worker with progress, replayed through
// every limiter, checked against `ratelab simulate` on the same file, and bad files get a clear
// message while the page stays live.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { setup, open, text, act, cli } from './helpers.mjs';

setup();
const dir = mkdtempSync(join(tmpdir(), 'ratelab-import-'));

/** A boundary burst in epoch milliseconds: 60 requests in the 0.5 s before 12:00:00 UTC on
 * 2026-12-01 and 60 in the 0.5 s after, then steady traffic of one every 1.5 s for 10 minutes. */
function burstMs() {
  const noon = Date.UTC(2026, 11, 1, 12);
  const lines = [];
  for (let i = 0; i < 60; i++) lines.push(noon - 500 + i * 8);
  for (let i = 0; i < 60; i++) lines.push(noon + i * 8);
  for (let t = noon + 60_000; t < noon + 660_000; t += 1500) lines.push(t);
  return lines.join('\n') + '\n';
}

/** Reads `files` (an input-files value) in the page and waits for the outcome. */
async function importFile(page, file, { format = 'auto', field = '', value = '' } = {}) {
  // No file chosen while the options change (each change re-reads the chosen file).
  await page.setInputFiles('[data-testid=import-file]', []);
  await page.selectOption('[data-testid=import-format]', format);
  await page.selectOption('[data-testid=import-field]', field);
  await page.fill('[data-testid=import-value]', value);
  await page.evaluate(() => {
    document.getElementById('import-status').textContent = '';
    document.getElementById('import-error').hidden = true;
  });
  await page.setInputFiles('[data-testid=import-file]', file);
  await page.waitForFunction(() => /^Read .* in [\d.]+ s\.$/.test(document.getElementById('import-status').textContent)
    || !document.getElementById('import-error').hidden, null, { timeout: 60000 });
}

const tableRows = (page, id) => page.evaluate((tid) => [...document.querySelectorAll(`[data-testid=${tid}] tbody tr`)]
  .map((tr) => [...tr.children].map((c) => c.textContent)), id);
const pct = (x, d = 1) => `${(100 * x).toFixed(d)}%`;

test('a timestamp file replays through every limiter, equal to the command line on the same file', async (t) => {
  const body = burstMs();
  const path = join(dir, 'burst-ms.txt');
  writeFileSync(path, body);
  const { page, problems } = await open(t);
  await importFile(page, { name: 'burst-ms.txt', mimeType: 'text/plain', buffer: Buffer.from(body) });
  assert.equal(await page.isVisible('[data-testid=import-error]'), false, await text(page, 'import-error'));
  assert.match(await text(page, 'import-summary'), /520 lines read as epoch milliseconds, giving 520 requests from 2026-12-01 11:59:59/);
  const rows = await tableRows(page, 'import-table');
  assert.equal(rows.length, 6);
  const out = JSON.parse(execFileSync(cli(), ['simulate', '--traffic', `replay:file=${path}`, '--limit', '60', '--window', '60s',
    ...rows.flatMap((r) => ['--limiter', r[0]]), '--format', 'json'], { encoding: 'utf8' }));
  const expected = out.results.map((r) => [r.limiter, pct(r.served_share), String(r.busiest_window_max), r.bound == null ? '–' : String(r.bound), pct(r.wrong_admits, 2), pct(r.wrong_rejects, 2)]);
  assert.deepEqual(rows, expected, 'the page and ratelab simulate agree on the same file');
  assert.equal(rows[0][2], '120', 'the fixed window lets the boundary burst through: 2L');
  assert.equal(rows[1][2], '60', 'the sliding log does not');
  // The busiest windows of the raw traffic, and the bucket that would serve 99% of it.
  const busiest = await tableRows(page, 'import-busiest');
  assert.deepEqual(busiest[0].slice(1), ['2026-12-01T12:00:00.472Z', '120', '200%']);
  assert.equal(busiest.length, 5);
  // The bucket that serves 99%: ⌈0.99 × 520⌉ = 515 requests. Refilling one token a second,
  // it admits all 400 steady requests (1.5 s apart, after a minute's refill) and, of the 120
  // that come within 0.972 s, exactly its B (less than one token refills meanwhile): B = 115.
  const burst = Number(await page.getAttribute('[data-testid=import-burst]', 'data-burst'));
  assert.equal(burst, 115);
  // Serving all 520 takes all 120 of the burst.
  await page.fill('[data-testid=import-target]', '100');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=import-burst]').dataset.burst) === 120);
  assert.match(await text(page, 'import-burst'), /^A token bucket refilling at 60 per 60 s needs a capacity of B = 120 to serve 100\.0% of these requests \(it serves 100\.00%: 520 of 520\)\. Its worst window can then reach B \+ L − 1 = 179\.$/);
  // A share outside (0, 100] is refused with what was typed and what is accepted, then cleared.
  await page.fill('[data-testid=import-target]', '100.5');
  await page.waitForSelector('[data-testid=import-error]:not([hidden])');
  assert.equal(await text(page, 'import-error'), "The share to serve '100.5' is not accepted: enter a percentage above 0 and at most 100, like 99");
  await page.fill('[data-testid=import-target]', '100');
  await page.waitForSelector('[data-testid=import-error][hidden]', { state: 'attached' });
  // The lab's own limit re-runs the replay.
  await page.fill('[data-testid=limit]', '30');
  await page.waitForFunction(() => document.querySelector('[data-testid=import-busiest] tbody tr td:last-child').textContent === '400%');

  // Shown in the lab, the main figure replays it like any traffic.
  await act(page, () => page.fill('[data-testid=limit]', '60'));
  await page.click('[data-testid=import-show]');
  await page.waitForFunction(() => document.getElementById('traffic').value === 'file' && /replay:file/.test(document.getElementById('cli').textContent));
  await act(page, () => page.selectOption('[data-testid=algorithm]', 'fixed-window'));
  assert.equal(await text(page, 'worst-window'), '120');
  assert.match(await page.textContent('#cli'), /replay:file=burst-ms\.txt/);
  await act(page, () => page.fill('[data-testid=seed]', '5'));
  await page.waitForFunction(() => location.search.includes('seed=5'));
  assert.doesNotMatch(page.url(), /traffic=/, 'the file is never part of a link');
  assert.deepEqual(problems, []);
});

test("the lab's command line for a file named bob's log.txt runs in a shell and gives the page's numbers", async (t) => {
  // The name has a single quote and a space: the command line must quote it for a POSIX
  // shell (ratelab::text::shell_word quotes it; its tests have /bin/sh read lines back).
  const name = "bob's log.txt";
  const body = burstMs();
  writeFileSync(join(dir, name), body);
  const { page, problems } = await open(t);
  await importFile(page, { name, mimeType: 'text/plain', buffer: Buffer.from(body) });
  await page.click('[data-testid=import-show]');
  await page.waitForFunction(() => document.getElementById('traffic').value === 'file' && /replay:file/.test(document.getElementById('cli').textContent));
  await act(page, () => page.selectOption('[data-testid=algorithm]', 'fixed-window'));
  const line = await page.textContent('#cli');
  assert.ok(line.includes("'replay:file=bob'\\''s log.txt"), line);
  // Run as printed, in the file's folder, by the ratelab binary under test.
  const out = JSON.parse(execFileSync('/bin/sh', ['-c', `ratelab() { "$RATELAB" "$@" --format json; }; ${line}`],
    { cwd: dir, env: { ...process.env, RATELAB: cli() }, encoding: 'utf8' }));
  assert.equal(String(out.results[0].busiest_window_max), await text(page, 'worst-window'));
  assert.equal(await text(page, 'worst-window'), '120');
  assert.deepEqual(problems, []);
});

test('an access log, filtered by client and equal to the command line, and an ISO file', async (t) => {
  const { page, problems } = await open(t);
  const line = (ip, s, status = 200) => `${ip} - - [01/Dec/2026:12:${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')} +0000] "GET /api/items?id=${s} HTTP/1.1" ${status} 512 "-" "curl/8.5"`;
  const log = [];
  // One client sends 3 a second for 50 s at the start of each minute, another one a second.
  for (let s = 0; s < 600; s++) {
    if (s % 60 < 50) for (let k = 0; k < 3; k++) log.push(line('203.0.113.7', s));
    log.push(line('198.51.100.2', s, s % 2 ? 429 : 200));
  }
  const path = join(dir, 'access.log');
  writeFileSync(path, log.join('\n'));
  await importFile(page, { name: 'access.log', mimeType: 'text/plain', buffer: Buffer.from(log.join('\n')) }, { field: 'host', value: '203.0.113.7' });
  assert.match(await text(page, 'import-summary'), /2,100 lines read as an access log, giving 1,500 requests.*600 lines did not match the filter/);
  const rows = await tableRows(page, 'import-table');
  const out = JSON.parse(execFileSync(cli(), ['simulate', '--traffic', `replay:file=${path},client=203.0.113.7`, '--limit', '60', '--window', '60s',
    ...rows.flatMap((r) => ['--limiter', r[0]]), '--format', 'json'], { encoding: 'utf8' }));
  const expected = out.results.map((r) => [r.limiter, pct(r.served_share), String(r.busiest_window_max), r.bound == null ? '–' : String(r.bound), pct(r.wrong_admits, 2), pct(r.wrong_rejects, 2)]);
  assert.deepEqual(rows, expected, 'the page and ratelab simulate agree on the filtered log');
  await importFile(page, { name: 'access.log', mimeType: 'text/plain', buffer: Buffer.from(log.join('\n')) }, { field: 'status', value: '429' });
  assert.match(await text(page, 'import-summary'), /giving 300 requests/);
  const iso = Array.from({ length: 30 }, (_, i) => `2026-12-01T13:00:${String(i).padStart(2, '0')}.250+01:00`).join('\n');
  await importFile(page, { name: 'times.iso', mimeType: 'text/plain', buffer: Buffer.from(iso) });
  assert.match(await text(page, 'import-summary'), /30 lines read as ISO 8601 times, giving 30 requests from 2026-12-01 12:00:00/);
  assert.deepEqual(problems, []);
});

test('malformed lines are counted and the first ones shown with their line numbers', async (t) => {
  const { page, problems } = await open(t);
  const lines = ['1764590400', 'not a time', '1764590401', '', '# a comment', '17645904o2', '1764590403', '<script>alert(1)</script>', 'x1', 'x2', 'x3', '1764590404'];
  await importFile(page, { name: 'mixed.txt', mimeType: 'text/plain', buffer: Buffer.from(lines.join('\n')) });
  assert.match(await text(page, 'import-summary'), /giving 4 requests/);
  const bad = await page.locator('[data-testid=import-malformed] li').allTextContents();
  assert.equal(bad.length, 5);
  assert.match(bad[0], /^line 2: .*“not a time”/);
  assert.match(bad[1], /^line 6: /);
  assert.match(bad[2], /^line 8: .*<script>alert\(1\)<\/script>/, 'shown as text');
  assert.equal(await page.locator('[data-testid=import-malformed] script').count(), 0);
  assert.match(await page.textContent('#import-malformed-text'), /^6 lines could not be read.*the first 5/);
  assert.deepEqual(problems, []);
});

test('empty, compressed, truncated, binary and hopeless files get a clear message and the page stays live', async (t) => {
  const { page, problems } = await open(t);
  const gz = gzipSync(Buffer.from(burstMs()));
  const cases = [
    ['empty.txt', Buffer.alloc(0), /empty/],
    ['blank.txt', Buffer.from('\n\n   \n# only a comment\n'), /empty/],
    ['log.gz', gz, /gzip/],
    ['truncated.gz', gz.subarray(0, 20), /gzip/],
    ['image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]), /binary/],
    ['words.txt', Buffer.from('hello\nworld\n'), /line 1/],
    ['latin1.txt', Buffer.from([0x31, 0x37, 0xe9, 0xff, 0x0a]), /line 1/],
  ];
  for (const [name, buffer, message] of cases) {
    await importFile(page, { name, mimeType: 'application/octet-stream', buffer });
    assert.equal(await page.isVisible('[data-testid=import-error]'), true, name);
    const said = await text(page, 'import-error');
    assert.match(said, message, `${name}: ${said}`);
    assert.match(said, new RegExp(`'${name.replace('.', '\\.')}'`), 'the message names the file');
    // The lab still answers.
    await act(page, () => page.click('[data-testid=flood]'));
    await act(page, () => page.click('[data-testid=honest]'));
  }
  assert.deepEqual(problems, []);
});

test('a file too big for the page is refused before it is read', async (t) => {
  const { page, problems } = await open(t);
  await page.evaluate(() => {
    const file = new File(['1'], 'huge.log');
    Object.defineProperty(file, 'size', { value: 3 * 2 ** 30 });
    const drop = new Event('drop', { cancelable: true });
    Object.defineProperty(drop, 'dataTransfer', { value: { files: [file] } });
    document.getElementById('import-drop').dispatchEvent(drop);
  });
  await page.waitForSelector('[data-testid=import-error]:not([hidden])');
  assert.match(await text(page, 'import-error'), /'huge\.log' is 3\.0 GiB; the page reads files of up to 1 GiB.*ratelab simulate/);
  await act(page, () => page.click('[data-testid=flood]'));
  assert.deepEqual(problems, []);
});

test('a million lines are read off the main thread, with progress', async (t) => {
  const { page, problems } = await open(t);
  const start = Date.UTC(2026, 11, 1) ;
  const lines = new Array(1_000_000);
  for (let i = 0; i < lines.length; i++) lines[i] = String(start + Math.floor(i * 2.7));
  const buffer = Buffer.from(lines.join('\n'));
  assert.ok(buffer.length > 12e6, 'several slices');
  // Count progress reports and the longest gap between frames on the main thread meanwhile.
  await page.evaluate(() => {
    window.progressSeen = new Set();
    new MutationObserver(() => window.progressSeen.add(document.getElementById('import-progress').value))
      .observe(document.getElementById('import-progress'), { attributes: true });
    const p = document.getElementById('import-progress');
    const seen = () => { window.progressSeen.add(p.value); if (!window.stopWatch) requestAnimationFrame(seen); };
    requestAnimationFrame(seen);
  });
  await importFile(page, { name: 'million.txt', mimeType: 'text/plain', buffer });
  await page.evaluate(() => { window.stopWatch = true; });
  assert.match(await text(page, 'import-summary'), /1,000,000 lines read as epoch milliseconds, giving 1,000,000 requests/);
  const seen = await page.evaluate(() => window.progressSeen.size);
  assert.ok(seen >= 3, `${seen} progress values seen`);
  assert.equal((await tableRows(page, 'import-table')).length, 6);
  assert.deepEqual(problems, []);
});
