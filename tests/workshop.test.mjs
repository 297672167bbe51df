// Workshop mode, end to end: keyboard shortcuts drive the lab, the presenter view shows one
// section at a time, and the printed handout carries every figure and no controls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setup, open, text, act } from './helpers.mjs';

setup();

test('keyboard shortcuts run the main actions, and never while typing', async (t) => {
  const { page, problems } = await open(t);
  await page.locator('h1').click();
  await act(page, () => page.keyboard.press('1'));
  assert.equal(await page.inputValue('[data-testid=algorithm]'), 'fixed-window');
  await act(page, () => page.keyboard.press('f'));
  assert.equal(await page.getAttribute('[data-testid=flood]', 'aria-pressed'), 'true');
  assert.equal(await text(page, 'worst-window'), '120', 'a flood on a fixed window of 60 reaches 2L');
  await act(page, () => page.keyboard.press('c'));
  assert.equal(await page.getAttribute('[data-testid=compare]', 'aria-pressed'), 'true');
  await act(page, () => page.keyboard.press('4'));
  await act(page, () => page.keyboard.press(']'));
  assert.equal(await page.inputValue('[data-testid=capacity]'), '61');
  await act(page, () => page.keyboard.press('h'));
  assert.equal(await page.getAttribute('[data-testid=honest]', 'aria-pressed'), 'true');
  const seed = await page.inputValue('[data-testid=seed]');
  await act(page, () => page.keyboard.press('s'));
  assert.notEqual(await page.inputValue('[data-testid=seed]'), seed);
  // Typing in a field is typing: the keys go into the field, no attack starts and the
  // algorithm stays.
  await page.fill('[data-testid=load]', '');
  await page.focus('[data-testid=load]');
  await page.keyboard.type('0.5f2');
  assert.equal(await page.inputValue('[data-testid=load]'), '0.52');
  assert.equal(await page.getAttribute('[data-testid=flood]', 'aria-pressed'), 'false');
  assert.equal(await page.inputValue('[data-testid=algorithm]'), 'token-bucket');
  // '?' lists the shortcuts; Escape closes the list.
  await page.locator('h1').click();
  await page.keyboard.press('?');
  assert.equal(await page.isVisible('[data-testid=keys]'), true);
  assert.equal(await page.getAttribute('[data-testid=show-keys]', 'aria-expanded'), 'true');
  await page.keyboard.press('Escape');
  assert.equal(await page.isVisible('[data-testid=keys]'), false);
  assert.deepEqual(problems, []);
});

test('the presenter view shows one section at a time, in large type, with next and previous', async (t) => {
  const { page, problems } = await open(t);
  const baseFont = await page.evaluate(() => parseFloat(getComputedStyle(document.body).fontSize));
  await page.click('[data-testid=present]');
  // The presenter's code loads on this first use.
  await page.waitForSelector('[data-testid=slide]');
  const visible = () => page.evaluate(() => [document.getElementById('lab'), ...document.querySelectorAll('.essay > section')]
    .filter((el) => getComputedStyle(el).display !== 'none').map((el) => el.id));
  assert.deepEqual(await visible(), ['lab']);
  assert.match(await text(page, 'slide-status'), /^1 of 14: The lab/);
  assert.ok(await page.evaluate(() => parseFloat(getComputedStyle(document.body).fontSize)) >= baseFont * 1.3, 'large type');
  assert.equal(await page.isDisabled('[data-testid=slide-prev]'), true);
  await page.click('[data-testid=slide-next]');
  assert.deepEqual(await visible(), ['rules']);
  await page.waitForSelector('#fig-rules[data-drawn=true]');
  await page.locator('#rules-title').click();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('PageDown');
  assert.deepEqual(await visible(), ['ceiling']);
  await page.waitForSelector('#plot-ceiling[data-drawn=true]', { timeout: 20000 });
  await page.keyboard.press('ArrowLeft');
  assert.deepEqual(await visible(), ['boundary']);
  assert.match(await text(page, 'slide-status'), /^3 of 14: 2\. The boundary burst/);
  // "Set that up for me" sets the lab and goes to its slide.
  await page.click('#boundary [data-goto]');
  assert.deepEqual(await visible(), ['lab']);
  await page.keyboard.press('Escape');
  assert.equal((await visible()).length, 14, 'every section is back');
  assert.equal(await page.isVisible('[data-testid=slide-next]'), false);
  assert.deepEqual(problems, []);
});

