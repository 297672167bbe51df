// rate-limiter-flexible's recipe against brute force: 5 tries in 10 seconds, then a block.
const { RateLimiterMemory } = require('rate-limiter-flexible');

const limiter = new RateLimiterMemory({
  points: 5, // 5 tries
  duration: 10, // per 10 seconds
  blockDuration: 1, // then blocked for a second
});

app.post('/login', (req, res, next) => {
  limiter.consume(req.ip)
    .then(() => next())
    .catch((rej) => res.set('Retry-After', String(Math.ceil(rej.msBeforeNext / 1000))).status(429).send('Too Many Requests'));
});
