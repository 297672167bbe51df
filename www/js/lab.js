// The main figure: reads its controls, hands them to the Rust `Lab` handle, writes the
// read-outs and lets Rust draw on the canvases. No simulation happens here.
import { $, dark, pct, fitCanvases, scrollBehavior, keepInView } from './dom.js';
import { addExport, fromView } from './export.js';
import { isBroken } from './failure.js';
import { loadTools } from './modules.js';
import { formFields, readControls, syncControls, pasteNginx, nginxNotes, keepLibrarySettings } from './controls.js';

// Timings of recent runs (simulate + draw), for the performance check in the end-to-end tests.
const timings = [];
window.__ratelab = { timings, runs: 0 };

/** The main figure's state, shared with the link and the panels: `attack`, `touched` (the
 * reader changed something, so the address follows the figure), `readControls()`,
 * `schedule(user)`, and `writeState(controls)`, which link.js provides. */
export function createLab(bindings) {
  const lab = new bindings.Lab();
  const linked = bindings.decodeState(location.search);
  const ctx = {
    lab, linked, decodeState: (query) => bindings.decodeState(query), embedded: linked.embed, figure: $('lab'), fields: formFields(),
    attack: 'none', touched: false, workshop: null, writeState: () => {},
  };
  const { fields, figure } = ctx;
  ctx.readControls = () => readControls(bindings, fields, ctx.attack);
  ctx.syncControls = () => syncControls(bindings, fields, ctx.attack);
  ctx.pasteNginx = (text) => pasteNginx(fields, text);
  ctx.showError = (message) => {
    const box = $('error');
    box.textContent = message;
    box.hidden = !message;
    figure.dataset.error = message ? 'true' : 'false';
  };

  // `asked` counts the schedules; a figure drawn for the latest is marked settled (tests wait on it).
  let pending = false, asked = 0;
  ctx.runMain = () => {
    pending = false;
    const seq = asked;
    if (isBroken()) return;
    let controls;
    try {
      controls = ctx.readControls();
    } catch (e) {
      ctx.showError(e.message);
      clearResult(ctx);
      return;
    }
    const handle = ctx.handle();
    if (!handle) return; // a library's module is loading: the figure runs again once it is
    const t0 = performance.now();
    let r;
    try {
      r = handle.run(controls);
      handle.draw('plot-arrivals', 'plot-window', 'plot-share', dark());
      ctx.playhead?.afterRun();
    } catch (e) {
      ctx.showError(String(e.message ?? e));
      clearResult(ctx);
      return;
    }
    ctx.showError('');
    $('worst-window').textContent = String(r.worstWindow);
    $('bound').textContent = r.bound == null ? '–' : String(r.bound);
    $('served-share').textContent = pct(r.servedShare);
    $('wrong-admits').textContent = pct(r.wrongAdmits, 2);
    $('wrong-rejects').textContent = pct(r.wrongRejects, 2);
    const inv = $('invariant');
    inv.dataset.state = r.invariantOk ? 'ok' : 'violated';
    $('invariant-text').textContent = r.verdict;
    $('explain').textContent = r.explanation;
    $('cli').textContent = r.command;
    nginxNotes(controls, r.explanation);
    ctx.writeState(controls);
    timings.push(performance.now() - t0);
    // Time from navigation start to the first figure drawn, for the page benchmark.
    if (window.__ratelab.firstFigureMs === undefined) window.__ratelab.firstFigureMs = performance.now();
    if (timings.length > 500) timings.shift();
    const drawn = () => {
      window.__ratelab.runs += 1;
      figure.dataset.runs = String(window.__ratelab.runs);
      figure.dataset.settled = String(seq === asked);
    };
    // Compare mode comes from the tools module (an action): the figure is drawn once it is.
    if ($('compare').getAttribute('aria-pressed') === 'true') import('./panels/compare.js').then((m) => m.runCompare(controls)).then(drawn, (e) => ctx.showError(String(e.message ?? e)));
    else drawn();
    ctx.afterLab?.(); // the lab's gateways control, when on
  };

  /** Re-runs the figure on the next frame; `user` is false for a resize or a theme change. */
  ctx.schedule = (user = true) => {
    if (user) ctx.touched = true;
    asked += 1;
    figure.dataset.settled = 'false';
    ctx.syncControls();
    if (!pending) {
      pending = true;
      requestAnimationFrame(ctx.runMain);
    }
  };

  /** Shows the reader's imported file (`times`, described by `f`) as the lab's traffic. */
  /** The handle that runs the chosen limiter: the main module's `Lab`, or for a library
   * (in the menu's group) the tools module's, which has the libraries' code; null while that
   * module loads, and the figure runs again when it has. */
  let toolsLab = null, replay = null;
  ctx.isLibrary = () => fields.algorithm.selectedOptions[0]?.parentElement.tagName === 'OPTGROUP';
  ctx.handle = () => {
    if (!ctx.isLibrary()) return lab;
    toolsLab ??= loadTools().then((tools) => {
      toolsLab = new tools.Lab();
      if (replay) toolsLab.setReplay(...replay);
      ctx.schedule(false);
    }, (e) => { toolsLab = null; ctx.showError(String(e.message ?? e)); });
    return toolsLab instanceof Promise ? null : toolsLab;
  };

  ctx.showReplay = (times, f) => {
    replay = [times, f.file, f.format, f.field, f.value];
    for (const h of [lab, toolsLab]) if (h && !(h instanceof Promise)) h.setReplay(...replay);
    const option = $('traffic-file');
    option.disabled = false;
    option.textContent = `your file: ${f.label}`;
    fields.traffic.value = 'file';
    ctx.attack = 'none';
    ctx.schedule();
    figure.scrollIntoView({ behavior: scrollBehavior() });
    fields.traffic.focus({ preventScroll: true });
  };
  return ctx;
}

