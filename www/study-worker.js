// A Web Worker of the study: loads its own instance of the study's worker module
// (ratelab-study: the simulator and the study's plan, lean and built for speed) and runs the
// jobs it is sent, one at a time. No shared memory is needed, so any static host works.
/* global wasm_bindgen */
importScripts('ratelab-study.js');
let study;
// A panic in the module reaches the page's banner.
self.ratelabPanicked = (message) => postMessage({ type: 'panic', message });

onmessage = async (event) => {
  const msg = event.data;
  try {
    if (msg.type === 'init') {
      await wasm_bindgen({ module_or_path: 'ratelab-study_bg.wasm' });
      wasm_bindgen.studyPanicHook();
      study = new wasm_bindgen.Study(msg.runs, msg.minutes, msg.seed, msg.honestOnly);
      postMessage({ type: 'ready' });
    } else if (msg.type === 'job') {
      const t0 = performance.now();
      const result = study.runJob(msg.index);
      postMessage({ type: 'result', index: msg.index, result, ms: performance.now() - t0 });
    }
  } catch (e) {
    postMessage({ type: 'error', message: String(e?.message ?? e) });
  }
};
