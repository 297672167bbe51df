// When the on-demand code loads. A panel's code (panels/*.js) is imported when the panel
// comes near the viewport if it shows something then (the quiz, the real limiters), else when
// it is first used (the import, the study), and the section figures' (sections.js) when the
// essay comes near or the workshop needs them, which keeps the first load and a scroll through
// the page small; until then the handlers here hold what the reader did (a chosen or dropped
// file) and pass it on.
import { $, whenNear } from './dom.js';

/** Each panel module, imported once, on first use. */
const loaded = {};
const load = (name, get) => (loaded[name] ??= get());
const importPanel = () => load('import', () => import('./panels/import.js'));
const studyPanel = () => load('study', () => import('./panels/study.js'));
const gatewaysPanel = () => load('gateways', () => import('./panels/gateways.js'));
/** Computes and draws the gateways section's figure at its dials (the panel, once started,
 * follows them). */
let runGateways = null;
const gatewaysFigure = async () => {
  runGateways ??= (await gatewaysPanel()).startGateways();
  return runGateways();
};
const quizPanel = () => load('quiz', () => import('./panels/quiz.js'));
const realPanel = () => load('real', () => import('./panels/real.js'));
const playheadModule = () => load('playhead', () => import('./playhead.js'));
const sectionsModule = () => load('sections', () => import('./sections.js').then((m) => { m.startSections(); return m; }));

/** The section figures (not in an embedded figure): their code loads when the essay comes
 * near the viewport, and each figure is computed when it scrolls into view. */
let sectionsOn = false;
export function startSectionsWhenNear() {
  sectionsOn = true;
  whenNear(document.querySelector('.essay'), sectionsModule);
}

/** Draws the section figures not shown yet (those inside `within`, if given), loading their
 * code first, and runs the gateways (its figure is computed on demand): for the presenter
 * view and the printed handout. */
export const drawSections = (within) => (sectionsOn
  ? Promise.all([
    sectionsModule().then((m) => m.drawUnshown(within)),
    !within || within.contains($('gateways')) ? gatewaysFigure() : null,
  ])
  : Promise.resolve());

/** Draws again the section figures already shown (after a resize or a theme change). */
export const redrawSections = () => { loaded.sections?.then((m) => m.redrawSections()); };

/** Your own traffic: `ctx` is the lab's (see lab.js), which the import shows a file in. Its
 * code loads when a file is chosen or dropped. */
export function startImportPanel(ctx) {
  const { fields } = ctx;
  const api = { readControls: ctx.readControls, show: ctx.showReplay, open: (query) => ctx.applyLink(query) };
  let importUi = null;
  const withImport = () => (importUi ??= importPanel().then((m) => m.startImport(api)));
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
  const reanalyze = () => importUi?.then((ui) => ui.reanalyze());
  for (const el of [fields.limit, fields.windowS, fields.capacity]) el.addEventListener('input', () => reanalyze());
}

/** The recall quiz and the real limiters, each loaded when near, and the study, the
 * gateways and "Check your config", when run (`ctx`, the lab's, is what a check opens). */
export function startOtherPanels(ctx) {
  const checkPanel = () => load('check', () => import('./panels/check.js').then((m) => m.startCheck((query) => ctx.applyLink(query))));
  $('check-run').addEventListener('click', () => checkPanel().then((run) => run()));
  whenNear($('recall'), () => quizPanel().then((m) => m.startQuiz()));
  let real = null;
  whenNear($('real'), async () => { real = (await realPanel()).startReal(); });
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => real?.redraw());
  let runStudy = null;
  $('run-study').addEventListener('click', async () => {
    runStudy ??= (await studyPanel()).startStudy();
    runStudy();
  });
  const gateways = $('gateways-n');
  gateways.addEventListener('input', () => { $('gateways-n-out').textContent = gateways.value; });
  $('gateways-run').addEventListener('click', gatewaysFigure);
  // A link that sets the section's dials runs it when it comes near, and keeps them meanwhile.
  const linked = location.search.match(/(?<=[?&])gateways[^&]*/g);
  if (linked) {
    $('gateways').dataset.link = linked.join('&');
    whenNear($('gateways'), gatewaysFigure);
  }
}

/** The main figure's mechanism view: its code loads when a fifth of its chart is in sight,
 * or when the reader reaches one of its controls first (a press is passed on once it has). */
export function startPlayheadWhenSeen(ctx) {
  const start = (then) => playheadModule().then((m) => {
    ctx.playhead ??= m.startPlayhead(ctx);
    then?.();
  });
  const seen = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) { seen.disconnect(); start(); }
  }, { threshold: 0.2 });
  seen.observe($('plot-mechanism'));
  const view = $('mechanism');
  view.addEventListener('focusin', () => start(), { once: true });
  view.addEventListener('click', (e) => {
    const button = e.target.closest('button');
    if (!ctx.playhead && button) start(() => button.click());
  });
}
