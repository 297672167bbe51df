// Drives rate-limiter-flexible@11.4.0 RateLimiterMemory with a controlled clock (Date.now stubbed).
// All storage work in consume() is synchronous and we only await already-settled promises, so the
// per-key real-time setTimeout(delete) can never fire during a run: decisions come from expiresAt only.
'use strict';
const { RateLimiterMemory } = require('rate-limiter-flexible');

const BASE = 1_700_000_000_123;
let now = BASE;
Date.now = () => now;
const at = (t) => { now = BASE + t; };

async function c(rl, t, key = 'k', pts = 1) {
  at(t);
  try { const r = await rl.consume(key, pts); return { ok: true, r }; }
  catch (r) { if (r instanceof Error) throw r; return { ok: false, r }; }
}
const fmt = (t, { ok, r }) =>
  `t=${String(t).padStart(6)} ${ok ? 'ADMIT ' : 'REJECT'} consumed=${r.consumedPoints} remaining=${r.remainingPoints} msBeforeNext=${r.msBeforeNext} first=${r.isFirstInDuration}` +
  (ok ? '' : `  -> Retry-After=ceil(${r.msBeforeNext}/1000)=${Math.ceil(r.msBeforeNext / 1000)}`);
async function run(rl, t, key, pts) { const x = await c(rl, t, key, pts); console.log(fmt(t, x)); return x; }

