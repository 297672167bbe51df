// The command line that reproduces the main figure, shown under it. Pure functions, no DOM:
// tests/cli-line.test.mjs imports this file in node.

/** `a` as one POSIX shell word: as it is when it holds only characters no shell treats
 * specially, otherwise in single quotes with each ' written '\'' (close the quotes, an escaped
 * quote, reopen them), as `ratelab probe` quotes its command (crates/ratelab-cli/src/probe.rs). */
export function shellWord(a) {
  const s = String(a);
  return /^[A-Za-z0-9_=:,./%@+-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

/** The `ratelab` command for the arguments the Rust `Lab` gives with a run (`r.cli`). */
export const commandLine = (args) => ['ratelab', ...args.map(shellWord)].join(' ');
