// The page's entry module (index.html's one script): starts the main figure once Trunk's
// loader has the main wasm module, then the link, the workshop mode, the section figures and
// the on-demand panels. The parts are ES modules under js/, one per concern; ARCHITECTURE.md
// lists them, and tests/js-modules.test.mjs keeps them small and free of import cycles.
import './js/failure.js';
import { onRefit, refitSoon } from './js/dom.js';
import { createLab, wireControls, firstRun, shortcuts } from './js/lab.js';
import { startLink } from './js/link.js';
import { startWorkshop } from './js/workshop.js';
import { startImportPanel, startOtherPanels, startSectionsWhenNear, redrawSections, startPlayheadWhenSeen } from './js/lazy.js';

function start(bindings) {
  const ctx = createLab(bindings);
  wireControls(ctx);
  const link = startLink(ctx, bindings.encodeState);
  link.applyState(ctx.linked);
  firstRun(ctx);
  const { actions, chooseAlgorithm } = shortcuts(ctx);
  ctx.workshop = startWorkshop(actions, chooseAlgorithm);
  startImportPanel(ctx);
  startPlayheadWhenSeen(ctx);
  link.followSections();
  if (ctx.embedded) {
    link.embed();
  } else {
    startSectionsWhenNear();
    startOtherPanels(ctx);
  }
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => { ctx.schedule(false); redrawSections(); });
  // Charts follow their boxes (a ResizeObserver, dom.js) and the screen's pixel ratio (a
  // browser zoom fires resize).
  onRefit(() => { ctx.schedule(false); redrawSections(); });
  window.addEventListener('resize', refitSoon);
  ctx.figure.dataset.ready = 'true';
}

if (window.wasmBindings) {
  start(window.wasmBindings);
} else {
  window.addEventListener('TrunkApplicationStarted', () => start(window.wasmBindings), { once: true });
}
