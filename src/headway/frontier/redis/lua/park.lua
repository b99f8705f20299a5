-- Park or unpark the pages of one shard that wait for their revisit.
-- KEYS: 1 urls, 2 ready, 3 hosts, 4 totals, 5 parked, then (lv, nb) per host.
-- ARGV: 1 mode ('park' | 'unpark'), 2 host count, then the hosts; for 'unpark' then
--       (id, host index) pairs.
--   park: every waiting URL of the given hosts with fetches > 0 and the revisit
--   priority (store.REVISIT_PRIORITY) leaves its host's waiting set for ``parked`` (id
--   scored by its due time; 0 when its lease was reclaimed: due at once), its record
--   for ``urls``.
--   unpark: each given parked id goes back to its host's waiting set with that due time.
-- Returns how many URLs moved.
local REVISIT = -1000000000  -- store.REVISIT_PRIORITY
local mode, nhosts = ARGV[1], tonumber(ARGV[2])
local moved = 0
local touched = {}
if mode == 'park' then
  for h = 1, nhosts do
    local nb_key = KEYS[5 + 2 * h]
    local waiting = redis.call('ZRANGE', nb_key, 0, -1, 'WITHSCORES')
    for i = 1, #waiting, 2 do
      local m = waiting[i]
      local rec = cjson.decode(member_record(m))
      if tonumber(rec[4]) == REVISIT and (tonumber(rec[9]) or 0) > 0 then
        redis.call('ZREM', nb_key, m)
        redis.call('HSET', KEYS[1], member_id(m), member_record(m))
        redis.call('ZADD', KEYS[5], waiting[i + 1], member_id(m))
        moved = moved + 1
        touched[h] = true
      end
    end
  end
else
  for i = 3 + nhosts, #ARGV, 2 do
    local id, h = ARGV[i], tonumber(ARGV[i + 1])
    local due = redis.call('ZSCORE', KEYS[5], id)
    local rec = redis.call('HGET', KEYS[1], id)
    if due and rec then
      redis.call('ZREM', KEYS[5], id)
      redis.call('HDEL', KEYS[1], id)
      redis.call('ZADD', KEYS[5 + 2 * h], due, id .. rec)
      moved = moved + 1
      touched[h] = true
    end
  end
end
for h, _ in pairs(touched) do
  refresh_host(KEYS[2], KEYS[3], KEYS[4 + 2 * h], KEYS[5 + 2 * h], ARGV[2 + h])
end
if moved > 0 then
  local sign = 1
  if mode == 'park' then sign = -1 end
  redis.call('HINCRBY', KEYS[4], 'queued', sign * moved)
  redis.call('HINCRBY', KEYS[4], 'parked', -sign * moved)
end
return moved
