// The hostile-input catalogue: links and files built to break the page. Each must get a clear
// message naming what was wrong, never run as code, and leave a live page whose lab still
// answers. Long work (the study, an import) must not freeze the page, and a long session of
// dial moves must not grow the wasm's memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { setup, open, text, act } from './helpers.mjs';

setup();

// 8,000 characters: about the longest address static hosts and browsers pass on.
const long = 'x'.repeat(8000);
// [query, the parameter the message must name]
const links = [
  ['limit=NaN', 'limit'], ['limit=-1', 'limit'], ['limit=0', 'limit'], ['limit=1e9', 'limit'],
  ['limit=99999999999999999999999', 'limit'], ['limit=abc', 'limit'], ['limit=', 'limit'],
  ['window=0', 'window'], ['window=3601', 'window'], ['window=-5', 'window'], ['window=1.5', 'window'],
  ['load=NaN', 'load'], ['load=Infinity', 'load'], ['load=-0.5', 'load'], ['load=0', 'load'],
  ['load=3.5', 'load'], ['load=1e308', 'load'], ['seed=-1', 'seed'], ['seed=9007199254740992', 'seed'],
  ['seed=1.5', 'seed'], ['capacity=-3', 'capacity'], ['capacity=1000001', 'capacity'], ['capacity=0', 'capacity'],
  ['algorithm=quantum-bucket', 'algorithm'], ['algorithm=%3Cscript%3Ealert(1)%3C%2Fscript%3E', 'algorithm'],
  ['traffic=file', 'traffic'], ['traffic=%00', 'traffic'], ['attack=ddos', 'attack'],
  ['record-rejects=maybe', 'record-rejects'], ['leaky-mode=tsunami', 'leaky-mode'], ['compare=2', 'compare'],
  ['embed=please', 'embed'], ['foo=bar', 'foo'], [`traffic=${long}`, 'traffic'], ['algorithm=%FF%FE', 'algorithm'],
  ['%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E=1', '<img src=x onerror=alert(1)>'], ['ceiling-capacity=999', 'ceiling-capacity'],
  ['honest-load=0.7', 'honest-load'], ['honest-traffic=bogus', 'honest-traffic'], ['limit=5&limit=6', 'limit'],
  ['load=%E0%A4%A', 'load'], ['window=0x10', 'window'],
  ['algorithm=%3Cimg%20src%3Dx%20onerror%3D%22window.alerted%3D1%22%3E', 'algorithm'],
  ['%3Csvg%20onload%3Dwindow.alerted%3D1%3E=1', '<svg onload=window.alerted=1>'],
];

test(`${links.length} hostile links: each named, none run as code, the page live`, async (t) => {
  assert.ok(links.length >= 40);
  const { page, problems } = await open(t);
  // Whatever a payload runs shows up: `alert(1)` as a dialog, the rest as `window.alerted`.
  const dialogs = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  // The check itself works: code that does run is seen by both.
  await page.evaluate(() => { alert('probe'); window.alerted = 1; });
  assert.deepEqual([dialogs.splice(0), await page.evaluate(() => window.alerted ?? null)], [['probe'], 1]);
  for (const [query, param] of links) {
    await page.goto(`${new URL(page.url()).origin}/?${query}`);
    await page.waitForSelector('#lab[data-ready=true]', { timeout: 20000 });
    const items = await page.locator('[data-testid=url-error] li').allTextContents();
    assert.ok(items.length >= 1, `${query.slice(0, 60)}: a message`);
    assert.ok(items.some((m) => m.includes(param.slice(0, 40))), `${query.slice(0, 60)}: names '${param.slice(0, 40)}': ${items}`);
    assert.ok(items.every((m) => m.length < 1000), 'short messages');
    assert.equal(await page.locator('#url-problems *:not(li)').count(), 0, 'text only, no elements');
    assert.equal(await page.evaluate(() => window.alerted ?? null), null, `${query.slice(0, 60)} ran as code`);
    assert.deepEqual(dialogs, [], `${query.slice(0, 60)} opened a dialog`);
    // The figure ran on the rest of the link, and still answers.
    assert.notEqual(await text(page, 'worst-window'), '–', query.slice(0, 60));
    await act(page, () => page.fill('[data-testid=seed]', '7'));
  }
  assert.deepEqual(problems, []);
});

