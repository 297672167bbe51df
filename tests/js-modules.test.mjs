// The page's JavaScript stays split by concern: every file under www/ is at most 250 lines,
// and no module imports itself back, through static imports or dynamic `import()` alike (a
// cycle among ES modules runs one of them before its imports are ready, and an import() back
// would hide one). No browser needed: the imports are read from the sources.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, posix, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAX_LINES = 250;
const www = join(dirname(fileURLToPath(import.meta.url)), '..', 'www');
const sources = readdirSync(www, { recursive: true }).map((f) => f.split(sep).join('/')).filter((f) => f.endsWith('.js')).sort();

/** The module specifiers `text` imports: `import … from '…'`, `import '…'`, `export … from
 * '…'` and `import('…')`, comments left out. An `import()` of anything but a string literal
 * is reported as `null`: the check cannot follow it. */
export function importsOf(text) {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out = [];
  for (const m of code.matchAll(/(?:^|[;\s}])(?:import|export)\b[^'"();]*?\bfrom\s*(["'])([^"']+)\1|(?:^|[;\s])import\s*(["'])([^"']+)\3/g)) out.push(m[2] ?? m[4]);
  for (const m of code.matchAll(/\bimport\s*\(\s*([^)]*?)\s*\)/g)) {
    const lit = /^(["'`])([^"'`$]+)\1$/.exec(m[1]);
    out.push(lit ? lit[2] : null);
  }
  return out;
}

/** The first cycle in `graph` (file → files it imports) as a path that ends where it starts,
 * or null. */
export function findCycle(graph) {
  const state = new Map(); // 1: on the current path, 2: done
  const path = [];
  const visit = (f) => {
    if (state.get(f) === 2) return null;
    if (state.get(f) === 1) return [...path.slice(path.indexOf(f)), f];
    state.set(f, 1);
    path.push(f);
    for (const g of graph.get(f) ?? []) {
      const cycle = visit(g);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(f, 2);
    return null;
  };
  for (const f of graph.keys()) {
    const cycle = visit(f);
    if (cycle) return cycle;
  }
  return null;
}

/** www/'s import graph, by paths under www/; throws on an import it cannot follow. */
function graphOfWww() {
  const graph = new Map();
  for (const f of sources) {
    const deps = [];
    for (const spec of importsOf(readFileSync(join(www, f), 'utf8'))) {
      assert.ok(spec !== null, `www/${f}: an import() of a computed name, which this check cannot follow; import a string literal`);
      assert.ok(/^\.\.?\//.test(spec), `www/${f}: import of '${spec}', which is not a relative path to one of the page's modules`);
      const dep = posix.normalize(posix.join(posix.dirname(f), spec));
      // A wasm module's bindings, which wasm-bindgen writes into dist/ from its crate: a leaf,
      // importing nothing of the page's.
      const crate = /^(ratelab-[a-z]+)\.js$/.exec(dep)?.[1];
      if (crate && existsSync(join(www, '..', 'crates', crate, 'Cargo.toml'))) continue;
      assert.ok(existsSync(join(www, dep)), `www/${f}: imports '${spec}', and there is no www/${dep}`);
      deps.push(dep);
    }
    graph.set(f, deps);
  }
  return graph;
}

test('the cycle finder finds a planted cycle and passes a graph without one', () => {
  assert.deepEqual(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', []]])), ['a', 'b', 'c', 'a']);
  assert.deepEqual(findCycle(new Map([['a', ['a']]])), ['a', 'a']);
  assert.equal(findCycle(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]])), null);
  assert.deepEqual(importsOf("import { a } from './a.js';\nimport './b.js';\nexport { c } from \"./c.js\";\nconst d = () => import('./d.js');\n// import('./not-me.js')\nimport(name);"),
    ['./a.js', './b.js', './c.js', './d.js', null]);
});

test('no import cycle among the modules under www/, static or dynamic', () => {
  const graph = graphOfWww();
  // The split is what this guards: app.js and the modules under js/ are all read.
  assert.ok(graph.has('app.js') && [...graph.keys()].some((f) => f.startsWith('js/')), `read: ${[...graph.keys()]}`);
  const cycle = findCycle(graph);
  assert.equal(cycle, null, `import cycle: ${cycle?.map((f) => `www/${f}`).join(' → ')}`);
});

test(`no file under www/ is over ${MAX_LINES} lines`, () => {
  const long = sources.map((f) => [f, readFileSync(join(www, f), 'utf8').replace(/\n$/, '').split('\n').length]).filter(([, n]) => n > MAX_LINES);
  assert.deepEqual(long.map(([f, n]) => `www/${f}: ${n} lines`), [], `split these by concern (at most ${MAX_LINES} lines each)`);
});
