// The command line that reproduces the main figure, shown under it. Pure functions, no DOM.

/** `a` as one shell word: as it is when plain, otherwise in single quotes. */
export function shellWord(a) {
  const s = String(a);
  return /^[\w.:=,/-]+$/.test(s) ? s : `'${s}'`;
}

/** The `ratelab` command for the arguments the Rust `Lab` gives with a run (`r.cli`). */
export const commandLine = (args) => ['ratelab', ...args.map(shellWord)].join(' ');
