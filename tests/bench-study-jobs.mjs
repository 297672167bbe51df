// The study's worker module run in Node (V8, as in Chromium), every job of the essay-size study
// one by one on one thread, timed job by job and summed per experiment; with several builds'
// dist/ directories, each job is run by each build in turn, so that the machine's drift weighs
// on them alike. What the page's two workers share out, without the page around it.
// `node tests/bench-study-jobs.mjs [--reps N] DIST [OTHER_DIST...]` after `cargo xtask build`.
import { readFileSync } from 'node:fs';
import vm from 'node:vm';

const args = process.argv.slice(2);
const repsAt = args.indexOf('--reps');
const reps = repsAt >= 0 ? Number(args.splice(repsAt, 2)[1]) : 1;
const dists = args.length ? args : [new URL('../dist', import.meta.url).pathname];

// The module's no-modules bindings expect a worker's global scope.
async function load(dist) {
  const scope = { self: {}, console, TextDecoder, TextEncoder, FinalizationRegistry, WebAssembly, BigInt, Object, Symbol, Error, Array, Uint8Array, DataView, Promise, performance };
  scope.self.ratelabPanicked = (message) => { throw new Error(message); };
  vm.createContext(scope);
  vm.runInContext(`${readFileSync(`${dist}/ratelab-study.js`, 'utf8')};self.bindings = wasm_bindgen;`, scope);
  const bindings = scope.self.bindings;
  await bindings({ module_or_path: readFileSync(`${dist}/ratelab-study_bg.wasm`) });
  return new bindings.Study(20, 2000, 1, false);
}

const studies = [];
for (const d of dists) studies.push(await load(d));
const jobs = studies[0].jobs();
const names = studies[0].experiment ? [...Array(jobs).keys()].map((i) => studies[0].experiment(i)) : Array(jobs).fill('all');
const per = dists.map(() => new Map());
for (let r = 0; r < reps; r++) {
  for (let i = 0; i < jobs; i++) {
    // Each build in turn, the order turned about from job to job.
    const order = [...studies.keys()];
    if ((i + r) % 2) order.reverse();
    for (const k of order) {
      const t0 = performance.now();
      studies[k].runJob(i);
      const ms = performance.now() - t0;
      per[k].set(names[i], (per[k].get(names[i]) ?? 0) + ms / reps);
    }
  }
}
const total = per.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
const rows = [...per[0].keys()].sort((a, b) => per[0].get(b) - per[0].get(a));
const ratio = (x, y) => (dists.length > 1 ? `  ${(y / x).toFixed(3)}` : '');
console.log(`ms per experiment, ${reps} run${reps > 1 ? 's' : ''} of ${jobs} jobs each; columns: ${dists.join(', ')}${dists.length > 1 ? '; then the second over the first' : ''}`);
for (const e of rows) console.log(`${e.padEnd(28)} ${per.map((m) => m.get(e).toFixed(0).padStart(7)).join(' ')}${ratio(per[0].get(e), per[1]?.get(e))}`);
console.log(`${'all'.padEnd(28)} ${total.map((t) => t.toFixed(0).padStart(7)).join(' ')}${ratio(total[0], total[1])}`);
