-- Admit a batch of URL entries of one shard: seen check (Bloom bitmap probed with one
-- BITFIELD, then the exact set only on a Bloom hit), per-host budget with eviction of
-- worse queued URLs, enqueue.
-- KEYS: 1 bloom, 2 seen, 3 urls, 4 pq, 5 ready, 6 hosts, 7 admitted, 8 totals,
--       then (q, nb) per host of the batch.
-- ARGV: 1 bloom bits, 2 probes, 3 host budget, 4 shard count, 5 shard, 6 host count,
--       then the hosts, then 7 values per entry: fp, h1, h2, host index, priority,
--       not_before, record.
-- Returns {added, duplicates, shed, evicted, queued in shard, {added members}}.
local m, k = tonumber(ARGV[1]), tonumber(ARGV[2])
local budget, nshards, shard = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local nhosts = tonumber(ARGV[6])
local base = 6 + nhosts
local dups, shed, evicted = 0, 0, 0
-- the bitmap is written whole at its size on first use: set bit by bit, Redis would grow
-- the string greedily (doubling), up to twice the size (see docs/scaling.md)
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SET', KEYS[1], string.rep('\0', math.ceil(m / 8)))
end
local groups = {}
local n = 0
for i = base + 1, #ARGV, 7 do
  local fp = ARGV[i]
  local h1, h2 = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local probe = {}
  for j = 0, k - 1 do
    probe[#probe + 1] = 'GET'
    probe[#probe + 1] = 'u1'
    probe[#probe + 1] = (h1 + j * h2) % m
  end
  local maybe = true
  for _, bit in ipairs(redis.call('BITFIELD', KEYS[1], unpack(probe))) do
    if bit == 0 then
      maybe = false
      break
    end
  end
  if maybe and redis.call('SISMEMBER', KEYS[2], fp) == 1 then
    dups = dups + 1
  else
    local set = {}
    for j = 3, #probe, 3 do
      set[#set + 1] = 'SET'
      set[#set + 1] = 'u1'
      set[#set + 1] = probe[j]
      set[#set + 1] = 1
    end
    redis.call('BITFIELD', KEYS[1], unpack(set))
    redis.call('SADD', KEYS[2], fp)
    n = n + 1
    local hidx = tonumber(ARGV[i + 3])
    local g = groups[hidx]
    if not g then
      g = {}
      groups[hidx] = g
    end
    g[#g + 1] = {prio = tonumber(ARGV[i + 4]), prio_s = ARGV[i + 4], nb = ARGV[i + 5],
                 rec = ARGV[i + 6], order = n}
  end
end
if n > 0 then
  redis.call('HINCRBY', KEYS[8], 'seen', n)
end
local added = {}
for hidx, g in pairs(groups) do
  local host = ARGV[6 + hidx]
  local q_key, nb_key = KEYS[7 + 2 * hidx], KEYS[8 + 2 * hidx]
  local admitted = tonumber(redis.call('HGET', KEYS[7], host) or '0')
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
      dequeue(KEYS[4], q_key, nb_key, worst[1])
      redis.call('HDEL', KEYS[3], worst[1])
      redis.call('HINCRBY', KEYS[8], 'queued', -1)
      admitted = admitted - 1
      evicted = evicted + 1
      shed = shed + 1
      keep = i
    end
  end
  for i = 1, keep do
    local e = g[i]
    local seq = redis.call('HINCRBY', KEYS[8], 'next_id', 1)
    local member = string.format('%015d', seq * nshards + shard)
    redis.call('HSET', KEYS[3], member, e.rec)
    enqueue(KEYS[4], q_key, nb_key, member, e.prio_s, e.nb)
    added[#added + 1] = member
  end
  if keep > 0 then
    redis.call('HSET', KEYS[7], host, admitted + keep)
    redis.call('HINCRBY', KEYS[8], 'queued', keep)
  end
  refresh_host(KEYS[5], KEYS[6], q_key, nb_key, host)
end
if shed > 0 then
  redis.call('HINCRBY', KEYS[8], 'shed:host-budget', shed)
end
local queued = tonumber(redis.call('HGET', KEYS[8], 'queued') or '0')
return {#added, dups, shed, evicted, queued, added}
