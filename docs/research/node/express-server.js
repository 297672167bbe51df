// Minimal express app limited by express-rate-limit (default MemoryStore).
// Install: npm install express@5.3.0 express-rate-limit@8.7.5
// Run:     PORT=3001 [LIMIT=5] [WINDOW_MS=60000] [STANDARD_HEADERS=draft-6|draft-7|draft-8] node express-server.js
// Unset env vars are passed as undefined, which express-rate-limit drops, i.e. its own defaults apply
// (limit 5, windowMs 60000, legacy X-RateLimit-* headers on, standard headers off).
'use strict';
const express = require('express');
const { rateLimit } = require('express-rate-limit');

const num = (v) => (v === undefined || v === '' ? undefined : Number(v));
const port = num(process.env.PORT);
if (!Number.isInteger(port)) { console.error('set PORT'); process.exit(2); }

const app = express();
app.use(rateLimit({
  limit: num(process.env.LIMIT),
  windowMs: num(process.env.WINDOW_MS),
  standardHeaders: process.env.STANDARD_HEADERS || undefined,
}));
app.get('/', (req, res) => res.status(200).send('ok\n'));
app.listen(port, '127.0.0.1', () => console.log(`express-rate-limit server on 127.0.0.1:${port}`));
