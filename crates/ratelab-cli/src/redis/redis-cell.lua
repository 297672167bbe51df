-- ratelab's Redis recipe "redis-cell": redis-cell's own command, CL.THROTTLE, a GCRA kept by
-- the module (redis-server --loadmodule libredis_cell.so). The module reads Redis's clock,
-- not the probe's: ARGV[1] is not used.
--
-- KEYS[1]  the client's key
-- ARGV[1]  now, in µs from the start of the probe (unused)
-- ARGV[2]  LIMIT: count, the requests allowed per period
-- ARGV[3]  W, in µs: the period, a whole number of seconds
-- ARGV[4]  BURST: max_burst
-- ARGV[5]  (unused)
-- ARGV[6]  QUANTITY: the cells each request takes (probe --quantity, 1 unless given)
-- Returns 1 when admitted, 0 when rejected (CL.THROTTLE's first reply: 0 allowed, 1 limited).
local period = math.floor(tonumber(ARGV[3]) / 1000000)
local reply = redis.call('CL.THROTTLE', KEYS[1], ARGV[4], ARGV[2], period, ARGV[6])
if reply[1] == 0 then
  return 1
end
return 0
