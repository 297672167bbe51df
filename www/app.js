// The page's glue: reads controls, hands them to the Rust `Lab` handle, writes the read-outs
// and lets Rust draw on the canvases. No simulation happens here.

const $ = (id) => document.getElementById(id);
const dark = () => window.matchMedia('(prefers-color-scheme: dark)').matches;
const pct = (x, digits = 1) => `${(100 * x).toFixed(digits)}%`;

// A failure inside the wasm (a panic, reported by the modules' panic hooks, or any uncaught
// error) shows a banner saying what happened, and the figure stops rather than showing
// numbers from a broken module. "Reset" reloads the page with the same link, so nothing the
// reader set is lost.
let broken = false;
function showFailure(message) {
  if (broken) return;
  broken = true;
  const banner = document.createElement('div');
  banner.className = 'panic';
  banner.setAttribute('role', 'alert');
  banner.dataset.testid = 'panic-banner';
  const text = document.createElement('p');
  text.textContent = `Something failed inside ratelab, so the page has stopped rather than show wrong numbers: ${String(message).slice(0, 500)}`;
  const reset = document.createElement('button');
  reset.type = 'button';
  reset.dataset.testid = 'panic-reset';
  reset.textContent = 'Reset the page (your settings are kept in its address)';
  reset.addEventListener('click', () => location.reload());
  banner.append(text, reset);
  document.body.prepend(banner);
  reset.focus();
}
window.ratelabPanicked = showFailure;
window.addEventListener('error', (e) => showFailure(e.message));
window.addEventListener('unhandledrejection', (e) => showFailure(e.reason?.message ?? e.reason));

// Timings of recent runs (simulate + draw), for the performance check in the end-to-end tests.
const timings = [];
window.__ratelab = { timings, runs: 0 };

