-- ratelab's Redis recipe "fixed-window": one counter per calendar window [kW, (k+1)W),
-- counted from the start of the probe. INCR first, then compare: a rejected request is
-- counted too, which a fixed window forgets at the next boundary anyway.
--
-- KEYS[1]  the client's key (the window's number is appended)
-- ARGV[1]  now, in µs from the start of the probe
-- ARGV[2]  LIMIT
-- ARGV[3]  W, in µs
-- ARGV[4]  (unused)
-- ARGV[5]  (unused)
-- Returns 1 when admitted, 0 when rejected.
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local key = KEYS[1] .. ':' .. string.format('%.0f', math.floor(now / window))
local count = redis.call('INCR', key)
if count == 1 then
  redis.call('PEXPIRE', key, math.ceil(window / 1000) + 1000)
end
if count <= limit then
  return 1
end
return 0
