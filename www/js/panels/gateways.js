// The gateways section (beyond the essays): a fleet of gateways keeping one limit. Its figure
// is computed by the tools module when the reader first runs it, then again at each move of
// its dials, and drawn by it too (its canvas sets a colour only when it changes). Its playhead shows
// what each gateway believed at one instant of the timeline.
import { $, dark, fillTable, fitCanvas, onRefit, chartSize } from '../dom.js';
import { addExport } from '../export.js';
import { loadTools } from '../modules.js';

const PLOTS = [['plot-gateways', 'gateways-timeline', 'timeline'], ['plot-gateways-sweep', 'gateways-sweep', 'sweep']];
const DIALS = ['gateways-n', 'gateways-route', 'gateways-coord', 'gateways-sync'];

/** The figure's parts, made when first run (the page's first load carries only the section's
 * text and dials): the timeline and its playhead, each gateway's view, the sweep, the table. */
function makeFigure() {
  const figure = document.createElement('div');
  figure.id = 'gateways-figure';
  figure.hidden = true;
  figure.innerHTML = `<canvas id="plot-gateways" width="880" height="260" role="img" aria-label="The true count of the trailing minute, what the gateways believed, the room instants and the instant shown below"></canvas>
<div class="inline-controls"><label for="gateways-at">Instant <output id="gateways-at-out" for="gateways-at"></output></label>
<input id="gateways-at" type="range" min="0" max="300000" step="100" value="0" aria-describedby="gateways-views-text"></div>
<p id="gateways-views-text" aria-live="polite"></p>
<ol id="gateways-views" class="views" aria-label="What the backend held and what each gateway believed, at that instant"></ol>
<p class="views-key">Bars: the backend's true count, then each gateway's belief; dashed: the count it admits under. Green: it would admit; orange: it would admit though the minute already holds L; grey: it would refuse.</p>
<canvas id="plot-gateways-sweep" width="880" height="260" role="img" aria-label="The fleet's busiest minute against how often the gateways sync, with its bound"></canvas>
<div class="scroll" tabindex="0" role="region" aria-label="Table: each coordination"><table id="gateways-table"><caption>Each coordination; three runs of ten minutes</caption><tbody></tbody></table></div>`;
  $('gateways-status').after(figure);
  // The views' bars are styled by the panel's own sheet (see gateways.css).
  const sheet = document.createElement('link');
  sheet.rel = 'stylesheet';
  sheet.href = new URL('./gateways.css', import.meta.url).href;
  document.head.append(sheet);
  return figure;
}

/** One bar of the views list: `name`, `count`, as a share of `top`, of class `kind` (`truth`,
 * or a gateway's: `open`, it would admit, or `shut`). */
function bar(name, count, top, kind) {
  const li = document.createElement('li');
  li.className = kind;
  const label = document.createElement('span');
  label.textContent = name;
  const track = document.createElement('span');
  track.className = 'track';
  const fill = document.createElement('span');
  fill.style.width = `${Math.min(100, (100 * count) / top)}%`;
  track.append(fill);
  const value = document.createElement('span');
  value.textContent = String(count);
  li.append(label, track, value);
  return li;
}

/** Shows each gateway's view: the sentence, the backend's true count, then each gateway's. */
function showViews(v) {
  $('gateways-at').value = String(v.atMs);
  $('gateways-at-out').textContent = v.clock;
  $('gateways-views-text').textContent = v.sentence;
  const top = Math.max(v.truth, v.limit, ...v.believed, 1);
  const rows = [bar('backend (true)', v.truth, top, 'truth')];
  v.believed.forEach((b, i) => rows.push(bar(`gateway ${i + 1}`, b, top, b < v.limit ? 'open' : 'shut')));
  const list = $('gateways-views');
  list.style.setProperty('--limit', `${(100 * v.limit) / top}%`);
  list.classList.toggle('full', v.full);
  list.replaceChildren(...rows);
}