/** A run that failed (a field out of range) leaves no result of an earlier run on show: the
 * read-outs go blank, the badge says there is no run, the charts are cleared (the gateways'). */
function clearResult(ctx) {
  for (const id of ['worst-window', 'bound', 'served-share', 'wrong-admits', 'wrong-rejects']) $(id).textContent = '–';
  $('invariant').dataset.state = 'none';
  $('invariant-text').textContent = 'No run: see the message above';
  for (const id of ['explain', 'cli']) $(id).textContent = '';
  nginxNotes(null);
  ctx.afterLab?.(); // the gateways control, when on, says why it has no run either
  $('compare-table').tBodies[0].replaceChildren();
  $('band-count').textContent = '–';
  $('frame-text').textContent = '';
  for (const c of $('lab').querySelectorAll('canvas')) c.getContext('2d').clearRect(0, 0, c.width, c.height);
}

/** The figure's own controls: its fields, the attack buttons, new seed, compare, and the
 * essay's "Set that up for me" buttons. */
export function wireControls(ctx) {
  const { fields, schedule } = ctx;
  keepLibrarySettings(fields); // (before the run its change schedules)
  for (const el of Object.values(fields)) {
    el.addEventListener('input', () => schedule());
    el.addEventListener('change', () => schedule());
  }
  for (const b of document.querySelectorAll('[data-attack]')) {
    b.addEventListener('click', () => { ctx.attack = b.dataset.attack; schedule(); keepInView($('invariant'), $('plot-window')); });
  }
  // Pasted nginx.conf lines fill nginx's fields: at once when pasted, else on Enter or when
  // the box is left.
  const paste = $('nginx-paste');
  const fill = async () => { if (await ctx.pasteNginx(paste.value)) schedule(); };
  paste.addEventListener('change', fill);
  paste.addEventListener('input', (e) => { if (e.inputType === 'insertFromPaste') fill(); });
  $('new-seed').addEventListener('click', () => {
    fields.seed.value = String(1 + Math.floor(Math.random() * 1e9));
    schedule();
  });
  const gateways = (query) => import('./panels/lab-gateways.js').then((m) => m.toggle(ctx, query)); // on demand; a link opens it
  $('lab-gateways').addEventListener('click', () => gateways());
  if (/[?&]lab-gateways/.test(location.search)) gateways(location.search);
  $('compare').addEventListener('click', () => {
    const on = $('compare').getAttribute('aria-pressed') !== 'true';
    $('compare').setAttribute('aria-pressed', String(on));
    $('compare-view').hidden = !on;
    schedule();
  });
  for (const b of document.querySelectorAll('[data-goto]')) {
    b.addEventListener('click', () => {
      fields.algorithm.value = b.dataset.goto;
      fields.algorithm.dispatchEvent(new Event('change'));
      ctx.attack = b.dataset.gotoAttack;
      fields.recordRejects.checked = b.dataset.gotoRecord === 'true';
      schedule();
      if (ctx.workshop?.presenting()) ctx.workshop.show(0);
      ctx.figure.scrollIntoView({ behavior: scrollBehavior() });
      fields.algorithm.focus({ preventScroll: true });
    });
  }
}

/** Draws the figure for the first time, with its export buttons. */
export function firstRun(ctx) {
  ['plot-window', 'plot-arrivals', 'plot-share'].forEach((id, i) => addExport($(id), id.slice(5), () => fromView('main', ctx.readControls(), i)));
  for (const form of document.querySelectorAll('form')) form.addEventListener('submit', (e) => e.preventDefault());
  fitCanvases(ctx.figure);
  ctx.syncControls();
  ctx.runMain();
}

/** The figure's keyboard shortcuts, for the workshop mode: letters, and algorithm `i`. */
export function shortcuts(ctx) {
  const { fields, schedule } = ctx;
  const nudgeCapacity = (by) => {
    if (fields.capacity.disabled) return;
    fields.capacity.value = String(Number(fields.capacity.value) + by);
    schedule();
  };
  const actions = {
    h: () => $('honest').click(), b: () => $('boundary-burst').click(), f: () => $('flood').click(),
    r: () => $('retry-storm').click(), c: () => $('compare').click(), s: () => $('new-seed').click(),
    l: () => { if (!fields.recordRejects.disabled) fields.recordRejects.click(); },
    '[': () => nudgeCapacity(-1), ']': () => nudgeCapacity(1),
  };
  const chooseAlgorithm = (i) => {
    const options = fields.algorithm.options;
    if (i < options.length) { fields.algorithm.selectedIndex = i; fields.algorithm.dispatchEvent(new Event('change')); }
  };
  return { actions, chooseAlgorithm };
}
