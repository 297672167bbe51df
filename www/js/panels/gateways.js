// The gateways section (beyond the essays): a fleet of gateways syncing their counts. Its
// figure is computed by the tools module when the reader first runs it, then again at each
// move of its dials, and drawn by the extra module, as the section figures are.
import { $, dark, fillTable, fitCanvas, onRefit, chartSize } from '../dom.js';
import { addExport } from '../export.js';
import { loadExtra, loadTools } from '../modules.js';

const PLOTS = [['plot-gateways', 'gateways-timeline', 'timeline'], ['plot-gateways-sweep', 'gateways-sweep', 'sweep']];

/** Starts the section: returns `run()`, which computes and draws the figure at the dials'
 * settings (a run asked for while one is under way follows it). */
export function startGateways() {
  // The figure's parts, made here (the page's first load carries only the section's text and
  // dials): the two charts and the table.
  const figure = document.createElement('div');
  figure.id = 'gateways-figure';
  figure.hidden = true;
  figure.innerHTML = `<canvas id="plot-gateways" width="880" height="260" role="img" aria-label="The true count of the trailing minute, what gateway 1 believed, and the room instants"></canvas>
<canvas id="plot-gateways-sweep" width="880" height="260" role="img" aria-label="The fleet's busiest minute against how often the gateways sync, with its bound"></canvas>
<div class="scroll" tabindex="0" role="region" aria-label="Table: each coordination"><table id="gateways-table"><caption>Each coordination; three runs of ten minutes</caption><tbody></tbody></table></div>`;
  $('gateways-status').after(figure);
  const n = $('gateways-n');
  const sync = $('gateways-sync');
  const status = $('gateways-status');
  let shown = null;
  let extra = null;
  let busy = false;
  let again = false;
  const draw = () => {
    for (const [id, , part] of PLOTS) {
      const c = $(id);
      fitCanvas(c);
      extra.drawPlot(id, shown[part].numbers, shown[part].text, dark());
      c.dataset.drawn = 'true';
    }
  };
  async function run() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      let tools;
      [tools, extra] = await Promise.all([loadTools(), loadExtra()]);
      do {
        again = false;
        shown = tools.gatewaysFigure(Number(n.value), Number(sync.value), 1);
        figure.hidden = false;
        draw();
        fillTable($('gateways-table'), shown.table);
        status.textContent = shown.summary;
        $('gateways').dataset.ready = 'true';
      } while (again);
    } catch (e) {
      status.textContent = `The gateways could not run: ${e?.message ?? e}`;
    }
    busy = false;
  }
  // Saved as drawn: the packed chart, exported by the tools module.
  for (const [id, name, part] of PLOTS) {
    addExport($(id), name, () => async (c) => (await loadTools()).exportPacked(shown[part].numbers, shown[part].text, ...chartSize(c), dark()));
  }
  n.addEventListener('input', () => { if (shown) run(); });
  sync.addEventListener('change', () => { if (shown) run(); });
  onRefit(() => { if (shown) draw(); });
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => { if (shown) draw(); });
  return run;
}