/** Reads `buffer` as a traffic file in the page and returns the message or summary shown. */
async function readFile(page, name, buffer) {
  await page.setInputFiles('[data-testid=import-file]', []);
  await page.evaluate(() => {
    document.getElementById('import-status').textContent = '';
    document.getElementById('import-error').hidden = true;
  });
  await page.setInputFiles('[data-testid=import-file]', { name, mimeType: 'application/octet-stream', buffer });
  await page.waitForFunction(() => /^Read .* in [\d.]+ s\.$/.test(document.getElementById('import-status').textContent)
    || !document.getElementById('import-error').hidden, null, { timeout: 60000 });
  const error = await page.isVisible('[data-testid=import-error]');
  if (error) return { error, said: await text(page, 'import-error') };
  const bad = await page.isVisible('#import-malformed-box') ? await page.textContent('#import-malformed-box') : '';
  return { error, said: `${await text(page, 'import-summary')} ${bad}` };
}

test('hostile files: each gets a clear message and the page stays live', async (t) => {
  const { page, problems } = await open(t);
  const ok = '1764590400\n1764590401\n';
  const files = [
    ['nul.bin', Buffer.from([0x31, 0, 0x32, 0x0a]), /binary/, true],
    ['zip.zip', Buffer.from('PK\x03\x04rest-of-a-zip', 'latin1'), /compressed|zip/i, true],
    ['truncated.gz', gzipSync(Buffer.from(ok.repeat(1000))).subarray(0, 15), /gzip/, true],
    ['one-huge-line.txt', Buffer.concat([Buffer.from(ok), Buffer.alloc(10 * 1024 * 1024, 0x37), Buffer.from('\n' + ok)]), /64 KiB/, false],
    ['invalid-utf8.txt', Buffer.from([0x31, 0x37, 0x0a, 0xc3, 0x28, 0x0a, ...Buffer.from(ok)]), /UTF-8/, false],
    ['script.txt', Buffer.from(`<script>window.alerted=1</script>\n${ok}`), /line 1/, false],
    ['bom-crlf.txt', Buffer.from(`\ufeff1764590400\r\n1764590401\r\n`), /giving 2 requests/, false],
    ['comments.txt', Buffer.from('# nothing\n# here\n'), /empty/, true],
    ['before-1970.txt', Buffer.from(`-5\n${ok}`), /line 1/, false],
    ['year-10000.iso', Buffer.from('10000-01-01T00:00:00Z\n2026-12-01T00:00:00Z\n'), /line 1/, false],
    ['feb-30.iso', Buffer.from('2026-02-30T00:00:00Z\n2026-12-01T00:00:00Z\n'), /line 1/, false],
  ];
  for (const [name, buffer, expected, isError] of files) {
    const { error, said } = await readFile(page, name, buffer);
    assert.equal(error, isError, `${name}: ${said}`);
    assert.match(said, expected, name);
    if (!isError) {
      assert.match(said, /giving \d+ requests/, name);
      if (name !== 'bom-crlf.txt') assert.match(said, /line \d+: /, `${name}: the bad line is shown with its number`);
    }
    assert.equal(await page.locator('#import-malformed script, #import-summary script').count(), 0);
    await act(page, () => page.click('[data-testid=flood]'));
  }
  assert.equal(await page.evaluate(() => window.alerted ?? null), null);
  assert.deepEqual(problems, []);
});

/** Starts recording the page's long tasks: main-thread work of 50 ms or more, which is what
 * holds a frame back (frame gaps alone also count time the machine's cores were busy with the
 * workers). */
const watchFrames = (page) => page.evaluate(() => {
  window.longTasks = [];
  window.taskObserver?.disconnect();
  window.taskObserver = new PerformanceObserver((list) => { for (const e of list.getEntries()) window.longTasks.push(e.duration); });
  window.taskObserver.observe({ type: 'longtask' });
});
const longestFrame = (page) => page.evaluate(() => {
  window.taskObserver.disconnect();
  return Math.max(0, ...window.longTasks);
});

