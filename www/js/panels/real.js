// Real limiters: reports recorded by `ratelab probe` (shipped in probes/, or the reader's own
// file), each shown beside a model's decisions on the same send times. A recorded report is
// shown from its view (probes/NAME.view.json: Rust's sentences, table and packed figure, made
// beforehand), its figure drawn by the on-demand module; a report the reader loads, or another
// model, is read, checked and run by the tools module. Loaded by lazy.js when the section
// comes near the viewport.
import { $, dark, fitCanvas, onRefit } from '../dom.js';
import { addExport } from '../export.js';
import { loadExtra, loadTools } from '../modules.js';

export function startReal() {
  // What is shown: a recorded report's view, or the tools module's view of a report read here.
  let recorded = null;
  let view = null;
  let label = '';
  onRefit(() => (view || recorded) && draw());
  // The report's JSON, for the tools module when the reader acts on a recorded one.
  let report = async () => '';
  const problem = (message) => {
    const box = $('real-error');
    box.textContent = message;
    box.hidden = !message;
  };
  async function show() {
    const s = view ? view.summary(label) : recorded.shown;
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
    fitCanvas($('plot-real'));
    await draw();
    $('fig-real').dataset.ready = 'true';
  }
  async function draw() {
    if (view) view.drawPlot('plot-real', dark());
    else (await loadExtra()).drawPlot('plot-real', recorded.plot.numbers, recorded.plot.text, dark());
  }
  /** The tools module's view of what is shown (which can compare and export). */
  const toolsView = async () => view ?? new (await loadTools()).ProbeView(await report(), label);
  const shown = (what) => what.then(() => problem(''), (e) => problem(String(e?.message ?? e)));

  async function load(name) {
    problem('');
    const get = async (file) => {
      const res = await fetch(`probes/${file}`);
      if (!res.ok) throw new Error(`the recorded run '${name}' did not load (${res.status})`);
      return res;
    };
    const got = await (await get(`${name}.view.json`)).json();
    [recorded, view, label] = [got, null, `${name}.json`];
    report = async () => (await get(`${name}.json`)).text();
    await show();
  }
  $('real-run').addEventListener('change', () => { $('real-model').value = ''; shown(load($('real-run').value)); });
  const compare = () => shown((async () => {
    if (!recorded && !view) return;
    view = (await toolsView()).withModel($('real-model').value);
    await show();
  })());
  $('real-compare').addEventListener('click', compare);
  $('real-model').addEventListener('keydown', (e) => { if (e.key === 'Enter') compare(); });
  $('real-file').addEventListener('change', () => shown((async () => {
    const file = $('real-file').files[0];
    if (!file) return;
    const tools = await loadTools();
    const tooBig = tools.probeFileProblem(file.name, file.size);
    if (tooBig) throw new Error(tooBig);
    const text = await file.text();
    view = new tools.ProbeView(text, file.name);
    label = file.name;
    report = async () => text;
    await show();
  })()));
  addExport($('plot-real'), 'real-limiter', () => async (c) => (await toolsView()).exportPlot(c.width, c.height, dark()));
  shown(load($('real-run').value));
  return { redraw: () => (view || recorded) && draw() };
}
