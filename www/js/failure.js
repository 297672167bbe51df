// A failure inside the wasm (a panic, reported by the modules' panic hooks, or any uncaught
// error) shows a banner saying what happened, and the figure stops rather than showing
// numbers from a broken module. "Reset" reloads the page with the same link, so nothing the
// reader set is lost. Importing this module installs the handlers (app.js imports it first).

let broken = false;

/** True once a failure has been shown: the main figure stops running. */
export const isBroken = () => broken;

export function showFailure(message) {
  if (broken) return;
  broken = true;
  const banner = document.createElement('div');
  banner.className = 'panic';
  banner.setAttribute('role', 'alert');
  banner.dataset.testid = 'panic-banner';
  const text = document.createElement('p');
  text.textContent = `Something failed inside ratelab, so the page has stopped rather than show wrong numbers: ${String(message).slice(0, 500)}`;
  const reset = document.createElement('button');
  reset.type = 'button';
  reset.dataset.testid = 'panic-reset';
  reset.textContent = 'Reset the page (your settings are kept in its address)';
  reset.addEventListener('click', () => location.reload());
  banner.append(text, reset);
  document.body.prepend(banner);
  reset.focus();
}

// The wasm modules' panic hooks and the workers' messages call this by name.
window.ratelabPanicked = showFailure;
window.addEventListener('error', (e) => showFailure(e.message));
window.addEventListener('unhandledrejection', (e) => showFailure(e.reason?.message ?? e.reason));
