// The mechanism view: the playhead over the main figure's run, through its test contract
// (data-testid playhead, play, step-back, step, band-count, state-value).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setup, open, text, act as actOnFigure } from './helpers.mjs';

setup();

/** Opens the page at `path`, brings the view into sight and waits for its first frame. */
async function openView(t, path, options = {}) {
  const { page, problems } = await open(t, { path, ...options });
  await page.locator('#mechanism').scrollIntoViewIfNeeded();
  await page.waitForSelector('#mechanism[data-ready=true]', { timeout: 20000 });
  return { page, problems };
}

/** Does something to the main figure and waits until the mechanism view shows the new run
 * (it reruns on the frame after the figure's, and only while in sight). */
async function act(page, action) {
  await actOnFigure(page, action);
  // Out of sight, the view waits to rerun until it is seen again.
  await page.locator('#mechanism').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.getElementById('mechanism').dataset.runs === document.getElementById('lab').dataset.runs, null, { timeout: 10000 });
}

/** Moves the playhead to decision `i` as the slider would, and reads the frame. */
async function at(page, i) {
  return page.evaluate((i) => {
    const range = document.querySelector('[data-testid=playhead]');
    range.value = String(i);
    range.dispatchEvent(new Event('input'));
    const band = document.querySelector('[data-testid=band-count]');
    const state = document.querySelector('[data-testid=state-value]');
    return { index: Number(range.value), band: Number(band.textContent), state: band.dataset.state, kind: state.dataset.kind, value: Number(state.dataset.value) };
  }, i);
}

const last = (page) => page.getAttribute('[data-testid=playhead]', 'max').then(Number);

test('stepping through the boundary burst: the band goes to L, then 2L and turns red', async (t) => {
  const { page, problems } = await openView(t, '/?algorithm=fixed-window&attack=boundary-burst');
  assert.equal(await last(page), 119, '120 decisions: 0 to 119');
  // It starts at the busiest window.
  assert.equal(Number(await text(page, 'band-count')), 120);
  assert.equal(await page.getAttribute('[data-testid=band-count]', 'data-state'), 'violated');
  // The first tick fills the window to L; each request of the second adds one more.
  for (const [i, band, state] of [[0, 1, 'ok'], [59, 60, 'ok'], [60, 61, 'violated'], [119, 120, 'violated']]) {
    const f = await at(page, i);
    assert.deepEqual([f.band, f.state], [band, state], `decision ${i}`);
    // The fixed window's count: the first window's 60, then the new window counts from 1.
    assert.equal(f.kind, 'count');
    assert.equal(f.value, i < 60 ? i + 1 : i - 59, `the count after decision ${i}`);
  }
  // The step buttons and the keyboard move one decision at a time; Home and End go to the ends.
  await at(page, 59);
  await page.click('[data-testid=step]');
  assert.equal(Number(await page.inputValue('[data-testid=playhead]')), 60);
  assert.equal(Number(await text(page, 'band-count')), 61);
  await page.click('[data-testid=step-back]');
  await page.click('[data-testid=step-back]');
  assert.equal(Number(await page.inputValue('[data-testid=playhead]')), 58);
  await page.focus('[data-testid=playhead]');
  await page.keyboard.press('ArrowRight');
  assert.equal(Number(await page.inputValue('[data-testid=playhead]')), 59);
  await page.keyboard.press('Home');
  assert.equal(Number(await text(page, 'band-count')), 1);
  await page.keyboard.press('End');
  assert.equal(Number(await text(page, 'band-count')), 120);
  assert.deepEqual(problems, []);
});

test('the largest band over every position is the busiest-window read-out, and a bucket shows its tokens', async (t) => {
  const { page, problems } = await openView(t, '/');
  const n = await last(page);
  assert.ok(n > 300, `the opening's steady run has hundreds of decisions (${n + 1})`);
  let most = 0;
  for (let i = 0; i <= n; i += 1) most = Math.max(most, (await at(page, i)).band);
  assert.equal(most, Number(await text(page, 'worst-window')));
  // A token bucket of 60 under the boundary burst: full, then one token spent per request
  // of the first tick (the refill in between is a sixtieth of a token per second).
  await act(page, () => page.selectOption('[data-testid=algorithm]', 'token-bucket'));
  await act(page, () => page.click('[data-testid=boundary-burst]'));
  for (const i of [0, 29, 59]) {
    const f = await at(page, i);
    assert.equal(f.kind, 'tokens');
    assert.ok(Math.abs(f.value - (60 - (i + 1))) < 0.01, `tokens after decision ${i}: ${f.value}`);
  }
  assert.deepEqual(problems, []);
});

test('a sliding log that records rejects is over-full in the retry storm; one that does not never is', async (t) => {
  for (const [record, over] of [['1', true], ['0', false]]) {
    const { page } = await openView(t, `/?algorithm=sliding-log&attack=retry-storm&record-rejects=${record}`);
    const n = await last(page);
    let most = 0;
    // The spike comes at one window and its retries last twenty seconds: the first few
    // thousand decisions hold the log's fullest moments; every 7th is looked at.
    for (let i = 0; i <= Math.min(n, 4000); i += 7) {
      const f = await at(page, i);
      assert.equal(f.kind, 'log');
      most = Math.max(most, f.value);
    }
    assert.equal(most > 60, over, `record-rejects=${record}: the log's most entries ${most}`);
  }
});

test('play moves the playhead and pauses; with reduced motion there is no playback but steps work', async (t) => {
  const { page } = await openView(t, '/?algorithm=fixed-window&attack=flood');
  await at(page, 0);
  await page.click('[data-testid=play]');
  assert.equal(await page.getAttribute('[data-testid=play]', 'aria-pressed'), 'true');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=playhead]').value) > 20, null, { timeout: 5000 });
  await page.click('[data-testid=play]');
  assert.equal(await page.getAttribute('[data-testid=play]', 'aria-pressed'), 'false');
  const paused = Number(await page.inputValue('[data-testid=playhead]'));
  await page.waitForTimeout(300);
  assert.equal(Number(await page.inputValue('[data-testid=playhead]')), paused, 'paused');

  const still = await open(t, { path: '/?algorithm=fixed-window&attack=flood' });
  await still.page.emulateMedia({ reducedMotion: 'reduce' });
  await still.page.locator('#mechanism').scrollIntoViewIfNeeded();
  await still.page.waitForSelector('#mechanism[data-ready=true]');
  assert.equal(await still.page.isDisabled('[data-testid=play]'), true);
  const before = Number(await still.page.inputValue('[data-testid=playhead]'));
  await still.page.click('[data-testid=step]');
  assert.equal(Number(await still.page.inputValue('[data-testid=playhead]')), before + 1);
});