function start(bindings) {
  const { Lab, decodeState, encodeState } = bindings;
  const lab = new Lab();
  const figure = $('lab');
  let attack = 'none';
  let pending = false;
  // The link's state is written back only once the reader changes something, so a link with
  // a bad parameter stays in the address bar as it was given, beside the message about it.
  let touched = false;
  let workshop = null;
  const linked = decodeState(location.search);
  const embedded = linked.embed;

  const fields = {
    algorithm: $('algorithm'), leakyMode: $('leaky-mode'), capacity: $('capacity'), limit: $('limit'),
    windowS: $('window'), traffic: $('traffic'), load: $('load'), seed: $('seed'), recordRejects: $('record-rejects'),
  };

  function whole(el, name, min, max) {
    const text = el.value.trim();
    if (!/^\d+$/.test(text)) throw new Error(`${name} '${el.value}' is not a whole number: enter one from ${min} to ${max}`);
    const v = Number(text);
    if (v < min || v > max) throw new Error(`${name} ${v} is out of range: enter a whole number from ${min} to ${max}`);
    return v;
  }

  function readControls() {
    const limit = whole(fields.limit, 'Limit', 1, 100000);
    const windowS = whole(fields.windowS, 'Window', 1, 3600);
    const loadText = fields.load.value.trim();
    const load = Number(loadText);
    if (!/^\d*\.?\d+$/.test(loadText) || !(load >= 0.01 && load <= 3)) {
      throw new Error(`Load '${fields.load.value}' is not accepted: enter a share of the limit from 0.01 to 3, like 0.8`);
    }
    const seed = whole(fields.seed, 'Seed', 0, Number.MAX_SAFE_INTEGER);
    const algorithm = fields.algorithm.value;
    const minCapacity = algorithm === 'leaky-bucket' ? 0 : 1;
    const capacity = whole(fields.capacity, 'Capacity', minCapacity, 1000000);
    return {
      algorithm, capacity, limit, windowS, traffic: fields.traffic.value, load, seed, minutes: 10, attack,
      recordRejects: fields.recordRejects.checked, leakyMode: fields.leakyMode.value,
    };
  }

  function showError(message) {
    const box = $('error');
    box.textContent = message;
    box.hidden = !message;
    figure.dataset.error = message ? 'true' : 'false';
  }

  function syncControls() {
    const algorithm = fields.algorithm.value;
    const bucket = ['token-bucket', 'gcra', 'leaky-bucket'].includes(algorithm);
    $('capacity-field').classList.toggle('disabled', !bucket);
    fields.capacity.disabled = !bucket;
    $('leaky-mode-field').hidden = algorithm !== 'leaky-bucket';
    fields.recordRejects.disabled = !['fixed-window', 'sliding-log', 'sliding-window-counter'].includes(algorithm);
    fields.capacity.min = algorithm === 'leaky-bucket' ? '0' : '1';
    const limit = Number(fields.limit.value);
    if (Number.isInteger(limit) && limit > 0) {
      // The dial reaches twice the limit, and never hides a value the reader chose.
      fields.capacity.max = String(Math.max(2 * limit, Number(fields.capacity.value) || 0));
    }
    $('capacity-out').textContent = fields.capacity.value;
    for (const b of document.querySelectorAll('[data-attack]')) b.setAttribute('aria-pressed', String(b.dataset.attack === attack));
  }

  function explain(controls, r) {
    const L = r.limit;
    const name = fields.algorithm.selectedOptions[0].textContent;
    const parts = [];
    if (r.invariantOk) {
      parts.push(`${name} kept the rule: no trailing window held more than ${L}.`);
    } else {
      parts.push(`${name} broke the rule: one trailing window held ${r.worstWindow} admitted requests, ${r.worstWindow - L} more than the limit of ${L}, ending at ${r.worstAtS.toFixed(1)} s.`);
    }
    if (controls.attack === 'boundary-burst') {
      parts.push(`This attack is two ticks of ${L} requests. It gets what the limiter has ready at each tick, which can be less than the worst case in theory (${r.bound ?? '?'}): that bound holds over every arrival pattern, and only a sustained flood is sure to reach it.`);
      if (['token-bucket', 'gcra'].includes(controls.algorithm)) parts.push(`A bucket gives the ticks its burst of ${controls.capacity} plus what refills between them; with a capacity well under ${L} it stays clean.`);
    } else if (controls.attack === 'flood') {
      parts.push(`A sustained flood, timed to the limiter's worst moment, reaches the bound: the worst case in theory is ${r.bound ?? '?'}, and this run measured ${r.worstWindow}.`);
    } else if (controls.attack === 'retry-storm') {
      parts.push(`A client sending a quarter of its quota took a spike of ${2 * L} at ${controls.windowS} s and retried every rejected request each second. It was served ${pct(r.servedShare)} of its requests${controls.recordRejects ? ', because every rejected retry was logged and kept its window full' : ''}.`);
    } else {
      parts.push(`The share served (${pct(r.servedShare)}) says nothing about whether the rule held; only the busiest window does.`);
    }
    return parts.join(' ');
  }

  function fitCanvases(root) {
    for (const c of root.querySelectorAll('canvas')) {
      const w = Math.max(280, Math.min(880, Math.floor(c.parentElement.clientWidth)));
      if (c.width !== w) c.width = w;
    }
  }

  function runMain() {
    pending = false;
    if (broken) return;
    let controls;
    try {
      controls = readControls();
    } catch (e) {
      showError(e.message);
      return;
    }
    const t0 = performance.now();
    let r;
    try {
      r = lab.run(controls);
      lab.draw('plot-arrivals', 'plot-window', 'plot-share', dark());
    } catch (e) {
      showError(String(e.message ?? e));
      return;
    }
    showError('');
    $('worst-window').textContent = String(r.worstWindow);
    $('bound').textContent = r.bound == null ? '–' : String(r.bound);
    $('served-share').textContent = pct(r.servedShare);
    $('wrong-admits').textContent = pct(r.wrongAdmits, 2);
    $('wrong-rejects').textContent = pct(r.wrongRejects, 2);
    const inv = $('invariant');
    inv.dataset.state = r.invariantOk ? 'ok' : 'violated';
    $('invariant-text').textContent = r.invariantOk ? `Rule kept: never more than ${r.limit} in a window` : `Rule broken: ${r.worstWindow} in one window`;
    $('explain').textContent = explain(controls, r);
    $('cli').textContent = `ratelab ${r.cli.map((a) => (/^[\w.:=,/-]+$/.test(a) ? a : `'${a}'`)).join(' ')}`;
    if ($('compare').getAttribute('aria-pressed') === 'true') runCompare(controls);
    writeState(controls);
    timings.push(performance.now() - t0);
    // Time from navigation start to the first figure drawn, for the page benchmark.
    if (window.__ratelab.firstFigureMs === undefined) window.__ratelab.firstFigureMs = performance.now();
    if (timings.length > 500) timings.shift();
    window.__ratelab.runs += 1;
    figure.dataset.runs = String(window.__ratelab.runs);
  }

  /** Sets the controls from a decoded link and shows what was wrong with it. */
  function applyState(d) {
    const c = d.controls;
    fields.algorithm.value = c.algorithm;
    fields.leakyMode.value = c.leakyMode;
    fields.limit.value = String(c.limit);
    // Widen the dial first: a range input clamps a value above its max.
    fields.capacity.min = '0';
    fields.capacity.max = String(Math.max(2 * c.limit, c.capacity));
    fields.capacity.value = String(c.capacity);
    fields.windowS.value = String(c.windowS);
    fields.traffic.value = c.traffic;
    fields.load.value = String(c.load);
    fields.seed.value = String(c.seed);
    fields.recordRejects.checked = c.recordRejects;
    attack = c.attack;
    $('ceiling-capacity').value = String(d.sections.ceilingCapacity);
    $('ceiling-capacity-out').textContent = String(d.sections.ceilingCapacity);
    $('honest-traffic').value = d.sections.honestTraffic;
    $('honest-load').value = d.sections.honestLoad;
    $('compare').setAttribute('aria-pressed', String(d.compare));
    $('compare-view').hidden = !d.compare;
    const box = $('url-problems');
    box.replaceChildren(...d.problems.map((p) => {
      const li = document.createElement('li');
      li.textContent = p.message;
      return li;
    }));
    box.hidden = d.problems.length === 0;
  }

  /** The link to this figure as it stands. */
  function shareUrl(controls, embed) {
    const sections = { ceilingCapacity: Number($('ceiling-capacity').value), honestTraffic: $('honest-traffic').value, honestLoad: $('honest-load').value };
    const q = encodeState(controls, $('compare').getAttribute('aria-pressed') === 'true', sections);
    const query = [q, embed ? 'embed=1' : ''].filter(Boolean).join('&');
    return new URL(query ? `?${query}` : location.pathname, location.href).href;
  }

  // The address bar follows the figure once the reader pauses, not on every step of a drag.
  let stateTimer = 0;
  function writeState(controls) {
    clearTimeout(stateTimer);
    stateTimer = setTimeout(() => {
      if (embedded) $('open-full').href = shareUrl(controls, false);
      if (!touched) return;
      const url = shareUrl(controls, embedded);
      if (url !== location.href) history.replaceState(null, '', url);
    }, 150);
  }

  /** Re-runs the figure on the next frame; `user` is false for a resize or a theme change. */
  function schedule(user = true) {
    if (user) touched = true;
    syncControls();
    if (!pending) {
      pending = true;
      requestAnimationFrame(runMain);
    }
  }

  function runCompare(controls) {
    const rows = lab.compare(controls);
    drawMultiples(lab, rows, 'multiples', 'multiple', 200, controls);
    const body = $('compare-table').tBodies[0];
    body.replaceChildren(...rows.map((row) => {
      const tr = document.createElement('tr');
      const cells = [row.limiter, pct(row.servedShare), String(row.worstWindow), row.bound == null ? '–' : String(row.bound), pct(row.wrongAdmits, 2), pct(row.wrongRejects, 2)];
      cells.forEach((text, j) => {
        const td = document.createElement(j === 0 ? 'th' : 'td');
        if (j === 0) td.scope = 'row';
        td.textContent = text;
        if (j === 2 && row.worstWindow > controls.limit) td.className = 'over';
        tr.append(td);
      });
      return tr;
    }));
  }

  for (const el of Object.values(fields)) {
    el.addEventListener('input', () => schedule());
    el.addEventListener('change', () => schedule());
  }
  $('copy-link').addEventListener('click', () => {
    let controls;
    try { controls = readControls(); } catch (e) { showError(e.message); return; }
    offerCopy($('share-text'), shareUrl(controls, false), 'Link');
  });
  $('copy-embed').addEventListener('click', () => {
    let controls;
    try { controls = readControls(); } catch (e) { showError(e.message); return; }
    const src = shareUrl(controls, true);
    const snippet = `<iframe src="${src.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}" title="ratelab: what a rate limiter lets through" width="100%" height="760" style="border:0" loading="lazy"></iframe>`;
    offerCopy($('share-text'), snippet, 'Embed code');
  });
  for (const b of document.querySelectorAll('[data-attack]')) {
    b.addEventListener('click', () => { attack = b.dataset.attack; schedule(); });
  }
  $('new-seed').addEventListener('click', () => {
    fields.seed.value = String(1 + Math.floor(Math.random() * 1e9));
    schedule();
  });
  $('compare').addEventListener('click', () => {
    const on = $('compare').getAttribute('aria-pressed') !== 'true';
    $('compare').setAttribute('aria-pressed', String(on));
    $('compare-view').hidden = !on;
    schedule();
  });
  for (const b of document.querySelectorAll('[data-goto]')) {
    b.addEventListener('click', () => {
      fields.algorithm.value = b.dataset.goto;
      attack = b.dataset.gotoAttack;
      fields.recordRejects.checked = b.dataset.gotoRecord === 'true';
      schedule();
      if (workshop?.presenting()) workshop.show(0);
      figure.scrollIntoView({ behavior: window.matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
      fields.algorithm.focus({ preventScroll: true });
    });
  }

  applyState(linked);
  ['plot-window', 'plot-arrivals', 'plot-share'].forEach((id, i) => addExport($(id), id.slice(5), () => fromView('main', readControls(), i)));
  for (const form of document.querySelectorAll('form')) form.addEventListener('submit', (e) => e.preventDefault());
  fitCanvases(figure);
  syncControls();
  runMain();
  const actions = {
    h: () => $('honest').click(), b: () => $('boundary-burst').click(), f: () => $('flood').click(),
    r: () => $('retry-storm').click(), c: () => $('compare').click(), s: () => $('new-seed').click(),
    l: () => { if (!fields.recordRejects.disabled) fields.recordRejects.click(); },
    '[': () => nudgeCapacity(-1), ']': () => nudgeCapacity(1),
  };
  function nudgeCapacity(by) {
    if (fields.capacity.disabled) return;
    fields.capacity.value = String(Number(fields.capacity.value) + by);
    schedule();
  }
  workshop = startWorkshop(actions, (i) => {
    const options = fields.algorithm.options;
    if (i < options.length) { fields.algorithm.selectedIndex = i; schedule(); }
  });

  const importApi = {
    readControls,
    show(times, f) {
      lab.setReplay(times, f.file, f.format, f.field, f.value);
      const label = f.label;
      const option = $('traffic-file');
      option.disabled = false;
      option.textContent = `your file: ${label}`;
      fields.traffic.value = 'file';
      attack = 'none';
      schedule();
      figure.scrollIntoView({ behavior: window.matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
      fields.traffic.focus({ preventScroll: true });
    },
  };
  // The import panel's code (panels.js) loads when the panel is near or first used; until then
  // these handlers hold the file and pass it on.
  let importUi = null;
  const withImport = () => (importUi ??= loadPanels().then((m) => m.startImport(importApi)));
  whenNear($('your-traffic'), withImport);
  const readFile = async (file) => (await withImport()).read(file);
  $('import-file').addEventListener('change', () => readFile($('import-file').files[0]));
  const drop = $('import-drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const file = e.dataTransfer?.files?.[0];
    if (file) readFile(file);
  });
  for (const id of ['import-format', 'import-field', 'import-value']) {
    $(id).addEventListener('change', () => { if ($('import-file').files[0]) readFile($('import-file').files[0]); });
  }
  const traffic = { reanalyze: () => importUi?.then((ui) => ui.reanalyze()) };
  for (const el of [fields.limit, fields.windowS, fields.capacity]) el.addEventListener('input', () => traffic.reanalyze());
  // The section figures' controls are part of the link too.
  for (const id of ['ceiling-capacity', 'honest-traffic', 'honest-load']) {
    $(id).addEventListener('change', () => { touched = true; try { writeState(readControls()); } catch { /* the main figure shows its own error */ } });
  }

  if (embedded) {
    // One figure alone, for an <iframe>: the rest of the page is neither shown nor computed.
    document.documentElement.classList.add('embed');
    $('open-full').href = shareUrl(readControls(), false);
    $('open-full').hidden = false;
  } else {
    startSections();
    whenNear($('recall'), () => loadPanels().then((m) => m.startQuiz()));
    let real = null;
    whenNear($('real'), async () => { real = (await loadPanels()).startReal(); });
    window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => real?.redraw());
    let runStudy = null;
    whenNear($('study'), () => loadPanels());
    $('run-study').addEventListener('click', async () => {
      runStudy ??= (await loadPanels()).startStudy();
      runStudy();
    });
  }
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => { schedule(false); redrawSections(); });
  let resizeTimer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { fitCanvases(document); schedule(false); redrawSections(); }, 150);
  });
  figure.dataset.ready = 'true';
}

