// The on-demand wasm: the extra module (what scrolling needs: the section figures, the
// mechanism view, probe reports), loaded on this thread once, on first use, and the section
// worker, which computes the section figures' data off the page's thread with it; and the
// tools module (what only an action needs: the study's results, SVG and CSV export, a file's
// import), an ES module imported on first use.

/** Loads the on-demand module (a classic script defining `wasm_bindgen`; its panic hook is set
 * as it starts) once, on first use. */
let extraModule;
export function loadExtra() {
  extraModule ??= new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = 'ratelab-extra.js';
    script.onload = () => {
      /* global wasm_bindgen */
      wasm_bindgen({ module_or_path: 'ratelab-extra_bg.wasm' }).then(() => resolve(wasm_bindgen), reject);
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

/** The section worker, started on first use; `sectionData` asks it for one section's data at
 * the reader's `dials` (`rules` for section 1). */
let sectionWorker = null;
const pending = new Map();
let sectionSeq = 0;
export function sectionData(name, dials) {
  if (!sectionWorker) {
    sectionWorker = new Worker('section-worker.js');
    sectionWorker.onmessage = ({ data: msg }) => {
      if (msg.type === 'panic') { window.ratelabPanicked(msg.message); return; }
      const p = pending.get(msg.seq);
      pending.delete(msg.seq);
      if (msg.type === 'section') p?.resolve(msg.data); else p?.reject(new Error(msg.message));
    };
  }
  const seq = ++sectionSeq;
  return new Promise((resolve, reject) => {
    pending.set(seq, { resolve, reject });
    sectionWorker.postMessage({ seq, name, dials });
  });
}
