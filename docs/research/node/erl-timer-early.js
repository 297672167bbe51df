// Does ERL's setInterval rotation ever discard a client whose resetTime is still in the future?
'use strict';
const { MemoryStore } = require('express-rate-limit');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
(async () => {
  const W = 20; const store = new MemoryStore(); store.init({ windowMs: W });
  const orig = store.clearExpired.bind(store);
  let dropped = 0, early = 0, maxEarly = 0;
  store.clearExpired = () => {
    const now = Date.now();
    for (const c of store.previous.values()) { dropped++; const d = c.resetTime.getTime() - now; if (d > 0) { early++; maxEarly = Math.max(maxEarly, d); } }
    orig();
  };
  clearInterval(store.interval); store.interval = setInterval(() => store.clearExpired(), W);
  for (let i = 0; i < 1500; i++) { await store.increment('k' + i); if (Math.random() < 0.5) await sleep(Math.random() * 2); }
  await sleep(3 * W);
  console.log(`ERL interval rotation: clients discarded ${dropped}, of which resetTime still in the future: ${early} (max ${maxEarly} ms)`);
  store.shutdown();
})();
