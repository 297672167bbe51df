// Your own traffic: a file read in a Web Worker (the tools module), in slices with
// progress, replayed there through every limiter; the lab can then show it like any traffic.
// Loaded by lazy.js when the panel comes near the viewport or a file is chosen. The rules (the
// file's size, the share to serve) and every sentence and cell are Rust's (`import_view`).
import { $ } from '../dom.js';
import { loadExtra, loadTools } from '../modules.js';

export function startImport(lab) {
  // `lab`: { readControls, show(times, label), open(query) } from the main figure: `open` sets
  // its controls from a link's query.
  let worker = null;
  let imported = null;
  let seq = 0;
  let timer = 0;
  let tools = null;
  let chosen = 0;
  const status = $('import-status');
  const progress = $('import-progress');
  const problem = (message) => {
    const box = $('import-error');
    box.textContent = message;
    box.hidden = !message;
  };
  const share = () => tools.importShare($('import-target').value);
  let reading = false;
  // A worker is kept between files; one still reading when another is chosen (or on cancel)
  // is stopped.
  const stop = () => {
    if (reading) { worker?.terminate(); worker = null; }
    reading = false;
    $('import-cancel').disabled = true;
  };

  async function read(file) {
    stop();
    problem('');
    // Another file replaces the last one's results: they go at once, whether this one reads or not.
    imported = null;
    $('import-results').hidden = true;
    $('import-fit').hidden = true;
    $('import-explain').disabled = true;
    if (!file) return;
    const mine = ++chosen;
    try { tools ??= await loadTools(); } catch (e) { problem(String(e?.message ?? e)); return; }
    if (mine !== chosen) return;
    const tooBig = tools.importFileProblem(file.name, file.size);
    if (tooBig) { problem(tooBig); return; }
    let controls;
    let target;
    try { controls = lab.readControls(); target = share(); } catch (e) { problem(String(e?.message ?? e)); return; }
    const started = performance.now();
    worker ??= new Worker('import-worker.js', { type: 'module' });
    reading = true;
    $('import-cancel').disabled = false;
    progress.max = Math.max(1, file.size);
    progress.value = 0;
    status.textContent = `Reading ${file.name}…`;
    worker.onmessage = (e) => {
      const msg = e.data;
      if (msg.type === 'import-progress') {
        progress.value = msg.bytes;
        status.textContent = msg.text;
      } else if (msg.type === 'import-done') {
        reading = false;
        $('import-cancel').disabled = true;
        imported = { summary: msg.summary, times: msg.times, read };
        window.__ratelab.importMs = performance.now() - started;
        status.textContent = tools.importDone(file.name, window.__ratelab.importMs);
        showSummary(msg.summary);
        showReport(msg.report);
      } else if (msg.type === 'fitted') {
        if (msg.seq === fitSeq) showFitted(msg.view);
      } else if (msg.type === 'analyzed') {
        if (msg.seq === seq) { showReport(msg.report); $('import-results').hidden = false; }
      } else if (msg.type === 'panic') {
        stop();
        window.ratelabPanicked(msg.message);
      } else if (msg.type === 'error') {
        if (msg.of === 'import') { reading = false; $('import-cancel').disabled = true; progress.value = 0; status.textContent = ''; }
        if (msg.of === 'fit') fitDone('');
        problem(msg.of === 'import' ? tools.importFailed(file.name, msg.message) : msg.message);
      }
    };
    worker.onerror = (e) => { stop(); worker?.terminate(); worker = null; problem(`Reading the file failed: ${e.message}`); };
    const read = { file: file.name, format: $('import-format').value, field: $('import-field').value, value: $('import-value').value };
    // The worker has the file: it can be fitted, whether its times import or not.
    $('import-explain').disabled = false;
    worker.postMessage({ type: 'import', file, format: read.format, field: read.field, value: read.value, controls, share: target });
  }

  function showSummary(t) {
    $('import-summary').textContent = t.summary;
    $('import-malformed-box').hidden = t.malformed === 0;
    $('import-malformed-text').textContent = t.malformedHeading;
    $('import-malformed').replaceChildren(...t.malformedLines.map((text) => {
      const li = document.createElement('li');
      li.textContent = text;
      return li;
    }));
    $('import-results').hidden = false;
  }

  const cells = (texts, over = false) => {
    const tr = document.createElement('tr');
    texts.forEach((text, j) => {
      const td = document.createElement(j === 0 ? 'th' : 'td');
      if (j === 0) td.scope = 'row';
      td.textContent = text;
      if (j === 2 && over) td.className = 'over';
      tr.append(td);
    });
    return tr;
  };

  function showReport(r) {
    $('import-table').tBodies[0].replaceChildren(...r.rows.map((row) => cells(row.cells, row.over)));
    $('import-busiest').tBodies[0].replaceChildren(...r.busiest.map((row) => cells(row)));
    $('import-burst').textContent = r.burstText;
    $('import-burst').dataset.burst = String(r.burst);
  }

  function reanalyze() {
    if (!imported || !worker) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      let controls;
      let target;
      // A bad limit or share leaves no table of the last settings on show.
      try { controls = lab.readControls(); target = share(); problem(''); } catch (e) { problem(String(e?.message ?? e)); $('import-results').hidden = true; return; }
      worker.postMessage({ type: 'analyze', controls, share: target, seq: ++seq });
    }, 200);
  }

  // "Explain my 429s": the file fitted in the worker (its lines, statuses and all), shown by
  // fit.js, loaded when asked for.
  let fitSeq = 0;
  const fitDone = (text) => { $('import-fit-status').textContent = text; $('import-explain').disabled = false; };
  async function showFitted(view) {
    const { showFit } = await import('./fit.js');
    fitDone('');
    // The lab on the best fit, with the file's times as its traffic when they were read.
    showFit(view, (query) => { lab.open(query); if (imported) $('import-show').click(); });
  }
  $('import-explain').addEventListener('click', () => {
    if (!worker || reading) return;
    problem('');
    $('import-fit').hidden = true;
    $('import-explain').disabled = true;
    $('import-fit-status').textContent = 'Fitting every limiter to your log…';
    worker.postMessage({ type: 'fit', statuses: $('import-statuses').value, perClient: $('import-per-client').checked, seq: ++fitSeq });
  });
  $('import-cancel').addEventListener('click', () => { stop(); imported = null; progress.value = 0; status.textContent = 'Cancelled.'; });
  $('import-target').addEventListener('input', reanalyze);
  $('import-show').addEventListener('click', async () => {
    if (!imported) return;
    const f = { ...imported.read, label: imported.summary.label };
    // Both on-demand modules on this thread get the times too: the mechanism view runs them,
    // the SVG and CSV exports recompute them.
    for (const m of await Promise.all([loadExtra(), tools])) m.setReplay(imported.times, f.file, f.format, f.field, f.value);
    lab.show(imported.times, f);
  });
  return { read, reanalyze };
}
