// The Node libraries' limiters for ratelab's probe tests, as their READMEs set them up and
// installed from npm (package-lock.json): express 5 with express-rate-limit 8.7.5 on /erl,
// and rate-limiter-flexible 11.4.0's RateLimiterMemory on /flexible, and with a
// blockDuration of 0.35 s on /flexible-block, each keyed on the probe's X-Probe-Key header so
// that every probe starts from an empty limiter. All allow 5 a second: ratelab's
// express-rate-limit:limit=5,window-ms=1000, rate-limiter-flexible:points=5,duration=1 and
// rate-limiter-flexible:points=5,duration=1,block-duration=0.35. Started by `cargo xtask test` with the port as
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
/** rate-limiter-flexible's limiter `limiter` on `path`, answering a rejection with 429 and
 * Retry-After, as its README's Express example does. */
const serve = (path, limiter) => app.get(path, (req, res) => {
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
serve('/flexible', new flexible.RateLimiterMemory({ points: 5, duration: 1 }));
serve('/flexible-block', new flexible.RateLimiterMemory({ points: 5, duration: 1, blockDuration: 0.35 }));
app.get('/free', (req, res) => res.send('ok\n'));
app.listen(port, '127.0.0.1', () => console.log('listening'));