// Export: every plot can be saved as PNG (the canvas itself), as SVG (drawn by the plotters SVG
// backend from the same chart code, in the on-demand module) and as CSV (the data behind it).
const download = (name, blob) => {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
};

/** `{svg, csv}` of plot `index` of a view (`main`, `compare`, `section:NAME`), for a canvas. */
const fromView = (view, params, index) => async (c) => (await loadExtra()).exportPlot(view, params, index, c.width, c.height, dark());

/** Puts PNG, SVG and CSV buttons under `canvas` (once); `source()` gives the exporter. */
function addExport(canvas, name, source) {
  if (!canvas || canvas.nextElementSibling?.classList.contains('export')) return;
  const bar = document.createElement('div');
  bar.className = 'export';
  bar.setAttribute('role', 'group');
  const title = canvas.getAttribute('aria-label') || name;
  bar.setAttribute('aria-label', `Save: ${title}`);
  for (const kind of ['png', 'svg', 'csv']) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = kind.toUpperCase();
    b.dataset.testid = `export-${kind}-${canvas.id}`;
    b.setAttribute('aria-label', `Save ${title} as ${kind.toUpperCase()}`);
    b.addEventListener('click', async () => {
      try {
        if (kind === 'png') {
          canvas.toBlob((blob) => download(`ratelab-${name}.png`, blob), 'image/png');
          return;
        }
        const out = await source()(canvas);
        download(`ratelab-${name}.${kind}`, new Blob([out[kind]], { type: kind === 'svg' ? 'image/svg+xml' : 'text/csv' }));
      } catch (e) {
        b.closest('[id]').dataset.error = String(e.message ?? e);
      }
    });
    bar.append(b);
  }
  canvas.after(bar);
}

