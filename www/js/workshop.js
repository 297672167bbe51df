// Workshop mode: keyboard shortcuts, a presenter view (one section at a time, in large type)
// and a printed handout with every figure drawn.
import { $ } from './dom.js';
import { drawSections } from './lazy.js';

/** `actions`: the lab's letter shortcuts; `chooseAlgorithm(i)`: the digits. Returns
 * `{ show(i), presenting() }` for the essay's "Set that up for me" buttons. */
export function startWorkshop(actions, chooseAlgorithm) {
  const slides = () => [$('lab'), ...document.querySelectorAll('.essay > section')];
  let current = -1;
  const keys = $('keys');
  const toggleKeys = (show = keys.hidden) => {
    keys.hidden = !show;
    $('show-keys').setAttribute('aria-expanded', String(show));
  };
  function show(i) {
    const all = slides();
    current = Math.max(0, Math.min(all.length - 1, i));
    all.forEach((el, j) => mark(el, j === current));
    $('slide-status').textContent = `${current + 1} of ${all.length}: ${all[current].querySelector('h2')?.textContent ?? ''}`;
    $('slide-prev').disabled = current === 0;
    $('slide-next').disabled = current === all.length - 1;
    all[current].scrollIntoView({ block: 'start' });
    // The section's figure is drawn when it is seen; make sure it is.
    drawSections(all[current]);
    window.dispatchEvent(new Event('resize'));
  }
  function present(on) {
    document.documentElement.classList.toggle('presenting', on);
    $('presenter-nav').hidden = !on;
    $('present').setAttribute('aria-pressed', String(on));
    if (on) { show(Math.max(current, 0)); $('slide-next').focus(); } else {
      for (const el of slides()) mark(el, false);
      window.dispatchEvent(new Event('resize'));
    }
  }
  const presenting = () => document.documentElement.classList.contains('presenting');
  $('present').addEventListener('click', () => present(!presenting()));
  $('slide-prev').addEventListener('click', () => show(current - 1));
  $('slide-next').addEventListener('click', () => show(current + 1));
  $('slide-exit').addEventListener('click', () => present(false));
  $('show-keys').addEventListener('click', () => toggleKeys());
  $('print-handout').addEventListener('click', async () => {
    await drawEverything();
    window.print();
  });
  window.addEventListener('beforeprint', () => { drawEverything(); });
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    const typing = t instanceof HTMLElement && (t.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(t.tagName) && t.type !== 'checkbox' && t.type !== 'radio' && t.type !== 'range');
    if (e.key === 'Escape') {
      if (!keys.hidden) toggleKeys(false);
      else if (presenting()) present(false);
      return;
    }
    if (typing) return;
    // Arrow keys move a focused slider or radio; they change slides only when nothing else takes them.
    const takesArrows = t instanceof HTMLInputElement && ['range', 'radio'].includes(t.type);
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    let handled = true;
    if (presenting() && (key === 'PageDown' || (key === 'ArrowRight' && !takesArrows))) show(current + 1);
    else if (presenting() && (key === 'PageUp' || (key === 'ArrowLeft' && !takesArrows))) show(current - 1);
    else if (key === 'p') present(!presenting());
    else if (key === '?') toggleKeys();
    else if (/^[1-9]$/.test(key)) chooseAlgorithm(Number(key) - 1);
    else if (actions[key]) actions[key]();
    else handled = false;
    if (handled) e.preventDefault();
  });
  return { show, presenting };
}

/** Makes `el` the shown slide (`data-testid="slide"`, scaled to fit the screen) or not. */
function mark(el, on) {
  el.classList.toggle('current-slide', on);
  if (on) {
    el.dataset.testidWas ??= el.dataset.testid ?? '';
    el.dataset.testid = 'slide';
    fits.observe(el);
  } else if (el.dataset.testidWas !== undefined) {
    if (el.dataset.testidWas) el.dataset.testid = el.dataset.testidWas; else delete el.dataset.testid;
    delete el.dataset.testidWas;
    fits.unobserve(el);
    el.style.zoom = '';
  }
}

// A slide taller than the screen above the navigation bar (a figure drawn late, a small
// projector) is scaled down to fit, never up: no slide needs scrolling.
// Measured on the next frame, not in the observer's callback: a zoom set there would resize the
// slide within the same frame, which the browser reports as an error.
let fitting = 0;
const fits = new ResizeObserver(() => {
  cancelAnimationFrame(fitting);
  fitting = requestAnimationFrame(fitSlide);
});
function fitSlide() {
  const el = document.querySelector('.current-slide');
  if (!el) return;
  const zoom = Number(el.style.zoom) || 1;
  const natural = el.getBoundingClientRect().height / zoom;
  const room = $('presenter-nav').getBoundingClientRect().top - 16;
  const want = natural > room ? Math.floor((room / natural) * 1000) / 1000 : 1;
  if (Math.abs(want - zoom) > 0.002) el.style.zoom = want === 1 ? '' : String(want);
  el.scrollIntoView({ block: 'start' });
}

/** Draws every section figure and opens folded tables, for printing. */
async function drawEverything() {
  for (const d of document.querySelectorAll('details')) d.open = true;
  $('print-source').textContent = `Printed from ${location.href}, ${new Date().toISOString().slice(0, 10)}. Every figure is a run of the simulator; the command line under the lab reproduces it.`;
  await drawSections();
}
