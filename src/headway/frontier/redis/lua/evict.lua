-- Shed queued URLs of one shard because the whole frontier is over ``max_queued``.
-- KEYS: 1 urls, 2 pq, 3 ready, 4 hosts, 5 admitted, 6 totals, then (q, nb) per host.
-- ARGV: 1 host count, then the hosts, then (member, host index) pairs.
-- Returns the members evicted (those still queued).
local nhosts = tonumber(ARGV[1])
local out = {}
local touched = {}
for i = 2 + nhosts, #ARGV, 2 do
  local member, hidx = ARGV[i], tonumber(ARGV[i + 1])
  local q_key, nb_key = KEYS[5 + 2 * hidx], KEYS[6 + 2 * hidx]
  if dequeue(KEYS[2], q_key, nb_key, member) then
    redis.call('HDEL', KEYS[1], member)
    redis.call('HINCRBY', KEYS[5], ARGV[1 + hidx], -1)
    out[#out + 1] = member
    touched[hidx] = true
  end
end
for hidx, _ in pairs(touched) do
  refresh_host(KEYS[3], KEYS[4], KEYS[5 + 2 * hidx], KEYS[6 + 2 * hidx], ARGV[1 + hidx])
end
if #out > 0 then
  redis.call('HINCRBY', KEYS[6], 'queued', -#out)
  redis.call('HINCRBY', KEYS[6], 'shed:frontier-full', #out)
end
return out
