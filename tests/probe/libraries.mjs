// The Node libraries' limiters for ratelab's probe tests, as their READMEs set them up and
// installed from npm (package-lock.json): express 5 with express-rate-limit 8.7.5 on /erl,
// and rate-limiter-flexible 11.4.0's RateLimiterMemory on /flexible, each keyed on the
// probe's X-Probe-Key header so that every probe starts from an empty limiter. Both allow 5
// a second: ratelab's express-rate-limit:limit=5,window-ms=1000 and
// rate-limiter-flexible:points=5,duration=1. Started by `cargo xtask test` with the port as
// its one argument; it prints "listening" once it accepts connections.
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import flexible from 'rate-limiter-flexible';

const port = Number(process.argv[2]);
if (!Number.isInteger(port)) {
  console.error('usage: node libraries.mjs PORT');
  process.exit(2);
}
const key = (req) => req.get('x-probe-key') ?? 'no-key';
const app = express();
app.get(
  '/erl',
  rateLimit({ limit: 5, windowMs: 1000, keyGenerator: key, validate: false }),
  (req, res) => res.send('ok\n'),
);
const limiter = new flexible.RateLimiterMemory({ points: 5, duration: 1 });
app.get('/flexible', (req, res) => {
  limiter.consume(key(req), 1).then(
    () => res.send('ok\n'),
    (rej) => {
      if (rej instanceof Error) {
        res.status(500).send('limiter error\n');
        return;
      }
      res.set('Retry-After', String(Math.ceil(rej.msBeforeNext / 1000)));
      res.status(429).send('Too Many Requests\n');
    },
  );
});
app.get('/free', (req, res) => res.send('ok\n'));
app.listen(port, '127.0.0.1', () => console.log('listening'));