// Workshop mode: keyboard shortcuts, a presenter view (one section at a time, in large type)
// and a printed handout with every figure drawn.
function startWorkshop(actions, chooseAlgorithm) {
  const slides = () => [$('lab'), ...document.querySelectorAll('.essay > section')];
  let current = -1;
  const keys = $('keys');
  const toggleKeys = (show = keys.hidden) => {
    keys.hidden = !show;
    $('show-keys').setAttribute('aria-expanded', String(show));
  };
  function show(i) {
    const all = slides();
    current = Math.max(0, Math.min(all.length - 1, i));
    all.forEach((el, j) => el.classList.toggle('current-slide', j === current));
    $('slide-status').textContent = `${current + 1} of ${all.length}: ${all[current].querySelector('h2')?.textContent ?? ''}`;
    $('slide-prev').disabled = current === 0;
    $('slide-next').disabled = current === all.length - 1;
    all[current].scrollIntoView({ block: 'start' });
    // The section's figure is drawn when it is seen; make sure it is.
    sections.filter((s) => all[current].contains($(s.el)) && !s.shown).forEach((s) => { s.shown = true; s.draw(); });
    window.dispatchEvent(new Event('resize'));
  }
  function present(on) {
    document.documentElement.classList.toggle('presenting', on);
    $('presenter-nav').hidden = !on;
    $('present').setAttribute('aria-pressed', String(on));
    if (on) { show(Math.max(current, 0)); $('slide-next').focus(); } else {
      for (const el of slides()) el.classList.remove('current-slide');
      window.dispatchEvent(new Event('resize'));
    }
  }
  const presenting = () => document.documentElement.classList.contains('presenting');
  $('present').addEventListener('click', () => present(!presenting()));
  $('slide-prev').addEventListener('click', () => show(current - 1));
  $('slide-next').addEventListener('click', () => show(current + 1));
  $('slide-exit').addEventListener('click', () => present(false));
  $('show-keys').addEventListener('click', () => toggleKeys());
  $('print-handout').addEventListener('click', async () => {
    await drawEverything();
    window.print();
  });
  window.addEventListener('beforeprint', () => { drawEverything(); });
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    const typing = t instanceof HTMLElement && (t.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(t.tagName) && t.type !== 'checkbox' && t.type !== 'radio' && t.type !== 'range');
    if (e.key === 'Escape') {
      if (!keys.hidden) toggleKeys(false);
      else if (presenting()) present(false);
      return;
    }
    if (typing) return;
    // Arrow keys move a focused slider or radio; they change slides only when nothing else takes them.
    const takesArrows = t instanceof HTMLInputElement && ['range', 'radio'].includes(t.type);
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    let handled = true;
    if (presenting() && (key === 'PageDown' || (key === 'ArrowRight' && !takesArrows))) show(current + 1);
    else if (presenting() && (key === 'PageUp' || (key === 'ArrowLeft' && !takesArrows))) show(current - 1);
    else if (key === 'p') present(!presenting());
    else if (key === '?') toggleKeys();
    else if (/^[1-9]$/.test(key)) chooseAlgorithm(Number(key) - 1);
    else if (actions[key]) actions[key]();
    else handled = false;
    if (handled) e.preventDefault();
  });
  return { show, presenting };
}

