-- Shared helpers, prepended to every script of the Redis frontier (see keys.py for the
-- key layout). All keys a script touches arrive in KEYS[]; scores are passed on as the
-- strings the client sent, so no timestamp is rounded by Lua's number formatting.

-- The last key is the shard's crawl epoch key (epoch.py): without it the crawl's keys
-- are gone (a flush, eviction, a failover to a replica without them) and the script
-- refuses to act, before any write.
if redis.call('EXISTS', KEYS[#KEYS]) == 0 then
  return redis.error_reply('HWLOST crawl epoch key ' .. KEYS[#KEYS] .. ' is missing')
end

-- Recompute a host's ready time, max(ready_at, earliest queued not_before), in the
-- shard's ready set; a host without queued URLs leaves the set.
local function refresh_host(ready_key, hosts_key, q_key, nb_key, host)
  local queued = redis.call('ZCARD', q_key)
  if queued == 0 then
    redis.call('ZREM', ready_key, host)
    return
  end
  local ready_at = redis.call('HGET', hosts_key, host) or '0'
  local best = ready_at
  if redis.call('ZCARD', nb_key) >= queued then
    local first = redis.call('ZRANGE', nb_key, 0, 0, 'WITHSCORES')
    if tonumber(first[2]) > tonumber(ready_at) then
      best = first[2]
    end
  end
  redis.call('ZADD', ready_key, best, host)
end

-- Put a URL (record already stored) into its host queue as QUEUED.
local function enqueue(pq_key, q_key, nb_key, member, priority, not_before)
  redis.call('ZADD', q_key, priority, member)
  redis.call('ZADD', pq_key, priority, member)
  if tonumber(not_before) > 0 then
    redis.call('ZADD', nb_key, not_before, member)
  else
    redis.call('ZREM', nb_key, member)
  end
end

-- Put a URL just admitted (a new member: in no waiting set) into its host queue.
local function enqueue_new(pq_key, q_key, nb_key, member, priority, not_before)
  redis.call('ZADD', q_key, priority, member)
  redis.call('ZADD', pq_key, priority, member)
  if tonumber(not_before) > 0 then
    redis.call('ZADD', nb_key, not_before, member)
  end
end

-- Remove a QUEUED URL from every queue index; true when it was queued.
local function dequeue(pq_key, q_key, nb_key, member)
  if redis.call('ZREM', q_key, member) == 0 then
    return false
  end
  redis.call('ZREM', pq_key, member)
  redis.call('ZREM', nb_key, member)
  return true
end
