// The page's panels that are not needed to draw the first figure: the reader's own traffic,
// the whole study and the recall quiz. The page loads this module when one of them is first
// used or scrolls into view (see `loadPanels` in app.js), which keeps the first load small.
import { $, pct, dark, loadExtra, download, addExport, fillTable } from './app.js';

// Bring your own traffic: a file read in a Web Worker (the on-demand module), in slices with
// progress, replayed there through every limiter; the lab can then show it like any traffic.
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

  function showSummary({ name, summary: s }) {
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


// The whole study, in Web Workers: one wasm instance per worker, results collected here.
export function startStudy() {
  const button = $('run-study');
  const cancel = $('cancel-study');
  const progress = $('study-progress');
  const status = $('study-status');
  let workers = [];
  // The study's figures and tables are drawn while it runs, as results come in, and again at
  // the end. Each plot is drawn in a task of its own and the tables in another, so that no
  // step holds the page's thread for long; and at most one such render runs at a time, a
  // quarter of a second apart, so that they leave the page's thread mostly idle.
  let rendering = null;
  let lastRender = 0;
  let generation = 0;
  const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

  // Draws the results so far, step by step; returns the longest step in ms. Stops early if
  // another study started or this one was stopped (`gen` is no longer current).
  async function render(study, gen) {
    let longest = 0;
    const box = $('study-plots');
    for (const [id, title] of study.plots()) {
      await nextTask();
      if (gen !== generation) return longest;
      const t0 = performance.now();
      let c = $(`study-plot-${id}`);
      if (!c) {
        c = document.createElement('canvas');
        c.id = `study-plot-${id}`;
        c.width = Math.max(280, Math.min(880, box.clientWidth || 880));
        c.height = 260;
        c.setAttribute('role', 'img');
        c.setAttribute('aria-label', title);
        box.append(c);
        addExport(c, id, () => async (cv) => study.exportPlot(id, cv.width, cv.height, dark()));
      }
      study.drawPlot(id, c.id, dark());
      c.dataset.drawn = 'true';
      longest = Math.max(longest, performance.now() - t0);
    }
    await nextTask();
    if (gen !== generation) return longest;
    const t0 = performance.now();
    const tables = study.tables();
    $('study-tables').replaceChildren(...tables.map((t) => {
      const table = document.createElement('table');
      table.dataset.table = t.id;
      const caption = document.createElement('caption');
      caption.textContent = t.title;
      table.append(caption);
      const body = document.createElement('tbody');
      table.append(body);
      fillTable(table, [t.header, ...t.rows]);
      const bar = document.createElement('div');
      bar.className = 'export';
      bar.setAttribute('role', 'group');
      bar.setAttribute('aria-label', `Save the table: ${t.title}`);
      for (const [kind, ext, type] of [['CSV', 'csv', 'text/csv'], ['Markdown', 'md', 'text/markdown']]) {
        const b = document.createElement('button');
        b.type = 'button';
        b.textContent = kind;
        b.dataset.testid = `export-${ext}-table-${t.id}`;
        b.setAttribute('aria-label', `Save the table ${t.title} as ${kind}`);
        b.addEventListener('click', () => download(`ratelab-study-${t.id}.${ext}`, new Blob([ext === 'csv' ? study.tableCsv(t.id) : study.tableMarkdown(t.id)], { type })));
        bar.append(b);
      }
      if (t.rows.length <= 25) {
        const wrap = document.createElement('div');
        wrap.append(table, bar);
        return wrap;
      }
      // Long tables (the 51 flood offsets) fold away behind their title.
      const fold = document.createElement('details');
      const summary = document.createElement('summary');
      summary.textContent = t.title;
      fold.append(summary, table, bar);
      return fold;
    }));
    return Math.max(longest, performance.now() - t0);
  }

  function stop(message) {
    generation++;
    for (const w of workers) w.terminate();
    workers = [];
    button.disabled = false;
    cancel.disabled = true;
    status.textContent = message;
  }

  cancel.addEventListener('click', () => stop('Cancelled.'));
  return async () => {
    const full = $('study-full').checked;
    const size = full ? { runs: 20, minutes: 2000, seed: 1 } : { runs: 5, minutes: 200, seed: 1 };
    size.honestOnly = $('study-honest-only').checked;
    button.disabled = true;
    let Study;
    try {
      ({ StudyResults: Study } = await loadExtra());
    } catch (e) {
      stop(`The study could not start: ${e.message}`);
      return;
    }
    const study = new Study(size.runs, size.minutes, size.seed, size.honestOnly);
    const gen = ++generation;
    const total = study.jobs();
    progress.max = total;
    progress.value = 0;
    $('study-done')?.remove();
    $('study-plots').replaceChildren();
    $('study-tables').replaceChildren();
    $('study-repro').hidden = true;
    button.disabled = true;
    cancel.disabled = false;
    status.textContent = `0 of ${total} jobs`;
    const started = performance.now();
    let computeMs = 0;
    let next = 0;
    const count = Math.max(1, Math.min(navigator.hardwareConcurrency || 2, 8));
    const give = (w) => { if (next < total) w.postMessage({ type: 'job', index: next++ }); };
    workers = Array.from({ length: count }, () => {
      const w = new Worker('study-worker.js');
      w.onmessage = (e) => {
        const msg = e.data;
        if (msg.type === 'ready') { give(w); return; }
        if (msg.type === 'panic') { stop('A worker failed.'); window.ratelabPanicked(msg.message); return; }
        if (msg.type === 'error') { stop(`A worker failed: ${msg.message}`); return; }
        study.addResult(msg.index, msg.result);
        computeMs += msg.ms;
        // Per-job simulation time, for comparing wasm with native job by job.
        (window.__ratelab.jobMs ??= [])[msg.index] = msg.ms;
        const done = study.done();
        progress.value = done;
        status.textContent = `${done} of ${total} jobs`;
        if (done === total) {
          const ms = Math.round(performance.now() - started);
          finish(ms);
          return;
        }
        give(w);
        if (!rendering && performance.now() - lastRender > 250) {
          lastRender = performance.now();
          rendering = render(study, gen).finally(() => { rendering = null; });
        }
      };
      w.onerror = (e) => stop(`A worker failed: ${e.message}`);
      w.postMessage({ type: 'init', ...size });
      return w;
    });
    // The last steps, after any render still under way: the figures and tables, step by
    // step, then the reproduction report in a task of its own.
    async function finish(ms) {
      await rendering;
      const renderMs = await render(study, gen);
      if (gen !== generation) return;
      await nextTask();
      if (gen !== generation) return;
      const t0 = performance.now();
      $('study-repro-text').textContent = study.reproduction();
      $('study-repro').hidden = false;
      // How long each last step held the page's thread, for the long-task test's diagnostics.
      window.__ratelab.finishMs = [renderMs, performance.now() - t0];
      stop(`Done in ${(ms / 1000).toFixed(1)} s with ${count} workers.`);
      const mark = document.createElement('span');
      mark.id = 'study-done';
      mark.dataset.testid = 'study-done';
      mark.className = 'visually-hidden';
      mark.textContent = String(ms);
      // Time spent inside the simulator, summed over jobs, for the wasm-against-native benchmark.
      window.__ratelab.studyComputeMs = computeMs;
      $('fig-study').append(mark);
    }
  };
}

// The recall quiz: progress is kept in localStorage on this device only.
const QUIZ = [
  { q: 'A fixed window allows 60 a minute. What is the most it can admit within about one second?', a: ['60', '120', '180'], right: 1 },
  { q: 'A token bucket has capacity B and refills at L per window. Its worst trailing window holds…', a: ['L', 'B', 'B + L − 1'], right: 2 },
  { q: 'Which limiter never lets any trailing window exceed the limit?', a: ['Sliding-window counter', 'Sliding log', 'Token bucket with B = L'], right: 1 },
  { q: 'A sliding log that also records rejected requests, with clients that retry, can…', a: ['lock a client out after one spike', 'admit more than the limit', 'forget its history at each boundary'], right: 0 },
  { q: 'Which number should an API publish beside its rate?', a: ['The burst size', 'The server count', 'The median latency'], right: 0 },
];
const QUIZ_KEY = 'ratelab-recall-v1';

export function startQuiz() {
  const form = $('quiz');
  let saved = {};
  try { saved = JSON.parse(localStorage.getItem(QUIZ_KEY) || '{}') || {}; } catch { saved = {}; }
  form.replaceChildren(...QUIZ.map((item, i) => {
    const fs = document.createElement('fieldset');
    const legend = document.createElement('legend');
    legend.textContent = `${i + 1}. ${item.q}`;
    fs.append(legend);
    item.a.forEach((text, j) => {
      const id = `q${i}a${j}`;
      const input = document.createElement('input');
      Object.assign(input, { type: 'radio', name: `q${i}`, id, value: String(j), checked: saved[i] === j });
      const label = document.createElement('label');
      label.htmlFor = id;
      label.textContent = text;
      const row = document.createElement('div');
      row.className = 'choice';
      row.append(input, label);
      fs.append(row);
    });
    const verdict = document.createElement('p');
    verdict.className = 'verdict';
    verdict.setAttribute('aria-live', 'polite');
    fs.append(verdict);
    return fs;
  }));
  const score = () => {
    let right = 0;
    let answered = 0;
    QUIZ.forEach((item, i) => {
      const v = saved[i];
      const verdict = form.children[i].querySelector('.verdict');
      if (v === undefined) { verdict.textContent = ''; return; }
      answered += 1;
      if (v === item.right) { right += 1; verdict.textContent = 'Right.'; } else { verdict.textContent = `Not quite: it is "${item.a[item.right]}".`; }
    });
    $('quiz-score').textContent = answered ? `${right} of ${QUIZ.length} right (${answered} answered).` : '';
  };
  form.addEventListener('change', (e) => {
    const m = /^q(\d+)$/.exec(e.target.name);
    if (!m) return;
    saved[Number(m[1])] = Number(e.target.value);
    try { localStorage.setItem(QUIZ_KEY, JSON.stringify(saved)); } catch { /* storage may be off */ }
    score();
  });
  $('quiz-reset').addEventListener('click', () => {
    saved = {};
    try { localStorage.removeItem(QUIZ_KEY); } catch { /* storage may be off */ }
    for (const input of form.querySelectorAll('input')) input.checked = false;
    score();
  });
  score();
}


// Real limiters: reports recorded by `ratelab probe` (shipped in probes/, or the reader's own
// file), each shown beside a model's decisions on the same send times.
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
