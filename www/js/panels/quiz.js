// The recall quiz: its questions, answers and explanations are in index.html (each fieldset
// names its right answer in `data-right`); this marks the answers and keeps them in
// localStorage, on this device only. Loaded by lazy.js when the quiz comes near the viewport.
import { $ } from '../dom.js';

const QUIZ_KEY = 'ratelab-recall-v1';

export function startQuiz() {
  const form = $('quiz');
  const items = [...form.querySelectorAll('fieldset')];
  let saved = {};
  try { saved = JSON.parse(localStorage.getItem(QUIZ_KEY) || '{}') || {}; } catch { saved = {}; }
  items.forEach((fs, i) => {
    for (const input of fs.querySelectorAll('input')) input.checked = saved[i] === Number(input.value);
  });
  const score = () => {
    let right = 0;
    let answered = 0;
    items.forEach((fs, i) => {
      const v = saved[i];
      const verdict = fs.querySelector('.verdict');
      const why = fs.querySelector('.why');
      why.hidden = v === undefined;
      if (v === undefined) { verdict.textContent = ''; return; }
      answered += 1;
      const ok = v === Number(fs.dataset.right);
      if (ok) right += 1;
      verdict.textContent = ok ? 'Right.' : 'Not quite.';
    });
    $('quiz-score').textContent = answered ? `${right} of ${items.length} right (${answered} answered).` : '';
  };
  form.addEventListener('change', (e) => {
    const m = /^q(\d+)$/.exec(e.target.name);
    if (!m) return;
    saved[Number(m[1])] = Number(e.target.value);
    try { localStorage.setItem(QUIZ_KEY, JSON.stringify(saved)); } catch { /* storage may be off */ }
    score();
  });
  $('quiz-reset').addEventListener('click', () => {
    saved = {};
    try { localStorage.removeItem(QUIZ_KEY); } catch { /* storage may be off */ }
    for (const input of form.querySelectorAll('input')) input.checked = false;
    score();
  });
  score();
}
