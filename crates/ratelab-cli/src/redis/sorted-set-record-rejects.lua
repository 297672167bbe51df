-- ratelab's Redis recipe "sorted-set-record-rejects": the sliding log as it is often written,
-- adding the request before counting. Rejected requests stay in the log, so a client that
-- keeps retrying keeps its own window full and is locked out for as long as it retries.
--
-- KEYS[1]  the client's key
-- ARGV[1]  now, in µs
-- ARGV[2]  LIMIT
-- ARGV[3]  W, in µs
-- ARGV[4]  (unused)
-- ARGV[5]  a number unique to the request
-- Returns 1 when admitted, 0 when rejected.
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZADD', KEYS[1], now, ARGV[5])
redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000) + 1000)
-- Counted after adding: this request is one of them.
if redis.call('ZCARD', KEYS[1]) <= limit then
  return 1
end
return 0
