// Minimal plain node:http server limited by rate-limiter-flexible RateLimiterMemory.
// Install: npm install rate-limiter-flexible@11.4.0
// Run:     PORT=3002 [POINTS=5] [DURATION=60] [BLOCK_DURATION=0] node flexible-server.js
// Key = client IP (req.socket.remoteAddress). 429 carries Retry-After = ceil(msBeforeNext / 1000).
'use strict';
const http = require('node:http');
const { RateLimiterMemory } = require('rate-limiter-flexible');

const port = Number(process.env.PORT);
if (!Number.isInteger(port)) { console.error('set PORT'); process.exit(2); }
const limiter = new RateLimiterMemory({
  points: Number(process.env.POINTS ?? 5),          // points and duration are REQUIRED by the library
  duration: Number(process.env.DURATION ?? 60),     // seconds
  blockDuration: Number(process.env.BLOCK_DURATION ?? 0),
});

http.createServer((req, res) => {
  limiter.consume(req.socket.remoteAddress, 1).then(
    () => { res.writeHead(200, { 'Content-Type': 'text/plain' }); res.end('ok\n'); },
    (rej) => {
      if (rej instanceof Error) { res.writeHead(500); res.end('limiter error\n'); return; }
      res.writeHead(429, { 'Content-Type': 'text/plain', 'Retry-After': String(Math.ceil(rej.msBeforeNext / 1000)) });
      res.end('Too Many Requests\n');
    },
  );
}).listen(port, '127.0.0.1', () => console.log(`rate-limiter-flexible server on 127.0.0.1:${port}`));
