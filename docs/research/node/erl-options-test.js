// Which option wins: max vs limit; limit as function; `headers` alias; standardHeaders:true; limit:0.
'use strict';
const http = require('node:http');
const express = require('express');
const { rateLimit } = require('express-rate-limit');
const get = (port) => new Promise((res) => http.get({ host: '127.0.0.1', port, agent: false }, (r) => { r.resume(); r.on('end', () => res(r)); }));
async function probe(name, opts, n = 4) {
  const app = express(); const logs = [];
  app.use(rateLimit({ ...opts, logger: { warn: (e) => logs.push(e.code), error: (e) => logs.push(e.code) } }));
  app.get('/', (q, s) => s.send('ok'));
  const srv = app.listen(0, '127.0.0.1'); await new Promise((r) => srv.once('listening', r));
  const out = [];
  for (let i = 0; i < n; i++) { const r = await get(srv.address().port); out.push(`${r.statusCode}${r.headers['x-ratelimit-limit'] ? ' X-L=' + r.headers['x-ratelimit-limit'] : ''}${r.headers['ratelimit-limit'] ? ' RL-L=' + r.headers['ratelimit-limit'] : ''}${r.headers['retry-after'] ? ' RA=' + r.headers['retry-after'] : ''}`); }
  srv.close();
  console.log(`${name.padEnd(38)} ${out.join(' | ')}${logs.length ? '   logged: ' + logs.join(',') : ''}`);
}
(async () => {
  await probe('{max:2}', { max: 2 });
  await probe('{limit:2}', { limit: 2 });
  await probe('{max:3, limit:2}', { max: 3, limit: 2 });
  await probe('{limit: async () => 1}', { limit: async () => 1 });
  await probe('{limit:2, headers:false}', { limit: 2, headers: false });
  await probe('{limit:2, standardHeaders:true}', { limit: 2, standardHeaders: true });
  await probe('{limit:2, legacyHeaders:false}', { limit: 2, legacyHeaders: false });
  await probe('{limit:0}', { limit: 0 }, 2);
  await probe('{limit:2, retryAfter: 7}', { limit: 2, retryAfter: 7 });
  await probe('{limit:2, windowMs: 2**31}', { limit: 2, windowMs: 2 ** 31 }, 2);
  process.exit(0);
})();
