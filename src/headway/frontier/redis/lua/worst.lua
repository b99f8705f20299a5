-- How many fresh URLs one shard holds at each of its worst priority levels, for shedding
-- when the whole frontier is over ``max_queued``. Writes nothing.
-- KEYS: 1 worst.  ARGV: 1 n, 2 the levels-key name of a host without the host (the
--       shard's ``lv:`` prefix: a host's levels key is it followed by the host).
-- Hosts are read from the worst index, worst first, and only while they can hold a URL
-- worse than the shard's n-th worst (T): the counts above T are exact, the count at T
-- is at least what n needs; the cost is the hosts that hold the n worst URLs.
-- Returns a flat list of (level, count), worst level first.
local n, prefix = tonumber(ARGV[1]), ARGV[2]
local per_level, levels = {}, {}
local threshold = nil  -- once n are counted: the level of the n-th worst
local function update_threshold()
  table.sort(levels, function(a, b) return a > b end)
  local sum = 0
  for _, level in ipairs(levels) do
    sum = sum + per_level[level]
    if sum >= n then
      threshold = level
      return
    end
  end
end
local offset = 0
local done = false
while not done do
  local hosts = redis.call('ZREVRANGE', KEYS[1], offset, offset + 99, 'WITHSCORES')
  if #hosts == 0 then break end
  for i = 1, #hosts, 2 do
    if threshold and tonumber(hosts[i + 1]) <= threshold then
      done = true
      break
    end
    local lv_key = prefix .. hosts[i]
    local own = redis.call('ZREVRANGE', lv_key, 0, -1, 'WITHSCORES')
    for j = 1, #own, 2 do
      local level = tonumber(own[j + 1])
      if threshold and level <= threshold then break end
      if not per_level[level] then
        per_level[level] = 0
        levels[#levels + 1] = level
      end
      per_level[level] = per_level[level] + redis.call('LLEN', level_list(lv_key, own[j]))
    end
    update_threshold()
  end
  offset = offset + 100
end
table.sort(levels, function(a, b) return a > b end)
local out = {}
for _, level in ipairs(levels) do
  if threshold and level < threshold then break end
  out[#out + 1] = level
  out[#out + 1] = per_level[level]
end
return out
