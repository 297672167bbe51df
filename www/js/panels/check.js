// "Check your config": a pasted configuration checked as `ratelab check` does, in a worker
// with the tools module (a check of a long window can take seconds), shown in Rust's words
// (check_view), each limiter with a button that opens the lab on it. Loaded when the reader
// first presses Check; nothing pasted leaves the browser.
import { $ } from '../dom.js';

/** Wires the panel; returns the function that checks what is in the box. `open(query)`
 * opens the lab on a link's query. */
export function startCheck(open) {
  let worker = null, seq = 0;
  // The panel's other fields, made here (the page's first load carries only the box).
  $('check-panel').innerHTML = `<div class="inline-controls">
    <div class="field"><label for="check-window">Window (empty: its own period)</label><input id="check-window" data-testid="check-window" type="text" spellcheck="false" autocomplete="off" placeholder="1min"></div>
    <div class="field"><label for="check-instances">Instances</label><input id="check-instances" data-testid="check-instances" type="number" min="1" max="10000" step="1" value="2" inputmode="numeric"></div>
    <button type="button" id="check-cancel" data-testid="check-cancel" disabled>Cancel</button></div>
    <p class="error" id="check-error" data-testid="check-error" role="alert" hidden></p>
    <p id="check-status" data-testid="check-status" aria-live="polite"></p>
    <div id="check-results" data-testid="check-results"></div>`;
  const sheet = document.createElement('link');
  sheet.rel = 'stylesheet';
  sheet.href = new URL('./check.css', import.meta.url).href;
  document.head.append(sheet);
  const status = $('check-status');
  const problem = (message) => {
    $('check-error').textContent = message;
    $('check-error').hidden = !message;
  };
  const done = (text) => {
    status.textContent = text;
    $('fig-check').dataset.state = 'done'; // (the tests wait for it)
    $('check-run').disabled = false;
    $('check-cancel').disabled = true;
  };
  $('check-cancel').addEventListener('click', () => {
    worker?.terminate();
    worker = null;
    seq += 1;
    done('Check cancelled.');
  });

  /** One limiter the configuration sets: its heading, its findings and the lab's button. */
  const item = (c, i) => {
    const box = document.createElement('article');
    box.className = 'check-item';
    const h = document.createElement('h4');
    const code = document.createElement('code');
    code.textContent = c.heading;
    h.append(code);
    const dl = document.createElement('dl');
    for (const [label, text] of c.lines) {
      const dt = document.createElement('dt');
      dt.textContent = label;
      const dd = document.createElement('dd');
      dd.textContent = text;
      dl.append(dt, dd);
    }
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = 'Open the lab on it';
    button.dataset.testid = `check-lab-${i}`;
    button.disabled = !c.labQuery;
    if (c.labQuery) button.addEventListener('click', () => open(c.labQuery));
    const note = document.createElement('p');
    note.className = 'hint';
    note.textContent = c.labNote;
    const cmd = document.createElement('p');
    cmd.append('The same from the command line: ', Object.assign(document.createElement('code'), { textContent: c.command }));
    box.append(h, dl, button, note, cmd);
    return box;
  };

  return () => {
    problem('');
    const mine = ++seq;
    worker ??= new Worker('import-worker.js', { type: 'module' });
    worker.onmessage = ({ data: msg }) => {
      if (msg.type === 'panic') { window.ratelabPanicked(msg.message); return; }
      if (msg.seq !== undefined && msg.seq !== mine) return;
      if (msg.type === 'checked') {
        $('check-results').replaceChildren(...msg.items.map(item));
        done(`Checked: ${msg.items.length} limiter${msg.items.length === 1 ? '' : 's'} in what you pasted.`);
      } else if (msg.type === 'error') {
        $('check-results').replaceChildren();
        problem(msg.message);
        done('');
      }
    };
    $('check-run').disabled = true;
    $('check-cancel').disabled = false;
    $('fig-check').dataset.state = 'checking';
    status.textContent = 'Checking…';
    worker.postMessage({ type: 'check', text: $('check-text').value, window: $('check-window').value, instances: $('check-instances').value, seq: mine });
  };
}
