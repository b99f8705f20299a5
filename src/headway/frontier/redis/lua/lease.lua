-- Lease up to n ready URLs of each given host of one shard to one node.
-- KEYS: 1 urls, 2 pq, 3 ready, 4 hosts, 5 leases, 6 totals, 7 owner, then (q, nb) per host.
-- ARGV: 1 now, 2 expires, 3 node, 4 check owner (1/0), 5 host count, then (host, n) pairs.
-- Returns a flat list of (member, record, host index); nothing when ``check owner`` is
-- set and the shard is not held by the node.
local now, expires, node = tonumber(ARGV[1]), ARGV[2], ARGV[3]
if ARGV[4] == '1' and redis.call('GET', KEYS[7]) ~= node then
  return {}
end
local out = {}
local taken = 0
local nhosts = tonumber(ARGV[5])
for h = 1, nhosts do
  local host, want = ARGV[4 + 2 * h], tonumber(ARGV[5 + 2 * h])
  local q_key, nb_key = KEYS[6 + 2 * h], KEYS[7 + 2 * h]
  if want > 0 then
    local waiting = redis.call('ZCARD', nb_key)
    local got = 0
    for _, member in ipairs(redis.call('ZRANGE', q_key, 0, want + waiting - 1)) do
      local ok = true
      if waiting > 0 then
        local nb = redis.call('ZSCORE', nb_key, member)
        if nb and tonumber(nb) > now then ok = false end
      end
      if ok then
        dequeue(KEYS[2], q_key, nb_key, member)
        redis.call('ZADD', KEYS[5], expires, member .. '|' .. node)
        out[#out + 1] = member
        out[#out + 1] = redis.call('HGET', KEYS[1], member)
        out[#out + 1] = h
        got = got + 1
        if got >= want then break end
      end
    end
    if got > 0 then
      taken = taken + got
      refresh_host(KEYS[3], KEYS[4], q_key, nb_key, host)
    end
  end
end
if taken > 0 then
  redis.call('HINCRBY', KEYS[6], 'queued', -taken)
  redis.call('HINCRBY', KEYS[6], 'leased', taken)
end
return out
