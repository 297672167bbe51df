// Real-clock experiments on the timer-based expiry of both libraries.
'use strict';
const { MemoryStore } = require('express-rate-limit');
const { RateLimiterMemory } = require('rate-limiter-flexible');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function rlfEarlyTimer() {
  // Does RLF's per-key setTimeout(delete, durationMs) ever fire while Date.now() < expiresAt?
  const rl = new RateLimiterMemory({ points: 1, duration: 0.02 }); // 20 ms windows
  const st = rl._memoryStorage;
  const origDelete = st._storage.delete.bind(st._storage);
  let early = 0, total = 0, maxEarly = 0, late = [];
  st._storage.delete = (k) => {
    const rec = st._storage.get(k); const d = rec.expiresAt - Date.now();
    total++; if (d > 0) { early++; maxEarly = Math.max(maxEarly, d); } else late.push(-d);
    return origDelete(k);
  };
  for (let i = 0; i < 400; i++) rl.consume('k' + i).catch(() => {});
  await sleep(30);
  for (let i = 0; i < 400; i++) { rl.consume('x' + i).catch(() => {}); await sleep(Math.random() * 3); }
  await sleep(60);
  late.sort((a, b) => a - b);
  console.log(`RLF timer deletions: ${total}, fired while expiresAt-Date.now()>0: ${early} (max ${maxEarly} ms early); lateness median ${late[late.length >> 1]} ms max ${late[late.length - 1]} ms`);
}

async function rlfOverflow() {
  // duration*1000 > 2^31-1 -> Node clamps setTimeout delay to 1 ms -> key deleted after ~1 ms
  const rl = new RateLimiterMemory({ points: 1, duration: 30 * 24 * 3600 }); // 30 days
  const out = [];
  for (let i = 0; i < 3; i++) {
    try { const r = await rl.consume('k'); out.push(`admit(consumed=${r.consumedPoints})`); }
    catch (r) { out.push(`reject(msBeforeNext=${r.msBeforeNext})`); }
    await sleep(10);
  }
  const rl2 = new RateLimiterMemory({ points: 1, duration: 30 * 24 * 3600 });
  const out2 = [];
  for (let i = 0; i < 3; i++) {
    try { await rl2.consume('k'); out2.push('admit'); } catch (r) { out2.push('reject'); }
  }
  console.log(`RLF duration=30 days, 3 consumes 10 ms apart: ${out.join(', ')}`);
  console.log(`RLF duration=30 days, 3 consumes back-to-back (same tick): ${out2.join(', ')}`);
}

async function erlOverflow() {
  // windowMs > 2^31-1: ERL's validation only LOGS an error; setInterval is clamped to 1 ms
  const store = new MemoryStore();
  const errs = [];
  store.validations = { windowMs: (w) => errs.push(`validation would flag windowMs=${w}`) };
  store.init({ windowMs: 2 ** 31 });
  const out = [];
  for (let i = 0; i < 3; i++) { const c = await store.increment('k'); out.push(c.totalHits); await sleep(10); }
  console.log(`ERL windowMs=2^31, hits 10 ms apart -> totalHits ${out.join(', ')} (${errs[0]})`);
  store.shutdown();
  const s2 = new MemoryStore(); s2.init({ windowMs: 2 ** 31 });
  const out2 = []; for (let i = 0; i < 3; i++) { const c = await s2.increment('k'); out2.push(c.totalHits); await sleep(1.5); }
  console.log(`ERL windowMs=2^31, hits ~1.5 ms apart (key re-touched each tick) -> totalHits ${out2.join(', ')}`);
  s2.shutdown();
}

async function erlRotation() {
  // ERL normal case: key untouched for >= 2 intervals is dropped; its resetTime had already passed.
  const W = 50; const store = new MemoryStore(); store.init({ windowMs: W });
  const c = await store.increment('k'); const reset = c.resetTime.getTime();
  const where = () => (store.current.has('k') ? 'current' : store.previous.has('k') ? 'previous' : 'gone');
  const seen = [];
  const t0 = Date.now();
  while (Date.now() - t0 < 3 * W) { const w = where(); if (!seen.length || seen[seen.length - 1][0] !== w) seen.push([w, Date.now() - reset]); await sleep(1); }
  console.log(`ERL windowMs=${W}: location of key over time (ms relative to its resetTime): ${seen.map(([w, d]) => `${w}@${d}`).join(' -> ')}`);
  store.shutdown();
}

(async () => {
  await rlfEarlyTimer();
  await rlfOverflow();
  await erlOverflow();
  await erlRotation();
})();
