// The figure's link: the address bar follows the figure (once the reader changes something),
// a link decoded by Rust sets the controls, and "Copy link" and "Copy embed code" offer it.
import { $ } from './dom.js';
import { setClientText, setNginxText } from './controls.js';

/** Wires the link to the lab `ctx` (see lab.js); `encodeState` is the Rust encoder. */
export function startLink(ctx, encodeState) {
  const { fields } = ctx;

  /** Sets the lab's controls to `c`, a decoded link's. */
  function applyControls(c) {
    fields.algorithm.value = c.algorithm;
    fields.leakyMode.value = c.leakyMode;
    fields.limit.value = String(c.limit);
    // Widen the dial first: a range input clamps a value above its max.
    fields.capacity.min = '0';
    fields.capacity.max = String(Math.max(2 * c.limit, c.capacity));
    fields.capacity.value = String(c.capacity);
    fields.windowS.value = String(c.windowS);
    fields.traffic.value = c.traffic;
    fields.load.value = String(c.load);
    fields.seed.value = String(c.seed);
    fields.recordRejects.checked = c.recordRejects;
    setNginxText(fields, c.nginx);
    setClientText(fields, c.client);
    fields.library.value = c.library;
    fields.algorithm.dataset.was = c.algorithm;
    ctx.attack = c.attack;
  }

  /** Sets the controls from a decoded link and shows what was wrong with it. */
  function applyState(d) {
    applyControls(d.controls);
    $('ceiling-capacity').value = String(d.sections.ceilingCapacity);
    $('ceiling-capacity-out').textContent = String(d.sections.ceilingCapacity);
    $('honest-traffic').value = d.sections.honestTraffic;
    $('honest-load').value = d.sections.honestLoad;
    $('herding-jitter').value = d.sections.herdingJitter;
    $('compare').setAttribute('aria-pressed', String(d.compare));
    $('compare-view').hidden = !d.compare;
    const box = $('url-problems');
    box.replaceChildren(...d.problems.map((p) => {
      const li = document.createElement('li');
      li.textContent = p.message;
      return li;
    }));
    box.hidden = d.problems.length === 0;
  }

  /** The link to this figure as it stands. */
  function shareUrl(controls, embed) {
    const sections = { ceilingCapacity: Number($('ceiling-capacity').value), honestTraffic: $('honest-traffic').value, honestLoad: $('honest-load').value, herdingJitter: $('herding-jitter').value };
    const q = encodeState(controls, $('compare').getAttribute('aria-pressed') === 'true', sections);
    // The gateways section's dials, as the link gave them (lazy.js) or its panel writes them.
    const query = [q, $('gateways').dataset.link, $('lab-gateways').dataset.link, embed ? 'embed=1' : ''].filter(Boolean).join('&');
    return new URL(query ? `?${query}` : location.pathname, location.href).href;
  }

  // The address bar follows the figure once the reader pauses, not on every step of a drag.
  // The link's state is written back only once the reader changes something, so a link with
  // a bad parameter stays in the address bar as it was given, beside the message about it.
  let stateTimer = 0;
  ctx.writeState = (controls) => {
    clearTimeout(stateTimer);
    stateTimer = setTimeout(() => {
      if (ctx.embedded) $('open-full').href = shareUrl(controls, false);
      if (!ctx.touched) return;
      const url = shareUrl(controls, ctx.embedded);
      if (url !== location.href) history.replaceState(null, '', url);
    }, 150);
  };

  $('copy-link').addEventListener('click', () => {
    let controls;
    try { controls = ctx.readControls(); } catch (e) { ctx.showError(e.message); return; }
    offerCopy($('share-text'), shareUrl(controls, false), 'Link');
  });
  $('copy-embed').addEventListener('click', () => {
    let controls;
    try { controls = ctx.readControls(); } catch (e) { ctx.showError(e.message); return; }
    const src = shareUrl(controls, true);
    const snippet = `<iframe src="${src.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}" title="ratelab: what a rate limiter lets through" width="100%" height="760" style="border:0" loading="lazy"></iframe>`;
    offerCopy($('share-text'), snippet, 'Embed code');
  });

  /** The section figures' controls are part of the link too. */
  const followSections = () => {
    // (The gateways section's dials and playhead, made when it first runs, tell their section.)
    for (const id of ['ceiling-capacity', 'honest-traffic', 'honest-load', 'herding-jitter', 'gateways']) {
      $(id).addEventListener('change', () => { ctx.touched = true; try { ctx.writeState(ctx.readControls()); } catch { /* the main figure shows its own error */ } });
    }
  };

  /** One figure alone, for an <iframe>: the rest of the page is neither shown nor computed.
   * In a frame, it posts its height to the host page whenever that changes, so that a host
   * can size the frame to it (README: "Embedding a figure"); nothing else is sent. */
  const embed = () => {
    document.documentElement.classList.add('embed');
    $('open-full').href = shareUrl(ctx.readControls(), false);
    $('open-full').hidden = false;
    if (window.parent === window) return;
    let last = 0;
    new ResizeObserver(() => {
      const height = Math.ceil(ctx.figure.getBoundingClientRect().bottom + window.scrollY);
      if (height !== last) window.parent.postMessage({ type: 'ratelab:height', height: (last = height) }, '*');
    }).observe(ctx.figure);
  };
  // The lab's controls from a link's query (the import panel's "Open the lab on the best fit").
  ctx.applyLink = (query) => {
    applyControls(ctx.decodeState(`?${query}`).controls);
    ctx.syncControls();
    ctx.schedule(true);
    ctx.figure.scrollIntoView();
  };
  return { applyState, followSections, embed };
}

/** Shows `text` in a read-only box, selected, and copies it where the browser allows. */
function offerCopy(box, text, what) {
  box.value = text;
  box.hidden = false;
  $('share-label').hidden = false;
  box.select();
  const status = $('share-status');
  navigator.clipboard?.writeText(text).then(
    () => { status.textContent = `${what} copied.`; },
    () => { status.textContent = `${what} selected: copy it with Ctrl+C.`; },
  ) ?? (status.textContent = `${what} selected: copy it with Ctrl+C.`);
}
