-- Shed queued URLs of one shard because the whole frontier is over ``max_queued``: every
-- fresh URL above priority level T (up to ``above``) and ``at`` URLs at level T, newest
-- first, as worst.lua counted them. URLs waiting in ``nb`` (retries, revisits) are never
-- shed.
-- KEYS: 1 worst, 2 ready, 3 hosts, 4 admitted, 5 totals.
-- ARGV: 1 T, 2 at, 3 above, 4 the shard's ``lv:`` prefix, 5 its ``nb:`` prefix (a host's
--       levels and waiting keys are these followed by the host).
-- Returns the ids evicted.
local T, at, above = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {}
local hosts = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', T)
for _, host in ipairs(hosts) do
  if at <= 0 and above <= 0 then break end
  local lv_key = ARGV[4] .. host
  local removed = 0
  for _, level in ipairs(redis.call('ZREVRANGEBYSCORE', lv_key, '+inf', T)) do
    local want = at
    if tonumber(level) > T then want = above end
    if want > 0 then
      local list = level_list(lv_key, level)
      local ms = redis.call('LRANGE', list, -want, -1)
      redis.call('LTRIM', list, 0, -(#ms + 1))
      if redis.call('EXISTS', list) == 0 then
        redis.call('ZREM', lv_key, level)
      end
      for _, m in ipairs(ms) do
        out[#out + 1] = member_id(m)
      end
      removed = removed + #ms
      if tonumber(level) > T then above = above - #ms else at = at - #ms end
    end
  end
  if removed > 0 then
    redis.call('HINCRBY', KEYS[4], host, -removed)
    refresh_worst(KEYS[1], lv_key, host)
    refresh_host(KEYS[2], KEYS[3], lv_key, ARGV[5] .. host, host)
  end
end
if #out > 0 then
  redis.call('HINCRBY', KEYS[5], 'queued', -#out)
  redis.call('HINCRBY', KEYS[5], 'shed:frontier-full', #out)
end
return out