async function main() {
  const L = 5;
  console.log(`== F1: worst case, points=${L} duration=1 (s)`);
  let rl = new RateLimiterMemory({ points: L, duration: 1 });
  const log = [];
  const rec = async (t) => { const x = await run(rl, t); log.push({ t, ok: x.ok }); return x; };
  await rec(0);
  for (let i = 0; i < L; i++) await rec(999);
  for (let i = 0; i < L + 1; i++) await rec(1000);
  console.log(`admitted in (0,1000] = ${log.filter((e) => e.ok && e.t > 0 && e.t <= 1000).length}`);

  console.log('== F2: rejected consumes are counted; expiry not extended; boundary is expiresAt - now > 0');
  await rec(1500); await rec(1999); await rec(2000);

  console.log('== F3: client waits exactly msBeforeNext ms, or exactly Retry-After=ceil(msBeforeNext/1000) s');
  rl = new RateLimiterMemory({ points: 1, duration: 1.5 });
  await run(rl, 10000);
  let x = await run(rl, 10001);                         // msBeforeNext 1499
  await run(rl, 10001 + x.r.msBeforeNext);              // t=11500 = expiresAt -> new window -> ADMIT
  x = await run(rl, 11501);                             // msBeforeNext 1499, Retry-After 2
  await run(rl, 11501 + 1000);                          // 1 s later: still inside
  await run(rl, 11501 + Math.ceil(x.r.msBeforeNext / 1000) * 1000);   // t=13501 >= 13000 -> ADMIT

  console.log('== F4: blockDuration=3, points=5, duration=1');
  rl = new RateLimiterMemory({ points: L, duration: 1, blockDuration: 3 });
  for (let i = 0; i < L; i++) await run(rl, 20000);
  x = await run(rl, 20100);                             // first over-limit: key re-set to expire at 20100+3000
  await run(rl, 21000);                                 // old 1 s window would have ended: still blocked
  await run(rl, 23099);
  await run(rl, 20100 + Math.ceil(x.r.msBeforeNext / 1000) * 1000);   // wait Retry-After -> ADMIT

  console.log('== F5: blockDuration (1 s) SHORTER than duration (10 s): the block shortens the key lifetime');
  rl = new RateLimiterMemory({ points: L, duration: 10, blockDuration: 1 });
  const log5 = [];
  const r5 = async (t, quiet) => { const y = await c(rl, t); log5.push({ t, ok: y.ok }); if (!quiet) console.log(fmt(t, y)); return y; };
  // window W1 started long ago at -9998 (unblocked, expires at 2), 4 admits at t=1; then from t=2 a new
  // window every 1000 ms, each: 5 admits + 1 reject (the reject re-sets expiry to now+1000).
  await r5(-9998, true); for (let i = 0; i < L - 1; i++) await r5(1, true);
  for (let s = 2; s <= 10000; s += 1000) { for (let i = 0; i < L + 1; i++) await r5(s, s > 2002); }
  console.log(`... admitted in (0,10000] = ${log5.filter((e) => e.ok && e.t > 0 && e.t <= 10000).length}  (without blockDuration the bound is 2*5-1 = 9)`);

  console.log('== F6: execEvenly (points=5, duration=1): admission decision unchanged, resolution delayed');
  rl = new RateLimiterMemory({ points: L, duration: 1, execEvenly: true });
  // Do NOT wait in real time here (the per-key real setTimeout(delete, 1000) would then fire and
  // wipe the key while the fake clock stands still). The decision is read without letting timers run.
  const realST = global.setTimeout;
  let cap = null;
  global.setTimeout = function (fn, ms, ...a) { if (a.length) cap = { ms, res: a[0] }; return realST(fn, ms, ...a); };
  const pend = [];
  for (const t of [30000, 30000, 30000, 30500, 30900, 30950, 30950, 30950]) {
    at(t); cap = null;
    const p = rl.consume('k').then((r) => ({ ok: true, r }), (r) => ({ ok: false, r }));
    pend.push(p);
    // consume() runs synchronously: either it called setTimeout(resolve, delay, res) (delayed ADMIT,
    // captured in `cap`) or it already resolved/rejected, in which case awaiting p needs microtasks only.
    const y = cap ? null : await p;
    if (y) console.log(`t=${t} ${y.ok ? 'ADMIT ' : 'REJECT'} consumed=${y.r.consumedPoints} msBeforeNext=${y.r.msBeforeNext} resolve-delay=0`);
    else console.log(`t=${t} ADMIT  consumed=${cap.res.consumedPoints} remaining=${cap.res.remainingPoints} msBeforeNext(after -delay)=${cap.res.msBeforeNext} resolve-delay=${cap.ms} ms (resolves at t=${t + cap.ms})`);
  }
  global.setTimeout = realST;
  await Promise.all(pend);

  console.log('== F7: randomised worst-case search (no block), max admitted in any (t-D,t]');
  const worst = {};
  for (let trial = 0; trial < 4000; trial++) {
    const P = 1 + (trial % 5);
    const lim = new RateLimiterMemory({ points: P, duration: 1 });
    let t = 0; const adm = [];
    const n = 10 + Math.floor(Math.random() * 40);
    for (let i = 0; i < n; i++) {
      const q = Math.random();
      t += q < 0.5 ? 0 : q < 0.75 ? Math.floor(Math.random() * 3) : Math.floor(Math.random() * 1100);
      if ((await c(lim, t)).ok) adm.push(t);
    }
    let m = 0; for (const e of adm) m = Math.max(m, adm.filter((y) => y > e - 1000 && y <= e).length);
    worst[P] = Math.max(worst[P] || 0, m);
  }
  console.log('points -> max:', JSON.stringify(worst), ' 2L-1:', JSON.stringify({ 1: 1, 2: 3, 3: 5, 4: 7, 5: 9 }));

  console.log('== F8: randomised search with blockDuration < duration (duration=0.01 s=10 ms, blockDuration=0.003 s=3 ms, points 1..3)');
  const formula = (P, D, B) => Math.max(P * (Math.floor((D - 1) / B) + 1), (P - 1) + P * (Math.floor((D - 2) / B) + 1));
  const w8 = {};
  for (let trial = 0; trial < 20000; trial++) {
    const P = 1 + (trial % 3);
    const lim = new RateLimiterMemory({ points: P, duration: 0.01, blockDuration: 0.003 });
    let t = 0; const adm = [];
    for (let i = 0; i < 40; i++) {
      const q = Math.random(); t += q < 0.5 ? 0 : Math.floor(Math.random() * 5);
      if ((await c(lim, t)).ok) adm.push(t);
    }
    let m = 0; for (const e of adm) m = Math.max(m, adm.filter((y) => y > e - 10 && y <= e).length);
    w8[P] = Math.max(w8[P] || 0, m);
  }
  console.log('points -> max found:', JSON.stringify(w8), ' formula:', JSON.stringify({ 1: formula(1, 10, 3), 2: formula(2, 10, 3), 3: formula(3, 10, 3) }));
}
main();
