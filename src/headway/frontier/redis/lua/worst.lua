-- Read the up to n worst fresh URLs of one shard (worst level first, newest first within
-- a level), for shedding when the whole frontier is over ``max_queued``. Writes nothing.
-- KEYS: 1 worst.  ARGV: 1 n, 2 the levels-key name of a host without the host (the
--       shard's ``lv:`` prefix: a host's levels key is it followed by the host).
-- Returns a flat list of (level, member, host).
local n, prefix = tonumber(ARGV[1]), ARGV[2]
local found = {}
local hosts = redis.call('ZREVRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #hosts, 2 do
  local level_of_host = tonumber(hosts[i + 1])
  if #found >= n then
    table.sort(found, function(a, b)
      if a.level ~= b.level then return a.level > b.level end
      return a.m > b.m
    end)
    -- every URL of this host and the ones after is better than the n found
    if level_of_host < found[n].level then break end
  end
  local lv_key = prefix .. hosts[i]
  local levels = redis.call('ZREVRANGE', lv_key, 0, -1, 'WITHSCORES')
  local room = n
  for j = 1, #levels, 2 do
    if room <= 0 then break end
    local ms = redis.call('LRANGE', level_list(lv_key, levels[j]), -room, -1)
    for k = #ms, 1, -1 do
      found[#found + 1] = {level = tonumber(levels[j + 1]), m = ms[k], host = hosts[i]}
    end
    room = room - #ms
  end
end
table.sort(found, function(a, b)
  if a.level ~= b.level then return a.level > b.level end
  return a.m > b.m
end)
local out = {}
for i = 1, math.min(n, #found) do
  out[#out + 1] = found[i].level
  out[#out + 1] = found[i].m
  out[#out + 1] = found[i].host
end
return out
