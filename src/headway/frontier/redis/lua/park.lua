-- Park or unpark the pages of one shard that wait for their revisit.
-- KEYS: 1 urls, 2 pq, 3 ready, 4 hosts, 5 totals, 6 parked, then (q, nb) per host.
-- ARGV: 1 mode ('park' | 'unpark'), 2 host count, then the hosts; for 'unpark' then
--       (member, host index) pairs.
--   park: every QUEUED URL of the given hosts with fetches > 0 (it has the revisit
--   priority, store.REVISIT_PRIORITY) leaves its host queue for ``parked``, scored by its
--   not_before (its due time; 0 when its lease was reclaimed: due at once).
--   unpark: each given parked member goes back to its host queue with that due time.
-- Returns how many URLs moved.
local REVISIT = -1000000000  -- store.REVISIT_PRIORITY
local mode, nhosts = ARGV[1], tonumber(ARGV[2])
local moved = 0
local touched = {}
if mode == 'park' then
  for h = 1, nhosts do
    local q_key, nb_key = KEYS[5 + 2 * h], KEYS[6 + 2 * h]
    for _, member in ipairs(redis.call('ZRANGEBYSCORE', q_key, REVISIT, REVISIT)) do
      local rec = cjson.decode(redis.call('HGET', KEYS[1], member))
      if (tonumber(rec[9]) or 0) > 0 then
        local due = redis.call('ZSCORE', nb_key, member) or '0'
        dequeue(KEYS[2], q_key, nb_key, member)
        redis.call('ZADD', KEYS[6], due, member)
        moved = moved + 1
        touched[h] = true
      end
    end
  end
else
  for i = 3 + nhosts, #ARGV, 2 do
    local member, h = ARGV[i], tonumber(ARGV[i + 1])
    local due = redis.call('ZSCORE', KEYS[6], member)
    if due then
      redis.call('ZREM', KEYS[6], member)
      local rec = cjson.decode(redis.call('HGET', KEYS[1], member))
      enqueue(KEYS[2], KEYS[5 + 2 * h], KEYS[6 + 2 * h], member, rec[4], due)
      moved = moved + 1
      touched[h] = true
    end
  end
end
for h, _ in pairs(touched) do
  refresh_host(KEYS[3], KEYS[4], KEYS[5 + 2 * h], KEYS[6 + 2 * h], ARGV[2 + h])
end
if moved > 0 then
  local sign = 1
  if mode == 'park' then sign = -1 end
  redis.call('HINCRBY', KEYS[5], 'queued', sign * moved)
  redis.call('HINCRBY', KEYS[5], 'parked', -sign * moved)
end
return moved
