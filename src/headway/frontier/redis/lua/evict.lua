-- Shed queued URLs of one shard because the whole frontier is over ``max_queued``.
-- KEYS: 1 worst, 2 ready, 3 hosts, 4 admitted, 5 totals, then (lv, nb) per host.
-- ARGV: 1 host count, then the hosts, then (member, host index, level) triples (as
--       worst.lua read them).
-- Returns the ids evicted (those still queued).
local nhosts = tonumber(ARGV[1])
local out = {}
local touched = {}
for i = 2 + nhosts, #ARGV, 3 do
  local m, hidx, level = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
  local lv_key = KEYS[4 + 2 * hidx]
  local list = level_list(lv_key, level)
  if redis.call('LREM', list, -1, m) == 1 then
    if redis.call('EXISTS', list) == 0 then
      redis.call('ZREM', lv_key, level)
    end
    redis.call('HINCRBY', KEYS[4], ARGV[1 + hidx], -1)
    out[#out + 1] = member_id(m)
    touched[hidx] = true
  end
end
for hidx, _ in pairs(touched) do
  local lv_key, nb_key = KEYS[4 + 2 * hidx], KEYS[5 + 2 * hidx]
  refresh_worst(KEYS[1], lv_key, ARGV[1 + hidx])
  refresh_host(KEYS[2], KEYS[3], lv_key, nb_key, ARGV[1 + hidx])
end
if #out > 0 then
  redis.call('HINCRBY', KEYS[5], 'queued', -#out)
  redis.call('HINCRBY', KEYS[5], 'shed:frontier-full', #out)
end
return out
