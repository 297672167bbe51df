-- ratelab's Redis recipe "gcra": the generic cell rate algorithm, a token bucket of BURST
-- written as one stored time, the theoretical arrival time (TAT).
--
-- Times are kept in µs multiplied by LIMIT, so that the emission interval W / LIMIT is the
-- whole number W and nothing is rounded. Lua numbers are doubles, exact to 2^53: with now
-- counted from the start of the probe (at most 1 h) and LIMIT up to 10^6 that is enough.
--
-- KEYS[1]  the client's key
-- ARGV[1]  now, in µs from the start of the probe
-- ARGV[2]  LIMIT
-- ARGV[3]  W, in µs
-- ARGV[4]  BURST: how many may pass at once after a quiet period
-- ARGV[5]  (unused)
-- Returns 1 when admitted, 0 when rejected.
local limit = tonumber(ARGV[2])
local now = tonumber(ARGV[1]) * limit
local interval = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then
  tat = now
end
-- Admitted while the TAT is at most BURST - 1 intervals ahead of now.
if tat - now <= (burst - 1) * interval then
  redis.call('SET', KEYS[1], string.format('%.0f', tat + interval), 'PX',
    math.ceil(burst * interval / limit / 1000) + 1000)
  return 1
end
return 0