test('the printed handout has every figure drawn and no controls', async (t) => {
  const { page, problems } = await open(t);
  await page.evaluate(() => { window.print = () => { window.printed = true; }; });
  await page.click('[data-testid=print-handout]');
  await page.waitForFunction(() => window.printed === true);
  const drawn = await page.evaluate(() => ['fig-rules', 'fig-boundary', 'plot-ceiling', 'plot-honest', 'plot-swc', 'plot-lockout', 'plot-split', 'plot-herding', 'plot-gateways']
    .filter((id) => document.getElementById(id).dataset.drawn !== 'true'));
  assert.deepEqual(drawn, [], 'every section figure was drawn before printing');
  await page.emulateMedia({ media: 'print' });
  const shown = await page.evaluate(() => Object.fromEntries(['.controls', '.actions', '.export', '.workshop', '.share', '#plot-window', '#plot-ceiling', '#print-source']
    .map((sel) => [sel, getComputedStyle(document.querySelector(sel)).display])));
  for (const sel of ['.controls', '.actions', '.export', '.workshop', '.share']) assert.equal(shown[sel], 'none', `${sel} is not printed`);
  for (const sel of ['#plot-window', '#plot-ceiling', '#print-source']) assert.notEqual(shown[sel], 'none', `${sel} is printed`);
  assert.match(await page.textContent('#print-source'), /Printed from http/);
  const pdf = await page.pdf({ format: 'A4' });
  const pages = (pdf.toString('latin1').match(/\/Type\s*\/Page[^s]/g) ?? []).length;
  assert.ok(pages >= 4, `${pages} pages`);
  assert.deepEqual(problems, []);
});

test('every presenter slide fits a 1280×720 and a 1920×1080 screen, alone, with its charts in projector type', async (t) => {
  for (const viewport of [{ width: 1280, height: 720 }, { width: 1920, height: 1080 }]) {
    const { page, problems } = await open(t, { viewport });
    await page.click('[data-testid=present]');
    for (let i = 0; ; i++) {
      // The slide's figure is drawn (or has nothing to draw), and its fit settled.
      await page.waitForFunction(() => {
        const s = document.querySelector('[data-testid=slide]');
        return s && [...s.querySelectorAll('canvas')].every((c) => c.dataset.drawn === 'true' || c.closest('[data-drawn=true], [data-ready=true], #lab'));
      }, null, { timeout: 20000 });
      // Its fit has run since its last resize (`data-fitted`; a long task on the page's thread
      // delays that frame) and the slide has stayed the same over four polls 100 ms apart (a
      // section can still grow after its first fit: the quiz's questions come in after it is
      // shown). A fixed wait measured a slide before its fit when other test files ran beside
      // this one.
      await page.waitForFunction(() => {
        const s = document.querySelector('[data-testid=slide]');
        const r = s.getBoundingClientRect();
        const key = `${s.id} ${r.top} ${r.bottom} ${s.style.zoom} ${s.dataset.fitted}`;
        window.__fitSame = window.__fitKey === key ? window.__fitSame + 1 : 0;
        window.__fitKey = key;
        return s.dataset.fitted !== undefined && window.__fitSame >= 3;
      }, null, { polling: 100, timeout: 20000 });
      const m = await page.evaluate(() => {
        const slides = [...document.querySelectorAll('[data-testid=slide]')];
        const s = slides[0];
        const r = s.getBoundingClientRect();
        const shown = (el) => el.getClientRects().length > 0;
        const others = [document.getElementById('lab'), ...document.querySelectorAll('.essay > section'), document.getElementById('your-traffic'), document.querySelector('.intro'), document.querySelector('footer')]
          .filter((el) => el && el !== s && shown(el)).map((el) => el.id || el.className);
        // CSS px per chart px, and whether the chart is a small multiple (drawn at 1.2).
        const charts = [...s.querySelectorAll('canvas')].filter(shown).map((c) => [c.getBoundingClientRect().width / Number(c.dataset.w) / (Number(s.style.zoom) || 1), !!c.closest('.multiples')]);
        return { count: slides.length, id: s.id, top: r.top, bottom: r.bottom, nav: document.getElementById('presenter-nav').getBoundingClientRect().top, others, charts, status: document.getElementById('slide-status').textContent };
      });
      const where = `${viewport.width}×${viewport.height}, ${m.status}`;
      assert.equal(m.count, 1, `${where}: one slide`);
      assert.ok(m.top >= -1 && m.bottom <= m.nav + 1, `${where}: the slide (${Math.round(m.top)} to ${Math.round(m.bottom)} px) is on screen above the navigation (${Math.round(m.nav)} px)`);
      assert.deepEqual(m.others, [], `${where}: nothing else shows`);
      for (const [k, small] of m.charts) assert.ok(k >= (small ? 1.15 : 1.45), `${where}: a chart drawn at ${k.toFixed(2)} CSS px per chart px, not projector type`);
      if (await page.isDisabled('[data-testid=slide-next]')) { assert.equal(i, 13, 'fourteen slides'); break; }
      await page.click('[data-testid=slide-next]');
    }
    assert.deepEqual(problems, []);
  }
});