/** Draws every section figure and opens folded tables, for printing. */
async function drawEverything() {
  for (const d of document.querySelectorAll('details')) d.open = true;
  $('print-source').textContent = `Printed from ${location.href}, ${new Date().toISOString().slice(0, 10)}. Every figure is a run of the simulator; the command line under the lab reproduces it.`;
  await Promise.all(sections.filter((s) => !s.shown).map((s) => { s.shown = true; return s.draw(); }));
}

/** Shows `text` in a read-only box, selected, and copies it where the browser allows. */
function offerCopy(box, text, what) {
  box.value = text;
  box.hidden = false;
  $('share-label').hidden = false;
  box.select();
  const status = $('share-status');
  navigator.clipboard?.writeText(text).then(
    () => { status.textContent = `${what} copied.`; },
    () => { status.textContent = `${what} selected: copy it with Ctrl+C.`; },
  ) ?? (status.textContent = `${what} selected: copy it with Ctrl+C.`);
}

// Section figures: each has its own Lab and is computed when it scrolls into view.
const sections = [];

function fillTable(table, rows) {
  const body = table.tBodies[0];
  body.replaceChildren(...rows.map((row, i) => {
    const tr = document.createElement('tr');
    row.forEach((text, j) => {
      const cell = document.createElement(i === 0 || j === 0 ? 'th' : 'td');
      cell.scope = i === 0 ? 'col' : 'row';
      cell.textContent = text;
      tr.append(cell);
    });
    return tr;
  }));
}

