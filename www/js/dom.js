// Small DOM helpers shared by the page's modules. Nothing here runs on import.

export const $ = (id) => document.getElementById(id);
export const dark = () => window.matchMedia('(prefers-color-scheme: dark)').matches;
export const pct = (x, digits = 1) => `${(100 * x).toFixed(digits)}%`;
/** Scrolls smoothly unless the reader asked for reduced motion. */
export const scrollBehavior = () => (window.matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth');

/** Fills `table`'s body with `rows`; the first row and the first cell of each are headers. */
export function fillTable(table, rows) {
  const body = table.tBodies[0];
  body.replaceChildren(...rows.map((row, i) => {
    const tr = document.createElement('tr');
    row.forEach((text, j) => {
      const header = i === 0 || j === 0;
      const cell = document.createElement(header ? 'th' : 'td');
      // Only a header cell has a scope: a column's above, a row's at its start.
      if (header) cell.scope = i === 0 ? 'col' : 'row';
      cell.textContent = text;
      tr.append(cell);
    });
    return tr;
  }));
}

/** `table` in a box of its own that scrolls sideways when the table is wider than the page
 * (keyboard-reachable, and named for a screen reader). */
export function scrollBox(table, title) {
  const box = document.createElement('div');
  box.className = 'scroll';
  box.tabIndex = 0;
  box.setAttribute('role', 'region');
  box.setAttribute('aria-label', `Table: ${title}`);
  box.append(table);
  return box;
}

/** The presenter view draws charts in larger type: CSS pixels per chart pixel, 1.5 for a chart
 * of its own, 1.2 for a small multiple (a box under 600 px), whose legend needs the room. */
const zoom = (box) => (document.documentElement.classList.contains('presenting') ? (box >= 600 ? 1.5 : 1.2) : 1);

/** Sizes every visible canvas under `root` for its box and the screen: it shows at its box's
 * width (at most 880 px, times the presenter's zoom) and the markup's height (taller when narrow); the
 * chart is laid out at `data-w` × `data-h` chart pixels, and the backing store has
 * devicePixelRatio (1 to 3) screen pixels for each CSS pixel, so text and lines are crisp
 * (`ratelab_charts::canvas` scales the drawing). Returns whether any canvas changed size. */
export function fitCanvases(root) {
  let changed = false;
  for (const c of root.querySelectorAll('canvas')) changed = fitCanvas(c) || changed;
  return changed;
}

/** [`fitCanvases`] for one canvas. */
export function fitCanvas(c) {
  c.dataset.h0 ??= c.getAttribute('height');
  const parent = c.parentElement;
  const style = parent && getComputedStyle(parent);
  const box = parent ? Math.floor(parent.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)) : 0;
  if (!box) return false; // hidden: sized when it shows
  watch(parent);
  const ratio = Math.min(3, Math.max(1, window.devicePixelRatio || 1));
  const z = zoom(box);
  const css = Math.min(Math.round(880 * z), box);
  const w = Math.round(css / z);
  // Narrower than 640 chart px, a chart grows taller (up to 1.3 times), so that its plot keeps
  // room under a legend that wraps; not in an embed, which keeps to its frame's height.
  const grow = document.documentElement.classList.contains('embed') ? 1 : Math.min(1.3, Math.max(1, 1 + (640 - w) / 640));
  const h = Math.round(Number(c.dataset.h0) * grow);
  const size = [w, h, Math.ceil(css * ratio), Math.ceil(h * z * ratio)];
  if (c.dataset.size === size.join()) return false;
  c.dataset.size = size.join();
  [c.dataset.w, c.dataset.h, c.width, c.height] = size;
  c.style.width = `${css}px`;
  return true;
}

/** A canvas's chart size in chart pixels, `[width, height]` (what its export is drawn at). */
export const chartSize = (c) => [Number(c.dataset.w) || c.width, Number(c.dataset.h) || c.height];

// Every chart's box is watched: when one changes width (a turned phone, a resized window, the
// presenter view), the canvases are sized again and, if any changed, every chart is redrawn.
const redrawers = new Set();
let observer = null;
let queued = false;
function refit() {
  queued = false;
  if (fitCanvases(document)) for (const fn of redrawers) fn();
}
export function refitSoon() {
  if (!queued) { queued = true; requestAnimationFrame(refit); }
}
const watched = new WeakSet();
function watch(el) {
  observer ??= new ResizeObserver(refitSoon);
  if (!watched.has(el)) { watched.add(el); observer.observe(el); }
}
/** Calls `fn` whenever the canvases change size, to draw again what they show. */
export const onRefit = (fn) => redrawers.add(fn);

/** Calls `fn` once, when `el` first comes within 200 px of the viewport. */
export function whenNear(el, fn) {
  const observer = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) { observer.disconnect(); fn(); }
  }, { rootMargin: '200px 0px' });
  observer.observe(el);
}

/** After an attack is pressed, scrolls (if need be) so that the badge and the main plot are
 * both in view, the plot's foot at the screen's foot; on a desktop they already are. */
export function keepInView(badge, plot) {
  const top = badge.getBoundingClientRect().top;
  const bottom = plot.getBoundingClientRect().bottom;
  if (top >= 0 && bottom <= innerHeight) return;
  // Down until the plot's foot shows, or up until the badge does, never losing the other.
  const down = bottom - innerHeight + 8;
  const delta = down > 0 ? Math.min(down, top - 8) : Math.max(top - 8, down);
  window.scrollBy({ top: delta, behavior: scrollBehavior() });
}
