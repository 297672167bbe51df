// The whole study, in Web Workers: one wasm instance per worker, results collected here.
// Loaded by lazy.js when the study's panel comes near the viewport or the study is run.
import { $, dark, fillTable, fitCanvas, chartSize, onRefit, scrollBox } from '../dom.js';
import { addExport, download } from '../export.js';
import { loadExtra, loadTools } from '../modules.js';

export function startStudy() {
  const button = $('run-study');
  const cancel = $('cancel-study');
  const progress = $('study-progress');
  const status = $('study-status');
  let workers = [];
  // The study's figures and tables are drawn while it runs, as results come in, and again at
  // the end. Each plot is drawn in a task of its own and the tables in another, so that no
  // step holds the page's thread for long; and at most one such render runs at a time, a
  // second apart: on a two-core machine the page's thread shares the cores with the two
  // workers. Against no render until the end, renders a quarter of a second apart cost the
  // study about 0.4 s of its 4, a second apart 0.1–0.2 s (medians of 5, in turn).
  let rendering = null;
  let lastRender = 0;
  let generation = 0;
  const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

  // Draws the results so far, step by step; returns the longest step in ms. Stops early if
  // another study started or this one was stopped (`gen` is no longer current).
  let shown = null; // the study whose plots are on the page, drawn again when they resize
  // The plots are drawn by the extra module, as the section figures are: its drawing code is
  // warm by now (the tools module's would be compiled in the middle of the study).
  let extra = null;
  const draw = (id) => {
    const { numbers, text } = shown.packedPlot(id);
    extra.drawPlot(`study-plot-${id}`, numbers, text, dark());
  };
  onRefit(() => {
    for (const [id] of shown?.plots() ?? []) if ($(`study-plot-${id}`)) draw(id);
  });
  async function render(study, gen) {
    // Assembling the results into tables and plots (once per new result) is a step of its
    // own, not part of the worker's message that started this render.
    await nextTask();
    if (gen !== generation) return 0;
    shown = study;
    let t0 = performance.now();
    const plots = study.plots();
    let longest = performance.now() - t0;
    const box = $('study-plots');
    for (const [id, title] of plots) {
      await nextTask();
      if (gen !== generation) return longest;
      t0 = performance.now();
      let c = $(`study-plot-${id}`);
      if (!c) {
        c = document.createElement('canvas');
        c.id = `study-plot-${id}`;
        c.height = 260;
        c.setAttribute('role', 'img');
        c.setAttribute('aria-label', title);
        box.append(c);
        addExport(c, id, () => async (cv) => study.exportPlot(id, ...chartSize(cv), dark()));
      }
      fitCanvas(c);
      draw(id);
      c.dataset.drawn = 'true';
      longest = Math.max(longest, performance.now() - t0);
    }
    await nextTask();
    if (gen !== generation) return longest;
    t0 = performance.now();
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
        wrap.append(scrollBox(table, t.title), bar);
        return wrap;
      }
      // Long tables (the 51 flood offsets) fold away behind their title.
      const fold = document.createElement('details');
      const summary = document.createElement('summary');
      summary.textContent = t.title;
      fold.append(summary, scrollBox(table, t.title), bar);
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
    // Timed from the click: what a room waits for.
    const started = performance.now();
    const gen = ++generation;
    const count = Math.max(1, Math.min(navigator.hardwareConcurrency || 2, 8));
    // The study and its order, once the page's tools have loaded; the workers load and
    // compile their own module meanwhile, and a worker ready before them waits in `idle`.
    let study = null;
    let order = [];
    let total = 0;
    let next = 0;
    let computeMs = 0;
    let say = () => '';
    const idle = [];
    const give = (w) => { if (next < total) w.postMessage({ type: 'job', index: order[next++] }); };
    // Two jobs in hand, so that a worker starts its next one as soon as it posts a result,
    // without waiting for the page to take the result and answer (the page may be busy
    // drawing the tables so far).
    const start = (w) => { give(w); give(w); };
    workers = Array.from({ length: count }, () => {
      const w = new Worker('study-worker.js');
      // A stopped study's workers can still deliver an event already queued (a script load
      // failing as the worker is terminated): only the current study's are heard.
      w.onmessage = (e) => {
        if (gen !== generation) return;
        const msg = e.data;
        if (msg.type === 'ready') { if (study) start(w); else idle.push(w); return; }
        if (msg.type === 'panic') { stop('A worker failed.'); window.ratelabPanicked(msg.message); return; }
        if (msg.type === 'error') { stop(`A worker failed: ${msg.message}`); return; }
        study.addResult(msg.index, msg.result);
        computeMs += msg.ms;
        // Per-job simulation time, for comparing wasm with native job by job.
        (window.__ratelab.jobMs ??= [])[msg.index] = msg.ms;
        // When each job's result arrived, from the click: where the wall time goes.
        (window.__ratelab.jobAt ??= [])[msg.index] = performance.now() - started;
        const done = study.done();
        progress.value = done;
        status.textContent = say(done);
        if (done === total) {
          const ms = Math.round(performance.now() - started);
          finish(ms);
          return;
        }
        give(w);
        if (!rendering && performance.now() - lastRender > 1000) {
          lastRender = performance.now();
          rendering = render(study, gen).finally(() => { rendering = null; });
        }
      };
      w.onerror = (e) => { if (gen === generation) stop(`A worker failed: ${e.message}`); };
      w.postMessage({ type: 'init', ...size });
      return w;
    });
    cancel.disabled = false;
    let Study;
    try {
      [{ StudyResults: Study }, extra] = await Promise.all([loadTools(), loadExtra()]);
    } catch (e) {
      if (gen === generation) stop(`The study could not start: ${e.message}`);
      return;
    }
    // Cancelled while the tools loaded.
    if (gen !== generation) return;
    study = new Study(size.runs, size.minutes, size.seed, size.honestOnly);
    total = study.jobs();
    // The largest jobs first, so that the workers finish together.
    order = study.order();
    progress.max = total;
    progress.value = 0;
    $('study-done')?.remove();
    $('study-plots').replaceChildren();
    $('study-tables').replaceChildren();
    $('study-repro').hidden = true;
    const experiments = study.experiments();
    // What a person watching reads: experiments done (every job of one), and the jobs.
    say = (done) => `${study.experimentsDone()} of ${experiments} experiments done (${done} of ${total} jobs)`;
    status.textContent = say(0);
    for (const w of idle.splice(0)) start(w);
    // The last steps, after any render still under way: the figures and tables, step by
    // step, then the reproduction report in a task of its own.
    async function finish(ms) {
      await rendering;
      const renderMs = await render(study, gen);
      if (gen !== generation) return;
      await nextTask();
      if (gen !== generation) return;
      const t0 = performance.now();
      const markdown = study.reproduction();
      $('study-repro-tables').replaceChildren(...study.claimTables().map((t) => {
        const table = document.createElement('table');
        table.dataset.table = t.id;
        table.className = 'claims';
        const caption = document.createElement('caption');
        caption.textContent = t.title;
        table.append(caption, document.createElement('tbody'));
        fillTable(table, [t.header, ...t.rows]);
        return scrollBox(table, t.title);
      }));
      $('save-repro').onclick = () => download('REPRODUCTION.md', new Blob([markdown], { type: 'text/markdown' }));
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