/** Small multiples: one captioned canvas per compared algorithm in `boxId`, drawn by `lab`. */
function drawMultiples(lab, rows, boxId, prefix, height, controls) {
  const box = $(boxId);
  if (box.children.length !== rows.length) {
    box.replaceChildren(...rows.map((_, i) => {
      const fig = document.createElement('figure');
      const c = document.createElement('canvas');
      c.id = `${prefix}-${i}`;
      c.width = 420;
      c.height = height;
      c.setAttribute('role', 'img');
      fig.append(c, document.createElement('figcaption'));
      return fig;
    }));
    rows.forEach((row, i) => addExport($(`${prefix}-${i}`), `${prefix}-${i}`, () => fromView('compare', box.exportControls, i)));
  }
  box.exportControls = controls;
  rows.forEach((row, i) => {
    const fig = box.children[i];
    fig.querySelector('figcaption').textContent = row.limiter;
    fig.querySelector('canvas').setAttribute('aria-label', `${row.limiter}: admitted in the trailing window over time`);
  });
  lab.drawCompare(rows.map((_, i) => `${prefix}-${i}`), dark());
}

/** Section 1: every algorithm on one page-load client, as small multiples and a table,
 * computed in the section worker and drawn here. */
async function drawRules() {
  const controls = { algorithm: 'sliding-log', capacity: 100, limit: 100, windowS: 60, traffic: 'page-loads', load: 0.8, seed: 3, minutes: 10, attack: 'none', recordRejects: false, leakyMode: 'meter' };
  const [{ rows, plots }, extra] = await Promise.all([sectionData('compare', controls), loadExtra()]);
  const box = $('rules-multiples');
  if (box.children.length !== rows.length) {
    box.replaceChildren(...rows.map((row, i) => {
      const fig = document.createElement('figure');
      const c = document.createElement('canvas');
      c.id = `rules-${i}`;
      c.width = 420;
      c.height = 180;
      c.setAttribute('role', 'img');
      c.setAttribute('aria-label', `${row.limiter}: admitted in the trailing window over time`);
      const caption = document.createElement('figcaption');
      caption.textContent = row.limiter;
      fig.append(c, caption);
      return fig;
    }));
    rows.forEach((row, i) => addExport($(`rules-${i}`), `rules-${i}`, () => fromView('compare', controls, i)));
  }
  plots.forEach((plot, i) => extra.drawWindow(`rules-${i}`, plot, dark()));
  const rowsText = rows.map((r) => [r.limiter, pct(r.servedShare), String(r.worstWindow), r.bound == null ? '–' : String(r.bound)]);
  fillTable($('rules-table'), [['Algorithm', 'Served', 'Busiest window', 'Worst case in theory'], ...rowsText]);
}

