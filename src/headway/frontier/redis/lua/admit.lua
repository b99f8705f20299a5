-- Admit a batch of URL entries of one shard: seen check (one SADD of the fingerprint
-- into its seen bucket: 1 when new), per-host budget with eviction of worse queued URLs,
-- enqueue.
-- KEYS: 1 urls, 2 pq, 3 ready, 4 hosts, 5 admitted, 6 totals, then (q, nb) per host of
--       the batch, then the seen buckets of the batch.
-- ARGV: 1 host budget, 2 shard count, 3 shard, 4 host count, 5 bucket count, then the
--       hosts, then 6 values per entry: bucket index (1-based, among the buckets), fp,
--       host index, priority, not_before, record.
-- Returns {added, duplicates, shed, evicted, queued in shard, {added members}}.
local budget, nshards, shard = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local nhosts, nbuckets = tonumber(ARGV[4]), tonumber(ARGV[5])
local base = 5 + nhosts
local bucket_base = 6 + 2 * nhosts
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
  redis.call('HINCRBY', KEYS[6], 'seen', n)
end
local added = {}
for hidx, g in pairs(groups) do
  local host = ARGV[5 + hidx]
  local q_key, nb_key = KEYS[5 + 2 * hidx], KEYS[6 + 2 * hidx]
  local admitted = tonumber(redis.call('HGET', KEYS[5], host) or '0')
  local room = budget - admitted
  local keep = #g
  if #g > room then
    table.sort(g, function(a, b)
      if a.prio ~= b.prio then return a.prio < b.prio end
      return a.order < b.order
    end)
    keep = math.max(room, 0)
    for i = keep + 1, #g do
      local worst = redis.call('ZRANGE', q_key, -1, -1, 'WITHSCORES')
      if #worst == 0 or g[i].prio >= tonumber(worst[2]) then
        shed = shed + (#g - i + 1)
        break
      end
      dequeue(KEYS[2], q_key, nb_key, worst[1])
      redis.call('HDEL', KEYS[1], worst[1])
      redis.call('HINCRBY', KEYS[6], 'queued', -1)
      admitted = admitted - 1
      evicted = evicted + 1
      shed = shed + 1
      keep = i
    end
  end
  if keep > 0 then
    -- ids seq - keep + 1 .. seq, in the batch's order
    local seq = redis.call('HINCRBY', KEYS[6], 'next_id', keep) - keep
    for i = 1, keep do
      local e = g[i]
      local member = string.format('%015d', (seq + i) * nshards + shard)
      redis.call('HSET', KEYS[1], member, e.rec)
      enqueue_new(KEYS[2], q_key, nb_key, member, e.prio_s, e.nb)
      added[#added + 1] = member
    end
    redis.call('HSET', KEYS[5], host, admitted + keep)
    redis.call('HINCRBY', KEYS[6], 'queued', keep)
  end
  refresh_host(KEYS[3], KEYS[4], q_key, nb_key, host)
end
if shed > 0 then
  redis.call('HINCRBY', KEYS[6], 'shed:host-budget', shed)
end
local queued = tonumber(redis.call('HGET', KEYS[6], 'queued') or '0')
return {#added, dups, shed, evicted, queued, added}
