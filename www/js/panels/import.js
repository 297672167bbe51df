// Your own traffic: a file read in a Web Worker (the on-demand module), in slices with
// progress, replayed there through every limiter; the lab can then show it like any traffic.
// Loaded by lazy.js when the panel comes near the viewport or a file is chosen.
import { $, pct } from '../dom.js';
import { loadExtra } from '../modules.js';

const MAX_FILE_BYTES = 1 << 30;

export function startImport(lab) {
  // `lab`: { readControls, show(times, label) } from the main figure.
  let worker = null;
  let imported = null;
  let seq = 0;
  let timer = 0;
  const status = $('import-status');
  const progress = $('import-progress');
  const problem = (message) => {
    const box = $('import-error');
    box.textContent = message;
    box.hidden = !message;
  };
  const share = () => {
    const text = $('import-target').value.trim();
    const v = Number(text);
    if (!/^\d*\.?\d+$/.test(text) || !(v > 0 && v <= 100)) throw new Error(`The share to serve '${$('import-target').value}' is not accepted: enter a percentage above 0 and at most 100, like 99`);
    return v / 100;
  };
  let reading = false;
  // A worker is kept between files; one still reading when another is chosen (or on cancel)
  // is stopped.
  const stop = () => {
    if (reading) { worker?.terminate(); worker = null; }
    reading = false;
    $('import-cancel').disabled = true;
  };

  function read(file) {
    stop();
    problem('');
    if (!file) return;
    if (file.size > MAX_FILE_BYTES) {
      problem(`The file '${file.name}' is ${(file.size / 2 ** 30).toFixed(1)} GiB; the page reads files of up to 1 GiB. For bigger ones use the command line: ratelab simulate --traffic replay:file=PATH.`);
      return;
    }
    let controls;
    let target;
    try { controls = lab.readControls(); target = share(); } catch (e) { problem(e.message); return; }
    const started = performance.now();
    worker ??= new Worker('import-worker.js');
    reading = true;
    $('import-cancel').disabled = false;
    progress.max = Math.max(1, file.size);
    progress.value = 0;
    status.textContent = `Reading ${file.name}…`;
    worker.onmessage = (e) => {
      const msg = e.data;
      if (msg.type === 'import-progress') {
        progress.value = msg.bytes;
        status.textContent = `Read ${msg.lines.toLocaleString('en')} lines (${Math.round(100 * msg.bytes / msg.total)}%)`;
      } else if (msg.type === 'import-done') {
        reading = false;
        $('import-cancel').disabled = true;
        imported = { name: file.name, summary: msg.summary, times: msg.times, read };
        window.__ratelab.importMs = performance.now() - started;
        status.textContent = `Read ${file.name} in ${(window.__ratelab.importMs / 1000).toFixed(2)} s.`;
        showSummary(imported);
        showReport(msg.report);
      } else if (msg.type === 'analyzed') {
        if (msg.seq === seq) showReport(msg.report);
      } else if (msg.type === 'panic') {
        stop();
        window.ratelabPanicked(msg.message);
      } else if (msg.type === 'error') {
        if (msg.of === 'import') { reading = false; $('import-cancel').disabled = true; progress.value = 0; status.textContent = ''; }
        problem(msg.of === 'import' ? `The file '${file.name}' could not be used: ${msg.message}` : msg.message);
      }
    };
    worker.onerror = (e) => { stop(); worker?.terminate(); worker = null; problem(`Reading the file failed: ${e.message}`); };
    const read = { file: file.name, format: $('import-format').value, field: $('import-field').value, value: $('import-value').value };
    worker.postMessage({ type: 'import', file, format: read.format, field: read.field, value: read.value, controls, share: target });
  }

  function showSummary({ name, summary }) {
    const s = { ...summary, ...summary.counts };
    const n = (x) => x.toLocaleString('en');
    const when = (us) => new Date(us / 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, '').replace('Z', '');
    const parts = [`${name}: ${n(s.lines)} lines read as ${s.formatLabel}, giving ${n(s.count)} requests from ${when(s.firstUs)} to ${when(s.lastUs)} UTC (${s.spanText}).`];
    if (s.blank) parts.push(`${n(s.blank)} blank or comment line${s.blank === 1 ? ' was' : 's were'} skipped.`);
    if (s.filteredOut) parts.push(`${n(s.filteredOut)} line${s.filteredOut === 1 ? '' : 's'} did not match the filter.`);
    if (s.reordered) parts.push('The lines were not in time order; they were sorted.');
    $('import-summary').textContent = parts.join(' ');
    const bad = $('import-malformed-box');
    bad.hidden = s.malformed === 0;
    $('import-malformed-text').textContent = `${n(s.malformed)} line${s.malformed === 1 ? '' : 's'} could not be read and ${s.malformed === 1 ? 'was' : 'were'} left out${s.malformed > s.firstMalformed.length ? `; the first ${s.firstMalformed.length}` : ''}:`;
    $('import-malformed').replaceChildren(...s.firstMalformed.map((b) => {
      const li = document.createElement('li');
      li.textContent = `line ${n(b.line)}: ${b.reason}: “${b.text}”`;
      return li;
    }));
    $('import-results').hidden = false;
  }

  function showReport(r) {
    const body = $('import-table').tBodies[0];
    body.replaceChildren(...r.rows.map((row) => {
      const tr = document.createElement('tr');
      [row.limiter, pct(row.servedShare), String(row.worstWindow), row.bound == null ? '–' : String(row.bound), pct(row.wrongAdmits, 2), pct(row.wrongRejects, 2)].forEach((text, j) => {
        const td = document.createElement(j === 0 ? 'th' : 'td');
        if (j === 0) td.scope = 'row';
        td.textContent = text;
        if (j === 2 && row.worstWindow > r.limit) td.className = 'over';
        tr.append(td);
      });
      return tr;
    }));
    $('import-busiest').tBodies[0].replaceChildren(...r.busiest.map((w, i) => {
      const tr = document.createElement('tr');
      [`${i + 1}`, new Date(w.end / 1000).toISOString(), String(w.count), `${Math.round(100 * w.count / r.limit)}%`].forEach((text, j) => {
        const td = document.createElement(j === 0 ? 'th' : 'td');
        if (j === 0) td.scope = 'row';
        td.textContent = text;
        tr.append(td);
      });
      return tr;
    }));
    const f = r.fit;
    $('import-burst').textContent = `A token bucket refilling at ${r.limit} per ${r.windowS} s needs a capacity of B = ${f.burst} to serve ${(100 * f.share).toFixed(1)}% of these requests (it serves ${pct(f.admitted / f.offered, 2)}: ${f.admitted.toLocaleString('en')} of ${f.offered.toLocaleString('en')}). Its worst window can then reach B + L − 1 = ${f.worstWindow}.`;
    $('import-burst').dataset.burst = String(f.burst);
  }

  function reanalyze() {
    if (!imported || !worker) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      let controls;
      let target;
      try { controls = lab.readControls(); target = share(); problem(''); } catch (e) { problem(e.message); return; }
      worker.postMessage({ type: 'analyze', controls, share: target, seq: ++seq });
    }, 200);
  }

  $('import-cancel').addEventListener('click', () => { stop(); imported = null; progress.value = 0; status.textContent = 'Cancelled.'; });
  $('import-target').addEventListener('input', reanalyze);
  $('import-show').addEventListener('click', async () => {
    if (!imported) return;
    const f = { ...imported.read, label: `${imported.name} (${imported.summary.count.toLocaleString('en')} requests)` };
    // The on-demand module on this thread gets the times too, for the SVG and CSV exports.
    (await loadExtra()).setReplay(imported.times, f.file, f.format, f.field, f.value);
    lab.show(imported.times, f);
  });
  return { read, reanalyze };
}
