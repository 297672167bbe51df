// Trunk's post-build hook (Trunk.toml): minifies every JavaScript file of a release build in
// Trunk's staging folder with terser (npm, pinned in package-lock.json), before Trunk moves
// it to dist/, and renews the subresource-integrity hashes Trunk wrote into index.html for
// the files it changed (else the browser refuses them). Trunk's own minifier fails on the page's modules and leaves them as written,
// and leaves wasm-bindgen's glue alone; minified, the first screen's JavaScript is about
// 40% lighter gzipped, which is what keeps it within its 150 KB (tests/weight.test.mjs).
//
// ES modules (a file with a top-level `import` or `export`) are minified as modules; the
// classic scripts (the workers and wasm-bindgen's no-modules glue, whose top-level
// `wasm_bindgen` the workers use) keep their top-level names. A file terser can't parse fails
// the build, naming it: it is never shipped half-minified.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { minify } from 'terser';

const staging = process.env.TRUNK_STAGING_DIR;
if (!staging) {
  console.error('minify.mjs: TRUNK_STAGING_DIR is not set (run by Trunk as a post_build hook)');
  process.exit(2);
}
if (process.env.TRUNK_PROFILE !== 'release') process.exit(0);

/** Every .js file under `dir`. */
function scripts(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return scripts(path);
    return name.endsWith('.js') ? [path] : [];
  });
}

let before = 0;
let after = 0;
/** The minified files, by their path relative to the staging folder. */
const changed = new Set();
for (const path of scripts(staging)) {
  const code = readFileSync(path, 'utf8');
  const module = /^(?:import|export)\b/m.test(code);
  let out;
  try {
    out = await minify(code, { module, compress: { passes: 2 }, mangle: true, format: { comments: false } });
  } catch (e) {
    console.error(`minify.mjs: ${relative(staging, path)}: ${e.message} (line ${e.line}, column ${e.col})`);
    process.exit(1);
  }
  writeFileSync(path, out.code);
  changed.add(relative(staging, path));
  before += code.length;
  after += out.code.length;
}

// index.html's `integrity` attributes of the files just changed, recomputed (sha384, as Trunk).
const html = join(staging, 'index.html');
let renewed = 0;
const page = readFileSync(html, 'utf8').replace(/<(?:link|script)\b[^>]*>/g, (tag) => {
  const url = tag.match(/\b(?:href|src)=["']?([^"'\s>]+)/)?.[1];
  const file = url && relative(staging, join(staging, url.split(/[?#]/)[0]));
  if (!file || !changed.has(file) || !/\bintegrity=/.test(tag)) return tag;
  const hash = createHash('sha384').update(readFileSync(join(staging, file))).digest('base64');
  renewed += 1;
  return tag.replace(/\bintegrity=(?:"[^"]*"|'[^']*'|[^\s>]+)/, `integrity="sha384-${hash}"`);
});
writeFileSync(html, page);
console.log(`minify.mjs: JavaScript ${(before / 1024).toFixed(1)} KB → ${(after / 1024).toFixed(1)} KB; ${renewed} integrity hashes renewed`);
