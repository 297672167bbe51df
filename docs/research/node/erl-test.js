// Drives express-rate-limit@8.7.5 with a controlled clock (Date.now stubbed).
// Part A: the real middleware inside a real express app, requests over HTTP.
// Part B: the default MemoryStore directly (randomised worst-case search).
'use strict';
const http = require('node:http');
const express = require('express');
const { rateLimit, MemoryStore } = require('express-rate-limit');

const BASE = 1_700_000_000_123;          // arbitrary epoch ms, deliberately not a whole second
let now = BASE;
const realNow = Date.now;
Date.now = () => now;                     // the only clock ERL reads for decisions
const at = (t) => { now = BASE + t; };

function get(port, path = '/') {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = ''; res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    }).on('error', reject);
  });
}

async function partA() {
  const W = 1000, L = 5;
  const app = express();
  // default options except windowMs/limit; standardHeaders draft-6 on a 2nd route to show those headers
  // The default store is `new MemoryStore()`; it is passed explicitly here ONLY so that its real-time
  // setInterval(clearExpired, windowMs) can be cleared: with a stubbed Date.now a real-time rotation
  // could otherwise drop a key whose (fake) resetTime is still ahead. See timer-test.js for the timer.
  const s1 = new MemoryStore(), s2 = new MemoryStore();
  app.use('/legacy', rateLimit({ windowMs: W, limit: L, store: s1 }));
  app.use('/std', rateLimit({ windowMs: W, limit: L, standardHeaders: 'draft-6', legacyHeaders: false, store: s2 }));
  clearInterval(s1.interval); clearInterval(s2.interval);
  app.get(['/legacy', '/std'], (req, res) => res.send('ok'));
  const srv = app.listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  const port = srv.address().port;

  const log = [];
  const hit = async (t, path = '/legacy') => {
    at(t);
    const r = await get(port, path);
    const h = r.headers;
    const pick = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after',
      'ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']
      .filter((k) => h[k] !== undefined).map((k) => `${k}=${h[k]}`).join(' ');
    const line = `t=${String(t).padStart(5)} ${path.padEnd(7)} ${r.status} ${pick}`;
    console.log(line);
    log.push({ t, ok: r.status === 200 });
    return r;
  };

  console.log(`== A1: worst case, limit=${L} windowMs=${W}; BASE=${BASE} (X-RateLimit-Reset is epoch s of BASE+t)`);
  await hit(0);                                     // opens window [0,1000)
  for (let i = 0; i < L; i++) await hit(W - 1);     // 4 admitted + 1 rejected (rejected still counted)
  for (let i = 0; i < L + 1; i++) await hit(W);     // exactly at resetTime: new window, 5 admitted + 1 rejected
  const admittedIn = (lo, hi) => log.filter((e) => e.ok && e.t > lo && e.t <= hi).length;
  console.log(`admitted in (0,${W}] = ${admittedIn(0, W)}   admitted in [0,${W}] = ${log.filter(e=>e.ok).length}`);

  console.log('== A2: rejected requests are counted; window is NOT extended by hits');
  for (let i = 0; i < 3; i++) await hit(1500);      // count 7,8,9 in window [1000,2000) -> rejected
  await hit(1999);                                  // still rejected (resetTime 2000 > 1999)
  await hit(2000);                                  // resetTime <= now -> reset -> admitted (count 1)

  console.log('== A3: client waits exactly Retry-After seconds');
  for (let i = 0; i < L; i++) await hit(2001);      // count 2..6 -> 4 admitted, the 5th (count 6) rejected
  const r = await hit(2001);                        // rejected, window ends 3000 -> Retry-After ceil(999/1000)=1
  const ra = Number(r.headers['retry-after']);
  await hit(2001 + ra * 1000);                      // t=3001 >= 3000 -> admitted
  // rejection 1 ms before the reset: Retry-After = ceil(1/1000) = 1
  for (let i = 0; i < L; i++) await hit(3999);
  const r2 = await hit(3999);
  await hit(3999 + Number(r2.headers['retry-after']) * 1000);
  // windowMs not a multiple of 1000: see partA2

  console.log('== A4: standardHeaders draft-6 (separate limiter & store on /std)');
  for (let i = 0; i < L + 1; i++) await hit(10000 + i * 100, '/std');
  srv.close();
}

