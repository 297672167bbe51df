// The on-demand wasm: the extra module (what scrolling needs: the section figures, the
// mechanism view, probe reports), loaded on this thread once, on first use, and the section
// worker, which computes the section figures' data off the page's thread with it; and the
// tools module (what only an action needs: the study's results, SVG and CSV export, a file's
// import), an ES module imported on first use.

/** The on-demand module's wasm, fetched and compiled once: this thread and the section worker
 * (which is sent the compiled module) share it, so a reader downloads it once. */
let extraWasm;
function compiledExtra() {
  extraWasm ??= fetch('ratelab-extra_bg.wasm').then((r) => {
    if (!r.ok) throw new Error(`the on-demand module did not load (HTTP ${r.status})`);
    // A host that serves wasm without its MIME type cannot stream it: compile the bytes.
    return WebAssembly.compileStreaming(r.clone()).catch(() => r.arrayBuffer().then((b) => WebAssembly.compile(b)));
  });
  return extraWasm;
}

/** Loads the on-demand module (a classic script defining `wasm_bindgen`; its panic hook is set
 * as it starts) once, on first use. */
let extraModule;
export function loadExtra() {
  extraModule ??= new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = 'ratelab-extra.js';
    script.onload = () => {
      /* global wasm_bindgen */
      compiledExtra().then((module) => wasm_bindgen({ module_or_path: module })).then(() => resolve(wasm_bindgen), reject);
    };
    script.onerror = () => reject(new Error('the on-demand module did not load'));
    document.head.append(script);
  });
  return extraModule;
}

/** Loads the tools module (an ES module; its panic hook is set as it starts) once, on first use. */
let toolsModule;
export function loadTools() {
  toolsModule ??= import('../ratelab-tools.js').then((tools) => tools.default({ module_or_path: new URL('../ratelab-tools_bg.wasm', import.meta.url) }).then(() => tools));
  return toolsModule;
}

/** The section worker, started on first use with the compiled on-demand module; `sectionData`
 * asks it for one section's data at the reader's `dials` (`rules` for section 1). */
let sectionWorker = null;
const pending = new Map();
let sectionSeq = 0;
function startWorker() {
  sectionWorker ??= compiledExtra().then((module) => {
    const worker = new Worker('section-worker.js');
    worker.onmessage = ({ data: msg }) => {
      if (msg.type === 'panic') { window.ratelabPanicked(msg.message); return; }
      const p = pending.get(msg.seq);
      pending.delete(msg.seq);
      if (msg.type === 'section') p?.resolve(msg.data); else p?.reject(new Error(msg.message));
    };
    // Messages arrive in order: the module before any request.
    worker.postMessage({ module });
    return worker;
  });
  return sectionWorker;
}
export function sectionData(name, dials) {
  const seq = ++sectionSeq;
  return new Promise((resolve, reject) => {
    pending.set(seq, { resolve, reject });
    startWorker().then((worker) => worker.postMessage({ seq, name, dials }), (e) => {
      pending.delete(seq);
      reject(e);
    });
  });
}
