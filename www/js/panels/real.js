// Real limiters: reports recorded by `ratelab probe` (shipped in probes/, or the reader's own
// file), each shown beside a model's decisions on the same send times.
// Loaded by lazy.js when the section comes near the viewport.
import { $, pct, dark } from '../dom.js';
import { addExport } from '../export.js';
import { loadExtra } from '../modules.js';

const MAX_REPORT_BYTES = 64 << 20;

export function startReal() {
  let view = null;
  let label = '';
  const problem = (message) => {
    const box = $('real-error');
    box.textContent = message;
    box.hidden = !message;
  };
  function show() {
    const s = view.summary();
    const served = (v) => (v == null ? '–' : pct(v));
    const rows = [['The real limiter', s.admitted, served(s.served), s.busiest, s.wrongAdmits, s.wrongRejects]];
    if (s.model) rows.push(['The model', s.modelAdmitted, served(s.modelServed), s.modelBusiest, s.modelWrongAdmits, s.modelWrongRejects]);
    $('real-table').tBodies[0].replaceChildren(...rows.map((row) => {
      const tr = document.createElement('tr');
      row.forEach((text, j) => {
        const cell = document.createElement(j === 0 ? 'th' : 'td');
        if (j === 0) cell.scope = 'row';
        cell.textContent = String(text);
        tr.append(cell);
      });
      return tr;
    }));
    const others = s.other + s.errors + s.timeouts;
    $('real-summary').textContent = `${label}, probing ${s.target}: ${s.sent} requests (${s.offered} first tries) at ${s.limit} per ${s.windowText}, traffic ${s.traffic}. `
      + (s.model ? `The model ${s.model} made the same decision on ${s.agree} of ${s.compared} (${pct(s.agreement ?? 0)}); the real limiter alone admitted ${s.realOnly}, the model alone ${s.modelOnly}. ` : '')
      + (others ? `${others} requests had no admit or reject answer (${s.errors} errors, ${s.timeouts} timeouts, ${s.other} other statuses) and are left out. ` : '')
      + `Sends were at most ${s.latenessP99Ms.toFixed(2)} ms late at the 99th percentile.`;
    $('real-command').textContent = s.command ?? '(not recorded)';
    if (s.model) $('real-model').value = s.model;
    view.drawPlot('plot-real', dark());
    $('fig-real').dataset.ready = 'true';
  }
  async function open(text, name) {
    const extra = await loadExtra();
    try {
      view = new extra.ProbeView(text, name);
      label = name;
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
  const compare = () => {
    if (!view) return;
    try {
      view = view.withModel($('real-model').value);
      problem('');
      show();
    } catch (e) {
      problem(`The model '${$('real-model').value}' is not accepted: ${e.message ?? e}`);
    }
  };
  $('real-compare').addEventListener('click', compare);
  $('real-model').addEventListener('keydown', (e) => { if (e.key === 'Enter') compare(); });
  $('real-file').addEventListener('change', async () => {
    const file = $('real-file').files[0];
    if (!file) return;
    if (file.size > MAX_REPORT_BYTES) {
      problem(`The file '${file.name}' is ${(file.size / 2 ** 20).toFixed(0)} MB: a probe report is at most 64 MB`);
      return;
    }
    await open(await file.text(), file.name);
  });
  addExport($('plot-real'), 'real-limiter', () => async (c) => view.exportPlot(c.width, c.height, dark()));
  recorded($('real-run').value);
  return { redraw: () => view && show() };
}