async function partA2() {
  // windowMs = 1500: Retry-After = ceil(remaining/1000) rounds UP, so waiting it is always enough
  const W = 1500, L = 1;
  const app = express();
  const s3 = new MemoryStore();
  app.use(rateLimit({ windowMs: W, limit: L, standardHeaders: 'draft-7', store: s3 }));
  clearInterval(s3.interval);
  app.get('/', (req, res) => res.send('ok'));
  const srv = app.listen(0, '127.0.0.1'); await new Promise((r) => srv.once('listening', r));
  const port = srv.address().port;
  console.log(`== A5: limit=${L} windowMs=${W}, draft-7 + legacy headers`);
  const show = async (t) => { at(t); const r = await get(port);
    console.log(`t=${t} ${r.status} retry-after=${r.headers['retry-after']} ratelimit="${r.headers['ratelimit']}" ratelimit-policy="${r.headers['ratelimit-policy']}" x-ratelimit-remaining=${r.headers['x-ratelimit-remaining']}`); return r; };
  await show(20000);
  const r = await show(20001);                      // remaining 1499 ms -> Retry-After 2
  await show(20001 + Number(r.headers['retry-after']) * 1000 - 1000); // after 1 s: t=21001 < 21500 -> still 429
  await show(20001 + Number(r.headers['retry-after']) * 1000);        // t=22001 -> 200
  srv.close();
}


async function partB2() {
  const W = 1000;
  let worst = {};
  for (let trial = 0; trial < 4000; trial++) {
    const L = 1 + (trial % 5);
    const store = new MemoryStore();
    store.init({ windowMs: W }); clearInterval(store.interval);
    let t = 0; const adm = [];
    const n = 10 + Math.floor(Math.random() * 40);
    for (let i = 0; i < n; i++) {
      const r = Math.random();
      t += r < 0.5 ? 0 : r < 0.75 ? Math.floor(Math.random() * 3) : Math.floor(Math.random() * 1100);
      at(t);
      const c = await store.increment('k');
      if (c.totalHits <= L) adm.push(t);      // middleware rule: reject iff totalHits > limit
    }
    let m = 0;
    for (const end of adm) m = Math.max(m, adm.filter((x) => x > end - W && x <= end).length);
    if (!worst[L] || m > worst[L]) worst[L] = m;
  }
  console.log('== B: randomised search (MemoryStore direct, 4000 patterns): max admitted in any (t-W,t] by limit L:', JSON.stringify(worst), '(2L-1 =', JSON.stringify(Object.fromEntries([1,2,3,4,5].map(l=>[l,2*l-1]))) + ')');
}

async function partA0() {
  // Completely default options: rateLimit() -> limit 5, windowMs 60000, legacy headers only, 429 + message.
  const app = express(); app.use(rateLimit()); app.get('/', (req, res) => res.send('ok'));
  const srv = app.listen(0, '127.0.0.1'); await new Promise((r) => srv.once('listening', r));
  const port = srv.address().port;
  console.log('== A0: rateLimit() with no options (default MemoryStore, its 60 s interval cannot fire during this run)');
  for (let i = 0; i < 6; i++) {
    at(100000 + i * 10000);
    const r = await get(port);
    const h = r.headers;
    console.log(`t=${100000 + i * 10000} ${r.status} X-RateLimit-Limit=${h['x-ratelimit-limit']} X-RateLimit-Remaining=${h['x-ratelimit-remaining']} X-RateLimit-Reset=${h['x-ratelimit-reset']} Retry-After=${h['retry-after']} RateLimit=${h['ratelimit']} RateLimit-Policy=${h['ratelimit-policy']} body=${JSON.stringify(r.body)}`);
  }
  srv.close();
}

(async () => {
  await partA0();
  await partA();
  await partA2();
  await partB2();
  Date.now = realNow;
})();