test('the section figures are computed off the page\'s thread: dragging the bucket-capacity slider makes no long task', async (t) => {
  const { page, problems } = await open(t);
  await page.locator('#ceiling').scrollIntoViewIfNeeded();
  await page.waitForSelector('#plot-ceiling[data-drawn=true]', { timeout: 20000 });
  await page.waitForTimeout(300);
  await watchFrames(page);
  const slider = page.locator('#ceiling-capacity');
  await slider.focus();
  // Twenty steps, as fast as the keyboard repeats: each asks for another figure of about 25
  // token-bucket simulations; the page's thread only draws what comes back.
  for (let i = 0; i < 20; i++) await page.keyboard.press('ArrowRight');
  const last = await slider.inputValue();
  await page.waitForFunction((v) => document.getElementById('ceiling-capacity-out').textContent === v, last);
  await page.waitForTimeout(1500);
  const longest = await longestFrame(page);
  t.diagnostic(`longest main-thread task while dragging: ${longest.toFixed(1)} ms`);
  // Margin: the Long Tasks API reports only tasks of 50 ms or more, so this asserts there was
  // none. The page's thread only draws what the section worker sends back (a chart: a few ms);
  // the 50 ms is the frame budget a reader notices. Wall time, so the test needs the page's
  // thread to get a core: CI runs nothing beside it (with other builds loading this 2-core
  // machine to a load average of 5 to 7, tasks were stretched to 55 and 133 ms).
  assert.ok(longest < 50, `longest main-thread task while dragging: ${longest.toFixed(1)} ms`);
  // The figure's data (its CSV, computed from the same controls) has the last capacity's row.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export-csv-plot-ceiling]')]);
  const csv = (await import('node:fs')).readFileSync(await download.path(), 'utf8');
  assert.match(csv, new RegExp(`,${last},`), `capacity ${last} in the figure's data`);
  assert.deepEqual(problems, []);
});

