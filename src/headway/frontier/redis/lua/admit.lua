-- Admit a batch of URL entries of one shard: seen check (one SADD of the fingerprint
-- into its seen bucket: 1 when new), per-host budget with eviction of worse queued URLs,
-- enqueue (a fresh URL at the tail of its level's list, one with a not_before in the
-- host's waiting set).
-- KEYS: 1 worst, 2 ready, 3 hosts, 4 admitted, 5 totals, then (lv, nb) per host of the
--       batch, then the seen buckets of the batch.
-- ARGV: 1 host budget, 2 shard count, 3 shard, 4 host count, 5 bucket count, then the
--       hosts, then 6 values per entry: bucket index (1-based, among the buckets), fp,
--       host index, priority, not_before, record.
-- Returns {added, duplicates, shed, evicted, queued in shard, {added ids}}.
local budget, nshards, shard = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local nhosts = tonumber(ARGV[4])
local base = 5 + nhosts
local bucket_base = 5 + 2 * nhosts
local dups, shed, evicted = 0, 0, 0
local groups = {}
local n = 0
for i = base + 1, #ARGV, 6 do
  if redis.call('SADD', KEYS[bucket_base + tonumber(ARGV[i])], ARGV[i + 1]) == 0 then
    dups = dups + 1
  else
    n = n + 1
    local hidx = tonumber(ARGV[i + 2])
    local g = groups[hidx]
    if not g then
      g = {}
      groups[hidx] = g
    end
    g[#g + 1] = {prio = tonumber(ARGV[i + 3]), prio_s = ARGV[i + 3], nb = ARGV[i + 4],
                 rec = ARGV[i + 5], order = n}
  end
end
if n > 0 then
  redis.call('HINCRBY', KEYS[5], 'seen', n)
end
local added = {}
for hidx, g in pairs(groups) do
  local host = ARGV[5 + hidx]
  local lv_key, nb_key = KEYS[4 + 2 * hidx], KEYS[5 + 2 * hidx]
  local admitted = tonumber(redis.call('HGET', KEYS[4], host) or '0')
  local room = budget - admitted
  local keep = #g
  if #g > room then
    table.sort(g, function(a, b)
      if a.prio ~= b.prio then return a.prio < b.prio end
      return a.order < b.order
    end)
    keep = math.max(room, 0)
    for i = keep + 1, #g do
      local worst = redis.call('ZRANGE', lv_key, -1, -1, 'WITHSCORES')
      if #worst == 0 or g[i].prio >= tonumber(worst[2]) then
        shed = shed + (#g - i + 1)
        break
      end
      pop_worst(lv_key)
      redis.call('HINCRBY', KEYS[5], 'queued', -1)
      admitted = admitted - 1
      evicted = evicted + 1
      shed = shed + 1
      keep = i
    end
  end
  if keep > 0 then
    -- ids seq + 1 .. seq + keep, in the batch's order
    local seq = redis.call('HINCRBY', KEYS[5], 'next_id', keep) - keep
    for i = 1, keep do
      local e = g[i]
      local id = string.format('%015d', (seq + i) * nshards + shard)
      if tonumber(e.nb) > 0 then
        redis.call('ZADD', nb_key, e.nb, id .. e.rec)
      else
        push_fresh(lv_key, e.prio_s, id .. e.rec)
      end
      added[#added + 1] = id
    end
    redis.call('HSET', KEYS[4], host, admitted + keep)
    redis.call('HINCRBY', KEYS[5], 'queued', keep)
  end
  refresh_worst(KEYS[1], lv_key, host)
  refresh_host(KEYS[2], KEYS[3], lv_key, nb_key, host)
end
if shed > 0 then
  redis.call('HINCRBY', KEYS[5], 'shed:host-budget', shed)
end
local queued = tonumber(redis.call('HGET', KEYS[5], 'queued') or '0')
return {#added, dups, shed, evicted, queued, added}