function startSections() {
  const defs = [
    { el: 'fig-rules', custom: drawRules },
    { el: 'fig-boundary', name: 'boundary-table', canvas: '', params: () => ({ limit: 60 }), table: 'boundary-table' },
    { el: 'plot-ceiling', name: 'ceiling', canvas: 'plot-ceiling', params: () => ({ limit: 60, capacity: Number($('ceiling-capacity').value) }) },
    { el: 'plot-honest', name: 'honest', canvas: 'plot-honest', params: () => ({ traffic: $('honest-traffic').value, load: Number($('honest-load').value), seed: 1 }), table: 'honest-table' },
    { el: 'plot-swc', name: 'swc-offsets', canvas: 'plot-swc', params: () => ({ limit: 100 }) },
    { el: 'plot-lockout', name: 'lockout', canvas: 'plot-lockout', params: () => ({ limit: 100, seed: 1 }) },
    { el: 'plot-split', name: 'split', canvas: 'plot-split', params: () => ({ seed: 1 }) },
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
          const params = s.params();
          const [data, extra] = await Promise.all([sectionData(s.name, params), loadExtra()]);
          if (s.canvas) extra.drawSection(s.name, data, params, s.canvas, dark());
          if (s.table) fillTable($(s.table), data.table);
          if (s.canvas) addExport($(s.canvas), s.name, () => fromView(`section:${s.name}`, s.params(), 0));
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
}

function redrawSections() {
  for (const s of sections) if (s.shown) s.draw();
}

/** The section worker, started on first use; `sectionData` asks it for one section's data. */
let sectionWorker = null;
const pending = new Map();
let sectionSeq = 0;
function sectionData(name, params) {
  if (!sectionWorker) {
    sectionWorker = new Worker('section-worker.js');
    sectionWorker.onmessage = ({ data: msg }) => {
      if (msg.type === 'panic') { window.ratelabPanicked(msg.message); return; }
      const p = pending.get(msg.seq);
      pending.delete(msg.seq);
      if (msg.type === 'section') p?.resolve(msg.data); else p?.reject(new Error(msg.message));
    };
  }
  const seq = ++sectionSeq;
  return new Promise((resolve, reject) => {
    pending.set(seq, { resolve, reject });
    sectionWorker.postMessage({ seq, name, params });
  });
}

/** Loads the on-demand module (a classic script defining `wasm_bindgen`) once, on first use:
 * the section figures, the study, file import and SVG export. */
let studyModule;
function loadExtra() {
  studyModule ??= new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = 'ratelab-extra.js';
    script.onload = () => {
      /* global wasm_bindgen */
      wasm_bindgen({ module_or_path: 'ratelab-extra_bg.wasm' }).then(() => { wasm_bindgen.extraPanicHook(); resolve(wasm_bindgen); }, reject);
    };
    script.onerror = () => reject(new Error('the on-demand module did not load'));
    document.head.append(script);
  });
  return studyModule;
}

export { $, pct, dark, loadExtra, download, addExport, fillTable };

/** The panels module, loaded once, on first use. */
let panels;
const loadPanels = () => (panels ??= import('./panels.js'));

/** Calls `fn` once, when `el` first comes within 200 px of the viewport. */
function whenNear(el, fn) {
  const observer = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) { observer.disconnect(); fn(); }
  }, { rootMargin: '200px 0px' });
  observer.observe(el);
}

if (window.wasmBindings) {
  start(window.wasmBindings);
} else {
  window.addEventListener('TrunkApplicationStarted', () => start(window.wasmBindings), { once: true });
}
