// Export: every plot can be saved as PNG (the canvas itself), as SVG (drawn by the plotters SVG
// backend from the same chart code, in the tools module) and as CSV (the data behind it).
import { dark } from './dom.js';
import { loadTools } from './modules.js';

/** Saves `blob` as a file called `name`. */
export function download(name, blob) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

/** `{svg, csv}` of plot `index` of a view (`main`, `compare`, `section:NAME`), for a canvas. */
export const fromView = (view, params, index) => async (c) => (await loadTools()).exportPlot(view, params, index, c.width, c.height, dark());

/** Puts PNG, SVG and CSV buttons under `canvas` (once); `source()` gives the exporter. */
export function addExport(canvas, name, source) {
  if (!canvas || canvas.nextElementSibling?.classList.contains('export')) return;
  const bar = document.createElement('div');
  bar.className = 'export';
  bar.setAttribute('role', 'group');
  const title = canvas.getAttribute('aria-label') || name;
  bar.setAttribute('aria-label', `Save: ${title}`);
  for (const kind of ['png', 'svg', 'csv']) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = kind.toUpperCase();
    b.dataset.testid = `export-${kind}-${canvas.id}`;
    b.setAttribute('aria-label', `Save ${title} as ${kind.toUpperCase()}`);
    b.addEventListener('click', async () => {
      try {
        if (kind === 'png') {
          canvas.toBlob((blob) => download(`ratelab-${name}.png`, blob), 'image/png');
          return;
        }
        const out = await source()(canvas);
        download(`ratelab-${name}.${kind}`, new Blob([out[kind]], { type: kind === 'svg' ? 'image/svg+xml' : 'text/csv' }));
      } catch (e) {
        b.closest('[id]').dataset.error = String(e.message ?? e);
      }
    });
    bar.append(b);
  }
  canvas.after(bar);
}
