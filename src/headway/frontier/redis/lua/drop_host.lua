-- Mark every QUEUED URL of one host FAILED (they stay admitted and seen).
-- KEYS: 1 worst, 2 ready, 3 totals, 4 lv, 5 nb.  ARGV: 1 host.
-- Returns how many URLs were dropped.
local n = 0
for _, level in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
  local list = level_list(KEYS[4], level)
  n = n + redis.call('LLEN', list)
  redis.call('DEL', list)
end
n = n + redis.call('ZCARD', KEYS[5])
redis.call('DEL', KEYS[4], KEYS[5])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if n > 0 then
  redis.call('HINCRBY', KEYS[3], 'queued', -n)
  redis.call('HINCRBY', KEYS[3], 'failed', n)
end
return n
