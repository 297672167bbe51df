// The main figure's form: its fields and their text. Rust reads the text (ratelab-page's
// `form`): it checks each field, says which apply to the chosen limiter, reads pasted
// nginx.conf lines (in the tools module), and writes the sentences that explain a run. No rule about the controls
// lives here.
import { $ } from './dom.js';
import { loadTools } from './modules.js';

/** The form's fields, by the name `Lab.run` gives each control (nginx's own prefixed). */
export const formFields = () => ({
  algorithm: $('algorithm'), leakyMode: $('leaky-mode'), capacity: $('capacity'), limit: $('limit'),
  windowS: $('window'), traffic: $('traffic'), load: $('load'), seed: $('seed'), recordRejects: $('record-rejects'),
  nginxRate: $('nginx-rate'), nginxUnit: $('nginx-unit'), nginxBurst: $('nginx-burst'), nginxDelay: $('nginx-delay'),
  nginxNodelay: $('nginx-nodelay'), backoff: $('backoff'), jitter: $('jitter'), retryAfter: $('retry-after'),
  library: $('library'),
});

/** nginx's fields as text, as Rust's `NginxForm` reads them. */
const nginxOf = (fields) => ({
  rate: fields.nginxRate.value, unit: fields.nginxUnit.value, burst: fields.nginxBurst.value,
  delay: fields.nginxDelay.value, nodelay: fields.nginxNodelay.checked,
});

/** What the reader left in the form, as text for Rust to read (`Form::from_text`): each
 * field's text, one a line, in `FORM_FIELDS`' order. */
const formOf = (fields, attack) => [
  fields.algorithm.value, fields.leakyMode.value, fields.capacity.value, fields.limit.value,
  fields.windowS.value, fields.traffic.value, fields.load.value, fields.seed.value,
  String(fields.recordRejects.checked), attack, nginxText(nginxOf(fields)), clientText(fields),
  fields.library.value,
].join('\n');

/** The retry storm's client as one text, as Rust's `Client::fields` writes it: backoff,
 * jitter, and `honor` or `ignore` (`exponential full honor`). */
const clientText = (f) => `${f.backoff.value} ${f.jitter.value} ${f.retryAfter.checked ? 'honor' : 'ignore'}`;

/** Sets the client's fields from that text (a decoded link's `controls.client`). */
export function setClientText(fields, text) {
  const [backoff, jitter, honor] = text.split(' ');
  fields.backoff.value = backoff;
  fields.jitter.value = jitter;
  fields.retryAfter.checked = honor === 'honor';
}

/** nginx's fields as one text, as Rust passes them both ways: space-separated in nginx's
 * order, `nodelay` last when ticked (`7 r/m 5 2`); a number field's text has no space. */
const nginxText = (n) => `${n.rate} ${n.unit} ${n.burst} ${n.delay}${n.nodelay ? ' nodelay' : ''}`;

/** Sets nginx's fields from that text (a decoded link's `controls.nginx`). */
export function setNginxText(fields, text) {
  const [rate, unit, burst, delay, nodelay] = text.split(' ');
  setNginx(fields, { rate, unit, burst, delay, nodelay: nodelay === 'nodelay' });
}

/** Sets nginx's fields from `n` (`{rate, unit, burst, delay, nodelay}`, numbers or text). */
export function setNginx(fields, n) {
  fields.nginxRate.value = String(n.rate);
  fields.nginxUnit.value = n.unit;
  fields.nginxBurst.value = String(n.burst);
  fields.nginxDelay.value = String(n.delay);
  fields.nginxNodelay.checked = n.nodelay;
}

/** The controls of a run, checked by Rust; throws with its message if a field is wrong. */
export function readControls(bindings, fields, attack) {
  try {
    return bindings.readForm(formOf(fields, attack));
  } catch (e) {
    throw new Error(String(e.message ?? e));
  }
}

/** Fills nginx's fields from pasted nginx.conf lines, as Rust reads them (in the tools
 * module: only a reader who pastes needs it); resolves to whether it could (if not, the
 * message under the box says why, and the fields are left alone). */
export async function pasteNginx(fields, text) {
  const error = $('nginx-paste-error');
  try {
    const tools = await loadTools();
    setNginx(fields, tools.pasteNginx(text, nginxOf(fields)));
    error.hidden = true;
    return true;
  } catch (e) {
    error.textContent = String(e.message ?? e);
    error.hidden = false;
    return false;
  }
}

/** Beside a run of nginx (`controls`; null after a failed run): what nginx makes of its
 * settings, after the run's own sentences (`explanation`), and its nginx.conf lines, from the
 * tools module, so that the first screen does not carry them. Only the latest run's land. */
let notesSeq = 0;
export function nginxNotes(controls, explanation) {
  const seq = ++notesSeq;
  $('nginx-conf').textContent = '';
  if (controls?.algorithm !== 'nginx') return;
  loadTools().then((tools) => {
    if (seq !== notesSeq) return;
    const notes = tools.nginxNotes(controls);
    $('explain').textContent = `${explanation} ${notes.sentences}`;
    $('nginx-conf').textContent = notes.config;
  });
}

/** Enables the fields that apply to the chosen algorithm and marks the pressed attack. */
export function syncControls(bindings, fields, attack) {
  const applies = bindings.formApplies(formOf(fields, attack));
  $('capacity-field').classList.toggle('disabled', !applies.capacity);
  fields.capacity.disabled = !applies.capacity;
  // nginx has its own burst, in its own fieldset, in place of the dial; a library its settings.
  $('capacity-field').hidden = applies.nginx || applies.library;
  $('nginx-fields').hidden = !applies.nginx;
  $('nginx-delay-field').classList.toggle('disabled', !applies.nginxDelay);
  fields.nginxDelay.disabled = !applies.nginxDelay;
  $('leaky-mode-field').hidden = !applies.leakyMode;
  fields.recordRejects.disabled = !applies.recordRejects;
  $('client-fields').hidden = !applies.client;
  // A library's own settings, with its option's example of them.
  $('library-field').hidden = !applies.library;
  $('library-example').textContent = fields.algorithm.selectedOptions[0]?.dataset.example ?? '';
  fields.capacity.min = String(applies.capacityMin);
  if (applies.capacityMax != null) fields.capacity.max = String(applies.capacityMax);
  $('capacity-out').textContent = fields.capacity.value;
  for (const b of document.querySelectorAll('[data-attack]')) b.setAttribute('aria-pressed', String(b.dataset.attack === attack));
}

/** Each library keeps its own settings: choosing another library puts that one's last
 * settings in the box (empty at first), and choosing this one again restores these. The menu's
 * `data-was` is the limiter the box's settings are for (link.js sets it with a link's). */
export function keepLibrarySettings(fields) {
  const kept = {};
  const menu = fields.algorithm;
  menu.dataset.was = menu.value;
  menu.addEventListener('change', () => {
    kept[menu.dataset.was] = fields.library.value;
    menu.dataset.was = menu.value;
    fields.library.value = kept[menu.value] ?? '';
  });
}