/** Starts the section: returns `run()`, which computes and draws the figure at the dials'
 * settings (a run asked for while one is under way follows it). */
export function startGateways() {
  const figure = makeFigure();
  const dials = DIALS.map((id) => $(id));
  const status = $('gateways-status');
  const setting = () => [Number(dials[0].value), dials[1].value, dials[2].value, dials[3].value, 1];
  let shown = null;
  let started = false;
  let tools = null;
  let busy = false;
  let again = false;
  // Once the reader moves the playhead (or a link sets it), its instant is kept as the dials move.
  let kept;
  let linked = null;
  // The dials as the link writes them (link.js adds them to the address).
  const writeLink = () => { $('gateways').dataset.link = tools.gatewaysQuery(...setting().slice(0, 4), kept); };
  /** Sets the dials from the page's link, once, and says what was wrong with it. */
  const applyLink = () => {
    // The link's own parameters, kept by lazy.js (the address may have moved on since).
    linked = tools.gatewaysLink($('gateways').dataset.link ?? '');
    if (!linked.any) return;
    const d = linked.dials;
    [dials[0].value, dials[1].value, dials[2].value, dials[3].value] = [String(d.gateways), d.route, d.coord, d.sync];
    $('gateways-n-out').textContent = String(d.gateways);
    kept = d.atMs ?? undefined;
    if (!linked.problems.length) return;
    const box = document.createElement('ul');
    box.className = 'error';
    box.id = 'gateways-problems';
    box.setAttribute('role', 'alert');
    box.append(...linked.problems.map((p) => Object.assign(document.createElement('li'), { textContent: p })));
    status.before(box);
  };
  const draw = () => {
    for (const [id, , part] of PLOTS) {
      const c = $(id);
      fitCanvas(c);
      tools.drawPacked(id, shown[part].numbers, shown[part].text, dark());
      c.dataset.drawn = 'true';
    }
  };
  async function run() {
    if (busy) { again = true; return; }
    busy = true;
    started = true;
    try {
      tools = await loadTools();
      if (!linked) applyLink();
      do {
        again = false;
        writeLink();
        shown = tools.gatewaysFigure(...setting(), kept);
        figure.hidden = false;
        draw();
        fillTable($('gateways-table'), shown.table);
        showViews(shown.views);
        status.textContent = shown.summary;
        $('gateways').dataset.ready = 'true';
      } while (again);
    } catch (e) {
      // No stale figure beside the message: it shows again once the dials make sense.
      shown = null;
      figure.hidden = true;
      status.textContent = `The gateways could not run: ${e?.message ?? e}`;
    }
    busy = false;
  }
  // The playhead: the timeline redrawn with its mark, and the views there (a few ms: five
  // minutes of one fleet), once a frame at most.
  let frame = 0;
  $('gateways-at').addEventListener('input', () => {
    if (!shown) return;
    kept = Number($('gateways-at').value);
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      try {
        const p = tools.gatewaysPlayhead(...setting(), kept);
        shown.timeline = p.timeline;
        shown.views = p.views;
        const c = $('plot-gateways');
        tools.drawPacked('plot-gateways', p.timeline.numbers, p.timeline.text, dark());
        c.dataset.drawn = 'true';
        showViews(p.views);
        writeLink();
      } catch (e) {
        status.textContent = `The gateways could not run: ${e?.message ?? e}`;
      }
    });
  });
  // Saved as drawn: the packed chart, exported by the tools module.
  for (const [id, name, part] of PLOTS) {
    addExport($(id), name, () => async (c) => (await loadTools()).exportPacked(shown[part].numbers, shown[part].text, ...chartSize(c), dark()));
  }
  dials[0].addEventListener('input', () => { if (started) run(); });
  for (const d of dials.slice(1)) d.addEventListener('change', () => { if (started) run(); });
  onRefit(() => { if (shown) draw(); });
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => { if (shown) draw(); });
  return run;
}
