// Compare mode (an action, loaded when first pressed): every algorithm on the lab's
// requests, small multiples and a table, computed and drawn by the tools module.
import { $, dark, pct, fitCanvases } from '../dom.js';
import { addExport, fromView } from '../export.js';
import { loadTools } from '../modules.js';

/** Every algorithm on the figure's requests: small multiples and a table, computed and drawn
 * by the tools module. Only the latest run's are shown. */
let compareSeq = 0;
export async function runCompare(controls) {
  const seq = ++compareSeq;
  const table = $('compare-table'); table.dataset.ready = 'false'; // true once this run's is shown
  const tools = await loadTools();
  if (seq !== compareSeq) return;
  const rows = tools.compare(controls);
  drawMultiples(tools, rows, 'multiples', 'multiple', 240, controls);
  table.tBodies[0].replaceChildren(...rows.map((row) => {
    const tr = document.createElement('tr'), cells = [row.limiter, pct(row.servedShare), String(row.worstWindow), row.bound == null ? '–' : String(row.bound), pct(row.wrongAdmits, 2), pct(row.wrongRejects, 2)];
    cells.forEach((text, j) => {
      const td = document.createElement(j === 0 ? 'th' : 'td');
      if (j === 0) td.scope = 'row';
      td.textContent = text;
      if (j === 2 && row.worstWindow > controls.limit) td.className = 'over';
      tr.append(td);
    });
    return tr;
  }));
  table.dataset.ready = 'true';
}

/** Small multiples: one captioned canvas per compared algorithm in `boxId`, drawn by `tools`. */
function drawMultiples(tools, rows, boxId, prefix, height, controls) {
  const box = $(boxId);
  if (box.children.length !== rows.length) {
    box.replaceChildren(...rows.map((_, i) => {
      const fig = document.createElement('figure');
      const c = document.createElement('canvas');
      c.id = `${prefix}-${i}`;
      c.height = height;
      c.setAttribute('role', 'img');
      // The limiter's name above its chart, as its title (the export buttons go under it).
      fig.append(document.createElement('figcaption'), c);
      return fig;
    }));
    rows.forEach((row, i) => addExport($(`${prefix}-${i}`), `${prefix}-${i}`, () => fromView('compare', box.exportControls, i)));
  }
  fitCanvases(box);
  box.exportControls = controls;
  rows.forEach((row, i) => {
    const fig = box.children[i];
    fig.querySelector('figcaption').textContent = row.limiter;
    fig.querySelector('canvas').setAttribute('aria-label', `${row.limiter}: admitted in the trailing window over time`);
  });
  tools.drawCompare(rows.map((_, i) => `${prefix}-${i}`), dark());
}
