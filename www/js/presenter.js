// The workshop mode's presenter view (one section at a time, in large type) and printed
// handout (every figure drawn), loaded by workshop.js the first time either is asked for.
import { $ } from './dom.js';
import { drawSections } from './lazy.js';

const slides = () => [$('lab'), ...document.querySelectorAll('.essay > section')];
let current = -1;
export const presenting = () => document.documentElement.classList.contains('presenting');

/** Shows slide `i` (clamped to the slides there are). */
export function show(i) {
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

/** Moves `by` slides on. */
export const step = (by) => show(current + by);

/** Turns the presenter view on or off. */
export function present(on) {
  document.documentElement.classList.toggle('presenting', on);
  $('presenter-nav').hidden = !on;
  $('present').setAttribute('aria-pressed', String(on));
  if (on) { show(Math.max(current, 0)); $('slide-next').focus(); } else {
    for (const el of slides()) mark(el, false);
    window.dispatchEvent(new Event('resize'));
  }
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
    delete el.dataset.fitted;
  }
}

// A slide taller than the screen above the navigation bar (a figure drawn late, a small
// projector) is scaled down to fit, never up: no slide needs scrolling.
// Measured on the next frame, not in the observer's callback: a zoom set there would resize the
// slide within the same frame, which the browser reports as an error.
let fitting = 0;
// `data-fitted` on the slide says its fit has run since its last resize (a long task on the
// page's thread delays that frame).
const fits = new ResizeObserver(() => {
  document.querySelector('.current-slide')?.removeAttribute('data-fitted');
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
  if (Math.abs(want - zoom) > 0.002) {
    el.style.zoom = want === 1 ? '' : String(want);
    fitting = requestAnimationFrame(fitSlide);
  } else el.dataset.fitted = '';
  el.scrollIntoView({ block: 'start' });
}

/** Draws every section figure and opens folded tables, for printing. */
export async function drawEverything() {
  for (const d of document.querySelectorAll('details')) d.open = true;
  $('print-source').textContent = `Printed from ${location.href}, ${new Date().toISOString().slice(0, 10)}. Every figure is a run of the simulator; the command line under the lab reproduces it.`;
  await drawSections();
}