test('no main-thread task reaches 50 ms while a file is imported or the study runs', async (t) => {
  // One study worker, so that on this 2-core machine the page's thread has a core of its own
  // and what is measured is the page's own work, not time it waited for a core.
  const { page, problems } = await open(t, { workers: 1 });
  // The file is made in the page first (handing a file over through the test driver is itself
  // a long task), then dropped on the panel while the frames are watched.
  await page.evaluate(() => {
    const lines = Array.from({ length: 400_000 }, (_, i) => String(1764590400000 + i * 3));
    window.bigFile = new File([lines.join('\n')], 'big.txt');
  });
  await page.locator('#your-traffic').scrollIntoViewIfNeeded();
  await page.waitForTimeout(500);
  // The lines the test built are its own garbage: collected now, not while the page is timed.
  await page.evaluate(() => window.gc());
  await watchFrames(page);
  await page.evaluate(() => {
    const drop = new Event('drop', { cancelable: true });
    Object.defineProperty(drop, 'dataTransfer', { value: { files: [window.bigFile] } });
    document.getElementById('import-drop').dispatchEvent(drop);
  });
  await page.waitForFunction(() => /^Read big\.txt in/.test(document.getElementById('import-status').textContent), null, { timeout: 60000 });
  const importFrame = await longestFrame(page);
  // The section figures on the way to the study are computed first: only the study is timed.
  for (const id of ['plot-ceiling', 'plot-honest', 'plot-swc', 'plot-lockout', 'plot-split', 'plot-herding']) {
    await page.locator(`#${id}`).scrollIntoViewIfNeeded();
    await page.waitForSelector(`#${id}[data-drawn=true]`, { timeout: 20000 });
  }
  await page.locator('#real').scrollIntoViewIfNeeded();
  await page.waitForSelector('#fig-real[data-ready=true]', { timeout: 20000 });
  await page.locator('#study').scrollIntoViewIfNeeded();
  await page.waitForTimeout(500);
  await page.evaluate(() => { window.bigFile = null; window.gc(); });
  await watchFrames(page);
  await page.click('[data-testid=run-study]');
  await page.waitForSelector('[data-testid=study-done]', { state: 'attached', timeout: 120000 });
  const studyFrame = await longestFrame(page);
  const [renderMs, reproMs] = await page.evaluate(() => window.__ratelab.finishMs);
  t.diagnostic(`the study's last steps: longest step of the figures and tables ${renderMs.toFixed(1)} ms, reproduction report ${reproMs.toFixed(1)} ms`);
  t.diagnostic(`longest main-thread task: import ${importFrame.toFixed(1)} ms, study ${studyFrame.toFixed(1)} ms`);
  // Margin, as above: no task of 50 ms or more. The page's largest tasks here are the study's
  // render steps, each its own task: assembling the results (the first time 10-15 ms, most of
  // it V8 compiling the tools module's code on first call), one plot (drawn by the extra
  // module, whose code the section figures warmed: under 7 ms), or the tables; the last ones
  // are printed above as diagnostics. The reproduction report takes under 5 ms, and the
  // import's progress updates under a millisecond. Traced over 12 quiet runs, the longest task
  // of any kind was 20.7 ms. Wall time: one study worker leaves the page's thread a core of
  // this 2-core machine, and CI runs nothing else beside it. (When each plot was drawn by the
  // tools module's own cold code, with the assembly inside the worker's message, 15 runs
  // reached 33 ms and a CI run 50.0 ms; when every plot and table was redrawn in one task
  // after each job, 5 runs in 14 made a task of 50-97 ms.)
  assert.ok(importFrame < 50, `longest main-thread task during the import: ${importFrame.toFixed(1)} ms`);
  assert.ok(studyFrame < 50, `longest main-thread task during the study: ${studyFrame.toFixed(1)} ms`);
  assert.deepEqual(problems, []);
});

test('a long session of dial moves and re-runs keeps the wasm memory bounded', async (t) => {
  const { page, problems } = await open(t);
  // One cycle visits every algorithm under every attack, with compare mode off and on and the
  // dial moved at each; the first cycle sets every buffer's high-water mark, and ten more
  // (about 500 re-runs, as many as a long session of dragging makes) must not add to it.
  const runs = () => page.evaluate(() => window.__ratelab.runs);
  const act = async (fn, arg) => {
    const n = await runs();
    await page.evaluate(fn, arg);
    await page.waitForFunction((m) => window.__ratelab.runs > m, n, { timeout: 10000 });
  };
  const cycle = async (c) => {
    for (let a = 0; a < 6; a++) {
      for (const attack of ['honest', 'boundary-burst', 'flood', 'retry-storm']) {
        await act(([i, id]) => {
          const alg = document.getElementById('algorithm');
          alg.selectedIndex = i;
          alg.dispatchEvent(new Event('change'));
          document.getElementById(id).click();
        }, [a, attack]);
        await act((k) => {
          const cap = document.getElementById('capacity');
          cap.value = String(5 + (k % 100));
          cap.dispatchEvent(new Event('input'));
          document.getElementById('compare').click();
        }, c * 7 + a);
      }
    }
  };
  await cycle(0);
  const warm = await page.evaluate(() => window.wasmBindings.memoryBytes());
  const before = await runs();
  for (let c = 1; c <= 10; c++) await cycle(c);
  const end = await page.evaluate(() => window.wasmBindings.memoryBytes());
  const done = (await runs()) - before;
  assert.ok(done >= 400, `${done} re-runs measured`);
  t.diagnostic(`wasm memory ${warm} bytes after the first cycle, ${end} after ${done} more re-runs`);
  // Bound: no growth beyond 1 MiB after the first cycle.
  assert.ok(end - warm <= 1024 * 1024, `memory grew from ${warm} to ${end} bytes over ${done} re-runs`);
  assert.equal(await page.locator('[data-testid=panic-banner]').count(), 0);
  assert.deepEqual(problems, []);
});
