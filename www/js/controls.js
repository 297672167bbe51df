// The main figure's form: its fields, reading and checking them, showing which apply to the
// chosen algorithm, and the sentence that explains a run.
import { $, pct } from './dom.js';

/** The form's fields, by the name `Lab.run` gives each control. */
export const formFields = () => ({
  algorithm: $('algorithm'), leakyMode: $('leaky-mode'), capacity: $('capacity'), limit: $('limit'),
  windowS: $('window'), traffic: $('traffic'), load: $('load'), seed: $('seed'), recordRejects: $('record-rejects'),
});

function whole(el, name, min, max) {
  const text = el.value.trim();
  if (!/^\d+$/.test(text)) throw new Error(`${name} '${el.value}' is not a whole number: enter one from ${min} to ${max}`);
  const v = Number(text);
  if (v < min || v > max) throw new Error(`${name} ${v} is out of range: enter a whole number from ${min} to ${max}`);
  return v;
}

/** The controls of a run, checked; throws with a message for the reader if one is wrong. */
export function readControls(fields, attack) {
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

/** Enables the fields that apply to the chosen algorithm and marks the pressed attack. */
export function syncControls(fields, attack) {
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

/** What run `r` of `controls` showed, in a few sentences. */
export function explain(fields, controls, r) {
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
