// The recall quiz: five questions, each answer explained once it is chosen, right or wrong.
// The answers are kept in localStorage, on this device only. Loaded by lazy.js when the quiz
// comes near the viewport (so its text is not part of the first load).
import { $ } from '../dom.js';

const QUIZ = [
  {
    q: 'A fixed window allows 60 a minute. What is the most it can admit within about one second?',
    a: ['60', '120', '180'],
    right: 1,
    why: '120: the window that ends at a boundary and the one that begins there each allow 60, and nothing stops both from being spent in the second around the boundary. That is the boundary burst, 2L in an instant.',
  },
  {
    q: 'A token bucket has capacity B and refills at L per window. Its worst trailing window holds…',
    a: ['L', 'B', 'B + L − 1'],
    right: 2,
    why: 'B + L − 1: a full bucket spends its B tokens at once, and within the same window it refills L − 1 whole tokens more; the L-th comes exactly one window later, outside the half-open window (t − W, t]. The essay rounds this to burst + limit.',
  },
  {
    q: 'Which limiter never lets any trailing window exceed the limit?',
    a: ['Sliding-window counter', 'Sliding log', 'Token bucket with B = L'],
    right: 1,
    why: 'The sliding log: it keeps the time of every admission and admits only while fewer than L sit in the trailing window, which is the rule itself. The counter estimates that count from two fixed windows and can reach 2L; a bucket with B = L reaches 2L − 1.',
  },
  {
    q: 'A sliding log that also records rejected requests, with clients that retry, can…',
    a: ['lock a client out after one spike', 'admit more than the limit', 'forget its history at each boundary'],
    right: 0,
    why: 'Lock a client out: each rejected retry is logged like an admission, so the log stays full for as long as the client keeps retrying, and it keeps rejecting. Recording never makes it admit more, and a log has no boundaries to forget at.',
  },
  {
    q: 'Which number should an API publish beside its rate?',
    a: ['The burst size', 'The server count', 'The median latency'],
    right: 0,
    why: 'The burst size: “100 a minute” with a bucket of 100 allows up to 199 in a minute, so a client needs B to know what it may send and what it must expect from others.',
  },
];
const QUIZ_KEY = 'ratelab-recall-v1';

/** One question's fieldset: the legend, a radio button per answer, the verdict and the why. */
function fieldset(item, i, saved) {
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
  const why = document.createElement('p');
  why.className = 'why';
  why.textContent = item.why;
  fs.append(verdict, why);
  return fs;
}

export function startQuiz() {
  const form = $('quiz');
  let saved = {};
  try { saved = JSON.parse(localStorage.getItem(QUIZ_KEY) || '{}') || {}; } catch { saved = {}; }
  form.replaceChildren(...QUIZ.map((item, i) => fieldset(item, i, saved)));
  const score = () => {
    let right = 0;
    let answered = 0;
    QUIZ.forEach((item, i) => {
      const v = saved[i];
      const fs = form.children[i];
      const verdict = fs.querySelector('.verdict');
      fs.querySelector('.why').hidden = v === undefined;
      if (v === undefined) { verdict.textContent = ''; return; }
      answered += 1;
      if (v === item.right) right += 1;
      verdict.textContent = v === item.right ? 'Right.' : 'Not quite.';
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
