// "Explain my 429s": the imported log fitted to every limiter ratelab models (`ratelab fit`),
// in the import worker, shown here: the best fits, a timeline of the log's rejections beside
// the best fit's with every slice where they disagree marked in red, and a button that opens
// the lab on the best fit. Loaded when the reader asks; every sentence is Rust's (fit_view).
import { $ } from '../dom.js';

const SVG = 'http://www.w3.org/2000/svg';
/** The timeline's rows: the log's rejections, the fit's, and the disagreement marks. */
const ROW = 40;
const GAP = 14;

const item = (parts) => {
  const li = document.createElement('li');
  const code = document.createElement('code');
  code.textContent = parts[0];
  li.append(code, `: ${parts.slice(1).filter(Boolean).join('; ')}.`);
  return li;
};

const rect = (x, y, w, h, cls) => {
  const r = document.createElementNS(SVG, 'rect');
  for (const [k, v] of Object.entries({ x, y, width: w, height: h })) r.setAttribute(k, String(v));
  r.setAttribute('class', cls);
  return r;
};

/** Draws the columns: in each row a bar whose height is the share of the slice's requests
 * rejected (the log's above, the fit's below), and a red mark under a slice where they disagree. */
function drawTimeline(view) {
  const svg = $('import-fit-timeline');
  const n = view.columns.length;
  svg.setAttribute('viewBox', `0 0 ${n} ${2 * ROW + 2 * GAP}`);
  svg.setAttribute('aria-label', view.timeline);
  const parts = [rect(0, ROW, n, 0.5, 'fit-axis'), rect(0, 2 * ROW + GAP, n, 0.5, 'fit-axis')];
  view.columns.forEach((c, x) => {
    if (c.requests === 0) return;
    const log = (ROW * c.logRejected) / c.requests;
    const fit = (ROW * c.fitRejected) / c.requests;
    if (log > 0) parts.push(rect(x, ROW - log, 1, log, 'fit-log'));
    if (fit > 0) parts.push(rect(x, 2 * ROW + GAP - fit, 1, fit, 'fit-model'));
    if (c.wrong > 0) parts.push(rect(x, 2 * ROW + GAP + 3, 1, GAP - 4, 'fit-wrong'));
  });
  svg.replaceChildren(...parts);
}

/** Shows `view` (fit_view's FitView); `open(query)` opens the lab on the best fit. */
export function showFit(view, open) {
  $('import-fit-read').textContent = view.read;
  $('import-fit-verdict').textContent = view.verdict;
  $('import-fit-order').textContent = view.order;
  $('import-fit-order').hidden = !view.order;
  $('import-fits').replaceChildren(...view.fits.map((f) => item([f.limiter, f.agreement, f.promise, f.range, f.sameAs && `decides alike: ${f.sameAs}`, f.note])));
  drawTimeline(view);
  $('import-fit-wrong').replaceChildren(...view.wrong.map((text) => {
    const li = document.createElement('li');
    li.textContent = text;
    return li;
  }));
  const button = $('import-fit-lab');
  button.disabled = !view.labQuery;
  button.onclick = view.labQuery ? () => open(view.labQuery) : null;
  $('import-fit-lab-note').textContent = view.labNote;
  $('import-fit').hidden = false;
}
