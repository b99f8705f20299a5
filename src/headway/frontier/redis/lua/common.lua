-- Shared helpers, prepended to every script of the Redis frontier (see keys.py for the
-- key layout). Every key a script is given arrives in KEYS[]; the only keys a script
-- names itself are a host's level lists, whose names extend the host's levels key
-- (``level_list``), so they carry the same hash tag: the same slot on a Redis Cluster.
-- Scores are passed on as the strings the client sent, so no timestamp is rounded by
-- Lua's number formatting.

-- The last key is the shard's crawl epoch key (epoch.py): without it the crawl's keys
-- are gone (a flush, eviction, a failover to a replica without them) and the script
-- refuses to act, before any write.
if redis.call('EXISTS', KEYS[#KEYS]) == 0 then
  return redis.error_reply('HWLOST crawl epoch key ' .. KEYS[#KEYS] .. ' is missing')
end

-- A queued URL is one string, its member: the id (15 digits) then its record (JSON).
local function member_id(m)
  return string.sub(m, 1, 15)
end

local function member_record(m)
  return string.sub(m, 16)
end

-- The list of a host's fresh URLs of one priority level (oldest first).
local function level_list(lv_key, level)
  return lv_key .. '|' .. level
end

-- Queue a fresh URL (admitted without a not_before) at the tail of its level's list.
local function push_fresh(lv_key, level, m)
  redis.call('ZADD', lv_key, level, level)
  redis.call('RPUSH', level_list(lv_key, level), m)
end

-- Remove the newest URL of a host's worst level; returns it, or nil when the host has
-- no fresh URL.
local function pop_worst(lv_key)
  local top = redis.call('ZRANGE', lv_key, -1, -1)
  if #top == 0 then
    return nil
  end
  local list = level_list(lv_key, top[1])
  local m = redis.call('RPOP', list)
  if redis.call('EXISTS', list) == 0 then
    redis.call('ZREM', lv_key, top[1])
  end
  return m
end

-- Score a host in the shard's worst index by its worst level (hosts with fresh URLs).
local function refresh_worst(worst_key, lv_key, host)
  local top = redis.call('ZRANGE', lv_key, -1, -1, 'WITHSCORES')
  if #top == 0 then
    redis.call('ZREM', worst_key, host)
  else
    redis.call('ZADD', worst_key, top[2], host)
  end
end

-- Recompute a host's ready time in the shard's ready set: ready_at when it has a fresh
-- URL, else max(ready_at, its earliest waiting URL's not_before); a host without queued
-- URLs leaves the set.
local function refresh_host(ready_key, hosts_key, lv_key, nb_key, host)
  local ready_at = redis.call('HGET', hosts_key, host) or '0'
  if redis.call('EXISTS', lv_key) == 1 then
    redis.call('ZADD', ready_key, ready_at, host)
    return
  end
  local first = redis.call('ZRANGE', nb_key, 0, 0, 'WITHSCORES')
  if #first == 0 then
    redis.call('ZREM', ready_key, host)
    return
  end
  local best = ready_at
  if tonumber(first[2]) > tonumber(ready_at) then
    best = first[2]
  end
  redis.call('ZADD', ready_key, best, host)
end
