// A Web Worker computing the essay's section figures with the on-demand module
// (ratelab-extra), off the page's thread: each is tens of simulations, up to about 100 ms on
// a fast laptop core. The page draws the returned data, which takes a few milliseconds.
/* global wasm_bindgen */
importScripts('ratelab-extra.js');
// The page sends the module it compiled (one download for both) before any request.
let loaded;
self.ratelabPanicked = (message) => postMessage({ type: 'panic', message });

onmessage = async (event) => {
  if (event.data.module) {
    // (The module's panic hook is set as it starts.)
    loaded = wasm_bindgen({ module_or_path: event.data.module });
    loaded.catch(() => {});
    return;
  }
  const { seq, name, dials } = event.data;
  try {
    await loaded;
    const data = name === 'rules' ? wasm_bindgen.rulesData() : wasm_bindgen.sectionData(name, dials);
    postMessage({ type: 'section', seq, data });
  } catch (e) {
    postMessage({ type: 'error', seq, message: String(e?.message ?? e) });
  }
};
