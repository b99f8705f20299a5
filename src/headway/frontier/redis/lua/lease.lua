-- Lease up to n ready URLs of each given host of one shard to one node.
-- KEYS: 1 urls, 2 pq, 3 ready, 4 hosts, 5 leases, 6 totals, 7 owner, then (q, nb) per host.
-- ARGV: 1 now, 2 expires, 3 node, 4 check owner (1/0), 5 mode, 6 host count, then
--       (host, n) pairs.
--   mode: '' by priority only; 'revisits' due revisits (fetches > 0) first, most overdue
--   first; 'new' new URLs (fetches = 0) first; the rest of n by priority either way.
-- Returns a flat list of (member, record, host index); nothing when ``check owner`` is
-- set and the shard is not held by the node.
local now, expires, node = tonumber(ARGV[1]), ARGV[2], ARGV[3]
if ARGV[4] == '1' and redis.call('GET', KEYS[7]) ~= node then
  return {}
end
local mode = ARGV[5]
local out = {}
local taken = 0
local nhosts = tonumber(ARGV[6])

-- fetches of a queued URL (record field 9)
local function fetches_of(member)
  local rec = cjson.decode(redis.call('HGET', KEYS[1], member))
  return tonumber(rec[9]) or 0
end

for h = 1, nhosts do
  local host, want = ARGV[5 + 2 * h], tonumber(ARGV[6 + 2 * h])
  local q_key, nb_key = KEYS[6 + 2 * h], KEYS[7 + 2 * h]
  local got = 0
  local function take(member)
    dequeue(KEYS[2], q_key, nb_key, member)
    redis.call('ZADD', KEYS[5], expires, member .. '|' .. node)
    out[#out + 1] = member
    out[#out + 1] = redis.call('HGET', KEYS[1], member)
    out[#out + 1] = h
    got = got + 1
  end
  -- one pass over the host queue by priority; kind: nil any, 'new' only fetches = 0
  local function by_priority(kind)
    local waiting = redis.call('ZCARD', nb_key)
    -- at most ``waiting`` URLs are not yet ready, so this range holds every one needed
    for _, member in ipairs(redis.call('ZRANGE', q_key, 0, want - got + waiting - 1)) do
      if got >= want then break end
      local ok = true
      if waiting > 0 then
        local nb = redis.call('ZSCORE', nb_key, member)
        if nb and tonumber(nb) > now then ok = false end
      end
      -- a new URL with a not_before (a retry) is waiting too, so the range still holds
      -- every new URL needed
      if ok and kind == 'new' and fetches_of(member) > 0 then ok = false end
      if ok then take(member) end
    end
  end
  if want > 0 then
    if mode == 'revisits' then
      for _, member in ipairs(redis.call('ZRANGEBYSCORE', nb_key, '-inf', ARGV[1])) do
        if got >= want then break end
        if fetches_of(member) > 0 then take(member) end
      end
    elseif mode == 'new' then
      by_priority('new')
    end
    if got < want then by_priority(nil) end
    if got > 0 then
      taken = taken + got
      refresh_host(KEYS[3], KEYS[4], q_key, nb_key, host)
    end
  end
end
if taken > 0 then
  redis.call('HINCRBY', KEYS[6], 'queued', -taken)
  redis.call('HINCRBY', KEYS[6], 'leased', taken)
end
return out
