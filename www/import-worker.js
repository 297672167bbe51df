// A Web Worker (an ES module) reading a reader's traffic file with the tools module
// (ratelab-tools): the file is read in slices, with progress after each, parsed and replayed
// through every limiter here, off the page's thread. The file is read locally and never sent
// anywhere. "Check your config" checks a pasted configuration in a worker of its own.
import init, { Import, replayReport, explainLog, checkConfig } from './ratelab-tools.js';

let times = null;
// The file last read, for "Explain my 429s", which fits its lines (their statuses too).
let file = null;

// A panic in the module reaches the page's banner (the module's panic hook is set as it starts).
self.ratelabPanicked = (message) => postMessage({ type: 'panic', message });
let loaded;
const load = () => (loaded ??= init({ module_or_path: new URL('ratelab-tools_bg.wasm', import.meta.url) }));
// Slices of the file fed to the importer: progress is reported after each one.
const SLICE = 4 << 20;

async function importFile(msg) {
  file = msg.file;
  const importer = new Import(msg.format, msg.field, msg.value);
  for (let at = 0; at < file.size; at += SLICE) {
    importer.feed(new Uint8Array(await file.slice(at, at + SLICE).arrayBuffer()));
    const bytes = Math.min(file.size, at + SLICE);
    postMessage({ type: 'import-progress', bytes, text: importer.progress(bytes, file.size) });
  }
  const summary = importer.finish(msg.file.name);
  times = importer.times();
  const report = replayReport(times, msg.controls, msg.share);
  const copy = times.slice();
  postMessage({ type: 'import-done', summary, report, times: copy }, [copy.buffer]);
}

onmessage = async (event) => {
  const msg = event.data;
  try {
    await load();
    if (msg.type === 'import') {
      await importFile(msg);
    } else if (msg.type === 'fit' && file) {
      const view = explainLog(await file.text(), msg.statuses, msg.perClient);
      postMessage({ type: 'fitted', view, seq: msg.seq });
    } else if (msg.type === 'check') {
      postMessage({ type: 'checked', items: checkConfig(msg.text, msg.window, msg.instances), seq: msg.seq });
    } else if (msg.type === 'analyze' && times) {
      postMessage({ type: 'analyzed', report: replayReport(times, msg.controls, msg.share), seq: msg.seq });
    }
  } catch (e) {
    postMessage({ type: 'error', of: msg.type, message: String(e?.message ?? e) });
  }
};
