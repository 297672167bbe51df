// Real limiters: reports recorded by `ratelab probe` (shipped in probes/, or the reader's own
// file), each shown beside a model's decisions on the same send times: by the on-demand
// module as it comes into view, by the tools module once the reader asks for another model or
// saves the figure. Loaded by lazy.js when the section comes near the viewport.
import { $, dark } from '../dom.js';
import { addExport } from '../export.js';
import { loadExtra, loadTools } from '../modules.js';

export function startReal() {
  let view = null;
  let label = '';
  let text = '';
  /** The tools module's view of the same report (which can compare and export). */
  const toolsView = async () => new (await loadTools()).ProbeView(text, label);
  const problem = (message) => {
    const box = $('real-error');
    box.textContent = message;
    box.hidden = !message;
  };
  function show() {
    const s = view.summary(label);
    $('real-table').tBodies[0].replaceChildren(...s.rows.map((row) => {
      const tr = document.createElement('tr');
      row.forEach((text, j) => {
        const cell = document.createElement(j === 0 ? 'th' : 'td');
        if (j === 0) cell.scope = 'row';
        cell.textContent = text;
        tr.append(cell);
      });
      return tr;
    }));
    $('real-summary').textContent = s.text;
    $('real-command').textContent = s.command ?? '(not recorded)';
    if (s.model) $('real-model').value = s.model;
    view.drawPlot('plot-real', dark());
    $('fig-real').dataset.ready = 'true';
  }
  async function open(json, name) {
    const extra = await loadExtra();
    try {
      view = new extra.ProbeView(json, name);
      label = name;
      text = json;
      problem('');
      show();
    } catch (e) {
      problem(String(e.message ?? e));
    }
  }
  async function recorded(name) {
    problem('');
    try {
      const res = await fetch(`probes/${name}.json`);
      if (!res.ok) throw new Error(`the recorded run '${name}' did not load (${res.status})`);
      await open(await res.text(), `${name}.json`);
    } catch (e) {
      problem(String(e.message ?? e));
    }
  }
  $('real-run').addEventListener('change', () => { $('real-model').value = ''; recorded($('real-run').value); });
  const compare = async () => {
    if (!view) return;
    try {
      view = (view.withModel ? view : await toolsView()).withModel($('real-model').value);
      problem('');
      show();
    } catch (e) {
      problem(String(e.message ?? e));
    }
  };
  $('real-compare').addEventListener('click', compare);
  $('real-model').addEventListener('keydown', (e) => { if (e.key === 'Enter') compare(); });
  $('real-file').addEventListener('change', async () => {
    const file = $('real-file').files[0];
    if (!file) return;
    const tooBig = (await loadTools()).probeFileProblem(file.name, file.size);
    if (tooBig) {
      problem(tooBig);
      return;
    }
    await open(await file.text(), file.name);
  });
  addExport($('plot-real'), 'real-limiter', () => async (c) => (view.exportPlot ? view : await toolsView()).exportPlot(c.width, c.height, dark()));
  recorded($('real-run').value);
  return { redraw: () => view && show() };
}
