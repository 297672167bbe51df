// The main figure's form: its fields and their text. Rust reads the text (ratelab-page's
// `form`): it checks each field, says which apply to the chosen limiter, and writes the
// sentences that explain a run. No rule about the controls lives here.
import { $ } from './dom.js';

/** The form's fields, by the name `Lab.run` gives each control. */
export const formFields = () => ({
  algorithm: $('algorithm'), leakyMode: $('leaky-mode'), capacity: $('capacity'), limit: $('limit'),
  windowS: $('window'), traffic: $('traffic'), load: $('load'), seed: $('seed'), recordRejects: $('record-rejects'),
});

/** What the reader left in the form, as text, for Rust to read. */
const formOf = (fields, attack) => ({
  algorithm: fields.algorithm.value, leakyMode: fields.leakyMode.value, capacity: fields.capacity.value,
  limit: fields.limit.value, windowS: fields.windowS.value, traffic: fields.traffic.value,
  load: fields.load.value, seed: fields.seed.value, recordRejects: fields.recordRejects.checked, attack,
});

/** The controls of a run, checked by Rust; throws with its message if a field is wrong. */
export function readControls(bindings, fields, attack) {
  try {
    return bindings.readForm(formOf(fields, attack));
  } catch (e) {
    throw new Error(String(e.message ?? e));
  }
}

/** Enables the fields that apply to the chosen algorithm and marks the pressed attack. */
export function syncControls(bindings, fields, attack) {
  const applies = bindings.formApplies(formOf(fields, attack));
  $('capacity-field').classList.toggle('disabled', !applies.capacity);
  fields.capacity.disabled = !applies.capacity;
  $('leaky-mode-field').hidden = !applies.leakyMode;
  fields.recordRejects.disabled = !applies.recordRejects;
  fields.capacity.min = String(applies.capacityMin);
  if (applies.capacityMax != null) fields.capacity.max = String(applies.capacityMax);
  $('capacity-out').textContent = fields.capacity.value;
  for (const b of document.querySelectorAll('[data-attack]')) b.setAttribute('aria-pressed', String(b.dataset.attack === attack));
}
