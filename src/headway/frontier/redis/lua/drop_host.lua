-- Mark every QUEUED URL of one host FAILED (they stay admitted and seen).
-- KEYS: 1 urls, 2 pq, 3 ready, 4 totals, 5 q, 6 nb.  ARGV: 1 host.
-- Returns how many URLs were dropped.
local members = redis.call('ZRANGE', KEYS[5], 0, -1)
for _, member in ipairs(members) do
  redis.call('ZREM', KEYS[2], member)
  redis.call('HDEL', KEYS[1], member)
end
redis.call('DEL', KEYS[5], KEYS[6])
redis.call('ZREM', KEYS[3], ARGV[1])
if #members > 0 then
  redis.call('HINCRBY', KEYS[4], 'queued', -#members)
  redis.call('HINCRBY', KEYS[4], 'failed', #members)
end
return #members
