// A Web Worker running the on-demand module (ratelab-study, built for speed): study jobs, one
// at a time, and the import of a reader's traffic file, read in slices with progress. No shared
// memory is needed, so any static host works. The file is read here and never sent anywhere.
/* global wasm_bindgen */
importScripts('ratelab-study.js');
let loaded;
let study;
let times = null;

const load = () => (loaded ??= wasm_bindgen({ module_or_path: 'ratelab-study_bg.wasm' }));
// Slices of the file fed to the importer: progress is reported after each one.
const SLICE = 4 << 20;

async function importFile(msg) {
  const file = msg.file;
  const importer = new wasm_bindgen.Import(msg.format, msg.field, msg.value);
  for (let at = 0; at < file.size; at += SLICE) {
    importer.feed(new Uint8Array(await file.slice(at, at + SLICE).arrayBuffer()));
    postMessage({ type: 'import-progress', bytes: Math.min(file.size, at + SLICE), total: file.size, lines: importer.lines() });
  }
  const summary = importer.finish();
  times = importer.times();
  const report = wasm_bindgen.replayReport(times, msg.controls, msg.share);
  const copy = times.slice();
  postMessage({ type: 'import-done', summary, report, times: copy }, [copy.buffer]);
}

onmessage = async (event) => {
  const msg = event.data;
  try {
    await load();
    if (msg.type === 'init') {
      study = new wasm_bindgen.Study(msg.runs, msg.minutes, msg.seed, msg.honestOnly);
      postMessage({ type: 'ready' });
    } else if (msg.type === 'job') {
      const t0 = performance.now();
      const result = study.runJob(msg.index);
      postMessage({ type: 'result', index: msg.index, result, ms: performance.now() - t0 });
    } else if (msg.type === 'import') {
      await importFile(msg);
    } else if (msg.type === 'analyze' && times) {
      postMessage({ type: 'analyzed', report: wasm_bindgen.replayReport(times, msg.controls, msg.share), seq: msg.seq });
    }
  } catch (e) {
    postMessage({ type: 'error', of: msg.type, message: String(e?.message ?? e) });
  }
};
