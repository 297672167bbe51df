// Export: every plot can be saved as SVG (drawn by the plotters SVG backend from the same chart
// code, in the tools module), as PNG (that SVG drawn at twice its size, whatever the screen)
// and as CSV (the data behind it).
import { dark, chartSize } from './dom.js';
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
export const fromView = (view, params, index) => async (c) => (await loadTools()).exportPlot(view, params, index, ...chartSize(c), dark());

/** The SVG `svg` of a `w` × `h` chart as a PNG of twice that size. */
async function png(svg, w, h) {
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  try {
    const img = new Image(w, h);
    img.src = url;
    await img.decode();
    const c = document.createElement('canvas');
    [c.width, c.height] = [2 * w, 2 * h];
    c.getContext('2d').drawImage(img, 0, 0, 2 * w, 2 * h);
    return await new Promise((resolve, reject) => c.toBlob((b) => (b ? resolve(b) : reject(new Error('the PNG could not be made'))), 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** Puts PNG, SVG and CSV buttons under `canvas` (once); `source()` gives the exporter. */
export function addExport(canvas, name, source) {
  if (!canvas || canvas.dataset.exported) return;
  canvas.dataset.exported = 'true';
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
        const out = await source()(canvas);
        if (kind === 'png') {
          download(`ratelab-${name}.png`, await png(out.svg, ...chartSize(canvas)));
          return;
        }
        download(`ratelab-${name}.${kind}`, new Blob([out[kind]], { type: kind === 'svg' ? 'image/svg+xml' : 'text/csv' }));
      } catch (e) {
        b.closest('[id]').dataset.error = String(e.message ?? e);
      }
    });
    bar.append(b);
  }
  canvas.after(...[describe(canvas)].filter(Boolean), bar);
}

/** The chart's caption, tied to it by aria-describedby: its figure's own, or a visible line
 * saying what it shows and where its numbers are (the CSV under it), its text alternative. */
function describe(canvas) {
  const own = canvas.closest('figure')?.querySelector('figcaption');
  const caption = own ?? document.createElement('p');
  caption.id ||= `${canvas.id}-caption`;
  canvas.setAttribute('aria-describedby', caption.id);
  if (own) return null;
  caption.className = 'chart-caption';
  caption.textContent = `${canvas.getAttribute('aria-label')}. Its numbers: the CSV below.`;
  return caption;
}
