-- ratelab's Redis recipe "sorted-set": a sliding log kept as a sorted set, the literal rule.
-- Admits when fewer than LIMIT admitted requests fall in the trailing window (now - W, now];
-- a rejected request is not logged.
--
-- KEYS[1]  the client's key
-- ARGV[1]  now, in µs (the probe passes its own clock, so every request has one time base)
-- ARGV[2]  LIMIT
-- ARGV[3]  W, in µs
-- ARGV[4]  (unused: the burst of the gcra recipe)
-- ARGV[5]  a number unique to the request, so two requests at one µs are two members
-- Returns 1 when admitted, 0 when rejected.
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[5])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000) + 1000)
  return 1
end
return 0
