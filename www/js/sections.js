// The essay's section figures: each is computed in the section worker when it scrolls into
// view and drawn here by the on-demand module. Loaded by lazy.js when the essay comes near.
import { $, dark, fillTable, fitCanvas, fitCanvases } from './dom.js';
import { addExport, fromView } from './export.js';
import { loadExtra, sectionData } from './modules.js';

/** Every section figure: `{ el, shown, draw() }` and how it is computed. */
export const sections = [];

/** Section 1: every algorithm on one page-load client (its settings, captions and table are
 * Rust's), as small multiples and a table, computed in the section worker and drawn here. */
async function drawRules() {
  const [{ captions, labels, plots, table }, extra] = await Promise.all([sectionData('rules', {}), loadExtra()]);
  const box = $('rules-multiples');
  if (box.children.length !== plots.length) {
    box.replaceChildren(...captions.map((text, i) => {
      const fig = document.createElement('figure');
      const c = document.createElement('canvas');
      c.id = `rules-${i}`;
      c.height = 240;
      c.setAttribute('role', 'img');
      c.setAttribute('aria-label', labels[i]);
      const caption = document.createElement('figcaption');
      caption.textContent = text;
      fig.append(caption, c);
      return fig;
    }));
    plots.forEach((_, i) => addExport($(`rules-${i}`), `rules-${i}`, () => fromView('rules', {}, i)));
  }
  fitCanvases(box);
  plots.forEach((plot, i) => extra.drawPlot(`rules-${i}`, plot.numbers, plot.text, dark()));
  fillTable($('rules-table'), table);
}

export function startSections() {
  // Each section's settings are Rust's (`Section::params`); the page sends only its dials.
  const none = () => ({});
  const defs = [
    { el: 'fig-rules', custom: drawRules },
    { el: 'fig-boundary', name: 'boundary-table', canvas: '', dials: none, table: 'boundary-table' },
    { el: 'plot-ceiling', name: 'ceiling', canvas: 'plot-ceiling', dials: () => ({ capacity: Number($('ceiling-capacity').value) }) },
    { el: 'plot-honest', name: 'honest', canvas: 'plot-honest', dials: () => ({ traffic: $('honest-traffic').value, load: Number($('honest-load').value) }), table: 'honest-table' },
    { el: 'plot-swc', name: 'swc-offsets', canvas: 'plot-swc', dials: none },
    { el: 'plot-lockout', name: 'lockout', canvas: 'plot-lockout', dials: none },
    { el: 'plot-split', name: 'split', canvas: 'plot-split', dials: none },
    { el: 'plot-herding', name: 'herding', canvas: 'plot-herding', dials: () => ({ jitter: $('herding-jitter').value }), table: 'herding-table' },
    { el: 'herding-mix-table', name: 'herding-mix', canvas: '', dials: () => ({ jitter: $('herding-jitter').value }), table: 'herding-mix-table' },
  ];
  for (const def of defs) {
    const s = { ...def, shown: false };
    // The section figures live in the on-demand module: computed in the section worker, drawn
    // here. While one is computing, further changes (a dragged slider) wait, and only the
    // latest is computed next.
    let busy = null;
    let again = false;
    const drawOnce = async () => {
      try {
        if (s.custom) {
          await s.custom();
        } else {
          const [data, extra] = await Promise.all([sectionData(s.name, s.dials()), loadExtra()]);
          if (s.canvas) { fitCanvas($(s.canvas)); extra.drawPlot(s.canvas, data.plot.numbers, data.plot.text, dark()); }
          if (s.table) fillTable($(s.table), data.table);
          if (s.canvas) addExport($(s.canvas), s.name, () => fromView(`section:${s.name}`, s.dials(), 0));
        }
        $(s.el).dataset.drawn = 'true';
        delete $(s.el).dataset.error;
      } catch (e) {
        $(s.el).dataset.error = String(e.message ?? e);
      }
    };
    s.draw = () => {
      if (busy) { again = true; return busy; }
      busy = (async () => {
        do { again = false; await drawOnce(); } while (again);
        busy = null;
      })();
      return busy;
    };
    sections.push(s);
  }
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      const s = sections.find((x) => $(x.el) === entry.target);
      if (s && entry.isIntersecting && !s.shown) { s.shown = true; s.draw(); }
    }
  }, { rootMargin: '0px' });
  for (const s of sections) observer.observe($(s.el));
  $('ceiling-capacity').addEventListener('input', () => {
    $('ceiling-capacity-out').textContent = $('ceiling-capacity').value;
    sections.find((s) => s.name === 'ceiling').draw();
  });
  for (const id of ['honest-traffic', 'honest-load']) $(id).addEventListener('change', () => sections.find((s) => s.name === 'honest').draw());
  $('herding-jitter').addEventListener('change', () => sections.filter((s) => s.shown && s.name?.startsWith('herding')).forEach((s) => s.draw()));
}

/** Draws again the section figures already shown (after a resize or a theme change; a table
 * alone needs nothing). */
export function redrawSections() {
  for (const s of sections) if (s.shown && (s.canvas || s.custom)) s.draw();
}

/** Draws the section figures not shown yet, those inside `within` if given; resolves when done. */
export function drawUnshown(within = null) {
  return Promise.all(sections.filter((s) => !s.shown && (!within || within.contains($(s.el)))).map((s) => { s.shown = true; return s.draw(); }));
}
