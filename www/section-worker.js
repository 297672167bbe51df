// A Web Worker computing the essay's section figures with the on-demand module
// (ratelab-extra), off the page's thread: each is tens of simulations, up to about 100 ms on
// a fast laptop core. The page draws the returned data, which takes a few milliseconds.
/* global wasm_bindgen */
importScripts('ratelab-extra.js');
let loaded;
self.ratelabPanicked = (message) => postMessage({ type: 'panic', message });
// (The module's panic hook is set as it starts.)
const load = () => (loaded ??= wasm_bindgen({ module_or_path: 'ratelab-extra_bg.wasm' }));

onmessage = async (event) => {
  const { seq, name, dials } = event.data;
  try {
    await load();
    const data = name === 'rules' ? wasm_bindgen.rulesData() : wasm_bindgen.sectionData(name, dials);
    postMessage({ type: 'section', seq, data });
  } catch (e) {
    postMessage({ type: 'error', seq, message: String(e?.message ?? e) });
  }
};
