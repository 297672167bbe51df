// The main figure's playhead: play, step and a scrubber over the run's decisions. The
// on-demand module's `MechanismView` reruns the figure's controls keeping each decision's
// trailing window and the limiter's state, says what each decision shows (`frame`) and draws
// it; this only moves the index. lazy.js imports this when the view comes into sight or is
// used, and it loads the on-demand module at once, so the first screen waits for neither. Playback moves at an even pace in the run's own time,
// the whole run in about twenty seconds; with reduced motion asked for, only steps.
import { $, dark } from './dom.js';
import { loadExtra, loadTools } from './modules.js';

const PLAY_SECONDS = 20;

export function startPlayhead(ctx) {
  const range = $('playhead');
  const play = $('play');
  const still = window.matchMedia('(prefers-reduced-motion: reduce)');
  let view = null;
  let loading = null;
  // The on-demand module's view, and for a library's limiter the tools module's (which has
  // its code; loaded when a library is first shown).
  let extraView = null, toolsView = null;
  let index = 0;
  let raf = 0;
  let clock = { at: 0, t: 0 };

  /** Shows decision `i`; `quiet` while playing, so screen readers are not flooded. */
  function show(i, quiet = false) {
    const f = view?.frame(Math.max(0, i));
    if (!f) return;
    index = f.index;
    range.value = String(index);
    $('playhead-out').textContent = `${index + 1} of ${f.decisions}`;
    const band = $('band-count');
    band.textContent = String(f.band);
    band.dataset.state = f.over ? 'violated' : 'ok';
    $('band-of').textContent = f.bandText;
    $('frame-text').textContent = f.text;
    const state = $('state-value');
    state.textContent = f.stateText;
    state.dataset.kind = f.kind;
    state.dataset.value = String(f.value);
    $('frame').setAttribute('aria-live', quiet ? 'off' : 'polite');
    view.draw('plot-mechanism', index, dark());
  }

  function stop() {
    cancelAnimationFrame(raf);
    raf = 0;
    play.setAttribute('aria-pressed', 'false');
    play.textContent = 'Play';
    $('frame').setAttribute('aria-live', 'polite');
  }

  /** Reruns the view on the figure's controls; the playhead starts at the busiest window. */
  const timings = (window.__ratelab.mechanismTimings = []);
  function rerun() {
    if (!view) return;
    if (ctx.isLibrary()) {
      toolsView ??= loadTools().then((t) => { toolsView = new t.MechanismView(); rerun(); });
      if (toolsView instanceof Promise) return;
    }
    view = ctx.isLibrary() ? toolsView : extraView;
    const t0 = performance.now();
    stop();
    let controls;
    try { controls = ctx.readControls(); } catch { return; }
    try {
      view.run(controls);
    } catch (e) {
      $('frame-text').textContent = String(e.message ?? e);
      return;
    }
    range.max = String(Math.max(0, view.decisions() - 1));
    show(view.playheadStart());
    // Which of the figure's runs this shows (tests wait for it to catch up).
    $('mechanism').dataset.runs = String(window.__ratelab.runs);
    timings.push(performance.now() - t0);
    $('mechanism').dataset.ready = 'true';
  }

  // After a run of the figure the view reruns on the next frame, apart from the figure's own
  // redraw (a dial move stays as quick as the figure alone), and only while it is in sight:
  // out of sight it is marked stale and reruns when it comes back.
  let inSight = true;
  let stale = false;
  let frame = 0;
  function afterRun() {
    stale = true;
    if (!view || frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      if (inSight && stale) { stale = false; rerun(); }
    });
  }
  new IntersectionObserver((entries) => {
    inSight = entries.some((e) => e.isIntersecting);
    if (inSight && stale) afterRun();
  }).observe($('mechanism'));

  function load() {
    loading ??= loadExtra().then((extra) => { view = extraView = new extra.MechanismView(); stale = false; rerun(); });
    return loading;
  }

  function tick(now) {
    const t = clock.t + ((now - clock.at) / 1000) * (view.horizonS() / PLAY_SECONDS);
    const last = Number(range.max);
    const i = Math.max(index, view.indexAt(t));
    show(i, true);
    if (i >= last) { stop(); show(last); return; }
    raf = requestAnimationFrame(tick);
  }

  /** Runs `fn` now if the view is here (so a step shows at once), else once it has loaded. */
  const withView = (fn) => (view ? fn() : load().then(fn));
  play.addEventListener('click', () => withView(() => {
    if (raf) { stop(); show(index); return; }
    if (index >= Number(range.max)) show(0, true);
    clock = { at: performance.now(), t: view.frame(index)?.timeS ?? 0 };
    play.setAttribute('aria-pressed', 'true');
    play.textContent = 'Pause';
    raf = requestAnimationFrame(tick);
  }));
  $('step').addEventListener('click', () => withView(() => { stop(); show(Math.min(index + 1, Number(range.max))); }));
  $('step-back').addEventListener('click', () => withView(() => { stop(); show(index - 1); }));
  range.addEventListener('input', () => withView(() => { stop(); show(Number(range.value)); }));
  const motion = () => {
    play.disabled = still.matches;
    play.title = still.matches ? 'Playback is off because reduced motion is asked for; the steps and the slider still work.' : '';
    if (still.matches) stop();
  };
  still.addEventListener('change', motion);
  motion();

  load();
  return { afterRun, redraw: () => view && show(index) };
}
