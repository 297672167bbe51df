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

/** Fits every canvas under `root` to its box's width, between 280 and 880 px. */
export function fitCanvases(root) {
  for (const c of root.querySelectorAll('canvas')) {
    const w = Math.max(280, Math.min(880, Math.floor(c.parentElement.clientWidth)));
    if (c.width !== w) c.width = w;
  }
}

/** Calls `fn` once, when `el` first comes within 200 px of the viewport. */
export function whenNear(el, fn) {
  const observer = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) { observer.disconnect(); fn(); }
  }, { rootMargin: '200px 0px' });
  observer.observe(el);
}
