// The recall quiz: progress is kept in localStorage on this device only.
// Loaded by lazy.js when the quiz comes near the viewport.
import { $ } from '../dom.js';

const QUIZ = [
  { q: 'A fixed window allows 60 a minute. What is the most it can admit within about one second?', a: ['60', '120', '180'], right: 1 },
  { q: 'A token bucket has capacity B and refills at L per window. Its worst trailing window holds…', a: ['L', 'B', 'B + L − 1'], right: 2 },
  { q: 'Which limiter never lets any trailing window exceed the limit?', a: ['Sliding-window counter', 'Sliding log', 'Token bucket with B = L'], right: 1 },
  { q: 'A sliding log that also records rejected requests, with clients that retry, can…', a: ['lock a client out after one spike', 'admit more than the limit', 'forget its history at each boundary'], right: 0 },
  { q: 'Which number should an API publish beside its rate?', a: ['The burst size', 'The server count', 'The median latency'], right: 0 },
];
const QUIZ_KEY = 'ratelab-recall-v1';

export function startQuiz() {
  const form = $('quiz');
  let saved = {};
  try { saved = JSON.parse(localStorage.getItem(QUIZ_KEY) || '{}') || {}; } catch { saved = {}; }
  form.replaceChildren(...QUIZ.map((item, i) => {
    const fs = document.createElement('fieldset');
    const legend = document.createElement('legend');
    legend.textContent = `${i + 1}. ${item.q}`;
    fs.append(legend);
    item.a.forEach((text, j) => {
      const id = `q${i}a${j}`;
      const input = document.createElement('input');
      Object.assign(input, { type: 'radio', name: `q${i}`, id, value: String(j), checked: saved[i] === j });
      const label = document.createElement('label');
      label.htmlFor = id;
      label.textContent = text;
      const row = document.createElement('div');
      row.className = 'choice';
      row.append(input, label);
      fs.append(row);
    });
    const verdict = document.createElement('p');
    verdict.className = 'verdict';
    verdict.setAttribute('aria-live', 'polite');
    fs.append(verdict);
    return fs;
  }));
  const score = () => {
    let right = 0;
    let answered = 0;
    QUIZ.forEach((item, i) => {
      const v = saved[i];
      const verdict = form.children[i].querySelector('.verdict');
      if (v === undefined) { verdict.textContent = ''; return; }
      answered += 1;
      if (v === item.right) { right += 1; verdict.textContent = 'Right.'; } else { verdict.textContent = `Not quite: it is "${item.a[item.right]}".`; }
    });
    $('quiz-score').textContent = answered ? `${right} of ${QUIZ.length} right (${answered} answered).` : '';
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
