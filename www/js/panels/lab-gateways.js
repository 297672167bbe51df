// The lab's gateways control (beyond the essays): the reader's own figure run again behind
// N gateways, routed and coordinated as the reader chooses, beside the one limiter the figure
// shows. Computed and drawn by the tools module after each run of the figure while it is on.
import { $, dark, fillTable, fitCanvas } from '../dom.js';
import { loadTools } from '../modules.js';

const DIALS = ['lab-gw-n', 'lab-gw-route', 'lab-gw-coord', 'lab-gw-sync'];
let ctx = null;
let linkProblems = '';
// One run at a time: changes while one runs (a dragged slider) are run once after it.
let busy = null;
let again = false;

/** The control's parts, made when first opened: its dials (the section's menus' options), the
 * chart, the sentence, the table and the command line. */
function make() {
  const view = $('lab-gateways-view');
  view.innerHTML = `<h3>The same figure behind gateways</h3>
<div class="inline-controls"><label for="lab-gw-n">Gateways <output id="lab-gw-n-out" for="lab-gw-n">8</output></label>
<input id="lab-gw-n" type="range" min="1" max="16" value="8">
<label for="lab-gw-route">Routing</label><select id="lab-gw-route"></select>
<label for="lab-gw-coord">Counts</label><select id="lab-gw-coord"></select>
<label for="lab-gw-sync">Sync every</label><select id="lab-gw-sync"></select></div>
<p id="lab-gw-status" role="status"></p>
<canvas id="plot-lab-gateways" width="880" height="240" role="img" aria-label="The backend's trailing-window count over the run: one limiter, and the gateways"></canvas>
<p id="lab-gw-sentence" aria-live="polite"></p>
<div class="scroll" tabindex="0" role="region" aria-label="Table: one limiter and the gateways"><table id="lab-gw-table"><caption>The figure's run, by one limiter and by the gateways</caption><tbody></tbody></table></div>
<details class="cli"><summary>Run the gateways from the command line</summary><pre><code id="lab-gw-cli"></code></pre></details>`;
  for (const d of ['route', 'coord', 'sync']) $(`lab-gw-${d}`).innerHTML = $(`gateways-${d}`).innerHTML;
  for (const id of DIALS) $(id).addEventListener(id === 'lab-gw-n' ? 'input' : 'change', () => { linkProblems = ''; run(); });
}

/** Turns the control on or off; `query`, a link's, sets its dials first. */
export async function toggle(c, query = null) {
  ctx = c;
  const button = $('lab-gateways');
  const on = query != null || button.getAttribute('aria-pressed') !== 'true';
  button.setAttribute('aria-pressed', String(on));
  const view = $('lab-gateways-view');
  if (!view.firstChild) make();
  view.hidden = !on;
  ctx.afterLab = on ? run : null;
  if (!on) { delete button.dataset.link; linkProblems = ''; ctx.schedule(); return; }
  if (query != null) {
    const linked = (await loadTools()).labGatewaysLink(query);
    const { gateways, route, coord, sync } = linked.dials;
    [gateways, route, coord, sync].forEach((v, i) => { $(DIALS[i]).value = String(v); });
    linkProblems = linked.problems.join(' ');
  }
  await run();
}

/** Runs the figure's controls behind the dials' gateways, the latest of them once a frame. */
function run() {
  $('lab-gateways-view').dataset.ready = 'false';
  if (busy) { again = true; return busy; }
  busy = (async () => {
    do {
      again = false;
      await new Promise((r) => requestAnimationFrame(r));
      await runOnce();
    } while (again);
    busy = null;
    $('lab-gateways-view').dataset.ready = 'true'; // the latest change's run is on show
  })();
  return busy;
}

async function runOnce() {
  const view = $('lab-gateways-view');
  const [n, route, coord, sync] = DIALS.map((id) => $(id).value);
  $('lab-gw-n-out').textContent = n;
  let tools;
  try {
    tools = await loadTools();
  } catch (e) {
    $('lab-gw-status').textContent = `The gateways could not run: ${e.message ?? e}`;
    return;
  }
  if (view.hidden) return;
  $('lab-gateways').dataset.link = tools.labGatewaysQuery(Number(n), route, coord, sync);
  let r;
  try {
    r = tools.labGateways(ctx.readControls(), Number(n), route, coord, sync);
  } catch (e) {
    r = { error: String(e.message ?? e), table: [], sentence: '', command: '' };
  }
  // A setting that cannot run leaves no earlier run on show; a link's problems stay said.
  $('lab-gw-status').textContent = [linkProblems, r.error].filter(Boolean).join(' ');
  const canvas = $('plot-lab-gateways');
  canvas.hidden = Boolean(r.error);
  $('lab-gw-sentence').textContent = r.sentence;
  fillTable($('lab-gw-table'), r.table);
  $('lab-gw-cli').textContent = r.command;
  view.dataset.failed = String(Boolean(r.error));
  if (r.error) return;
  fitCanvas(canvas);
  tools.drawPacked(canvas.id, r.plot.numbers, r.plot.text, dark());
  ctx.writeState?.(ctx.readControls());
}
