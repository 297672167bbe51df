// Workshop mode: keyboard shortcuts, a presenter view (one section at a time, in large type)
// and a printed handout with every figure drawn. The shortcuts are here; the presenter view
// and the handout (presenter.js) load the first time either is asked for.
import { $ } from './dom.js';

let presenter = null;
const withPresenter = () => (presenter ??= import('./presenter.js'));

/** `actions`: the lab's letter shortcuts; `chooseAlgorithm(i)`: the digits. Returns
 * `{ show(i), presenting() }` for the essay's "Set that up for me" buttons. */
export function startWorkshop(actions, chooseAlgorithm) {
  const keys = $('keys');
  const toggleKeys = (show = keys.hidden) => {
    keys.hidden = !show;
    $('show-keys').setAttribute('aria-expanded', String(show));
  };
  const presenting = () => document.documentElement.classList.contains('presenting');
  const show = (i) => withPresenter().then((p) => p.show(i));
  const present = (on) => withPresenter().then((p) => p.present(on));
  const step = (by) => withPresenter().then((p) => p.step(by));
  $('present').addEventListener('click', () => present(!presenting()));
  $('slide-prev').addEventListener('click', () => step(-1));
  $('slide-next').addEventListener('click', () => step(1));
  $('slide-exit').addEventListener('click', () => present(false));
  $('show-keys').addEventListener('click', () => toggleKeys());
  $('print-handout').addEventListener('click', async () => {
    await (await withPresenter()).drawEverything();
    window.print();
  });
  window.addEventListener('beforeprint', () => { withPresenter().then((p) => p.drawEverything()); });
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    const typing = t instanceof HTMLElement && (t.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(t.tagName) && t.type !== 'checkbox' && t.type !== 'radio' && t.type !== 'range');
    if (e.key === 'Escape') {
      if (!keys.hidden) toggleKeys(false);
      else if (presenting()) present(false);
      return;
    }
    if (typing) return;
    // Arrow keys move a focused slider or radio; they change slides only when nothing else takes them.
    const takesArrows = t instanceof HTMLInputElement && ['range', 'radio'].includes(t.type);
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    let handled = true;
    if (presenting() && (key === 'PageDown' || (key === 'ArrowRight' && !takesArrows))) step(1);
    else if (presenting() && (key === 'PageUp' || (key === 'ArrowLeft' && !takesArrows))) step(-1);
    else if (key === 'p') present(!presenting());
    else if (key === '?') toggleKeys();
    else if (/^[1-9]$/.test(key)) chooseAlgorithm(Number(key) - 1);
    else if (actions[key]) actions[key]();
    else handled = false;
    if (handled) e.preventDefault();
  });
  return { show, presenting };
}
