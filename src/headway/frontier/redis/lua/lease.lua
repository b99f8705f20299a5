-- Lease up to n ready URLs of each given host of one shard to one node.
-- KEYS: 1 urls, 2 worst, 3 ready, 4 hosts, 5 leases, 6 totals, 7 owner, then (lv, nb)
--       per host.
-- ARGV: 1 now, 2 expires, 3 node, 4 check owner (1/0), 5 mode, 6 host count, then
--       (host, n) pairs.
--   mode: '' by priority only; 'revisits' due revisits (fetches > 0) first, most overdue
--   first; 'new' new URLs (fetches = 0) first; the rest of n by priority either way.
--   By priority: best priority first, then oldest (lowest id) first, over the host's
--   fresh URLs (its level lists) and its waiting URLs that are due.
-- A leased URL's record moves to ``urls`` (id -> record) while it is in flight.
-- Returns a flat list of (id, record, host index); nothing when ``check owner`` is set
-- and the shard is not held by the node.
local now, expires, node = tonumber(ARGV[1]), ARGV[2], ARGV[3]
if ARGV[4] == '1' and redis.call('GET', KEYS[7]) ~= node then
  return {}
end
local mode = ARGV[5]
local out = {}
local taken = 0
local nhosts = tonumber(ARGV[6])

for h = 1, nhosts do
  local host, want = ARGV[5 + 2 * h], tonumber(ARGV[6 + 2 * h])
  local lv_key, nb_key = KEYS[6 + 2 * h], KEYS[7 + 2 * h]
  local got = 0
  local function take(m)
    local id, rec = member_id(m), member_record(m)
    redis.call('HSET', KEYS[1], id, rec)
    redis.call('ZADD', KEYS[5], expires, id .. '|' .. node)
    out[#out + 1] = id
    out[#out + 1] = rec
    out[#out + 1] = h
    got = got + 1
  end
  if want > 0 then
    -- the host's waiting URLs that are due, oldest due time first
    local due = {}
    for _, m in ipairs(redis.call('ZRANGEBYSCORE', nb_key, '-inf', ARGV[1])) do
      local rec = cjson.decode(member_record(m))
      due[#due + 1] = {m = m, id = member_id(m), prio = tonumber(rec[4]),
                       fetches = tonumber(rec[9]) or 0}
    end
    local function take_due(d)
      redis.call('ZREM', nb_key, d.m)
      d.taken = true
      take(d.m)
    end
    -- one pass by priority; kind: nil any, 'new' only fetches = 0 (every fresh URL)
    local function by_priority(kind)
      local cand = {}
      for _, d in ipairs(due) do
        if not d.taken and (kind ~= 'new' or d.fetches == 0) then cand[#cand + 1] = d end
      end
      table.sort(cand, function(a, b)
        if a.prio ~= b.prio then return a.prio < b.prio end
        return a.id < b.id
      end)
      local ci = 1
      local levels = redis.call('ZRANGE', lv_key, 0, -1, 'WITHSCORES')
      local li = 1
      while got < want do
        local head, list
        while li < #levels do
          list = level_list(lv_key, levels[li])
          head = redis.call('LINDEX', list, 0)
          if head then break end
          li = li + 2
        end
        local d = cand[ci]
        if not head and not d then break end
        local level = head and tonumber(levels[li + 1])
        if d and (not head or d.prio < level or (d.prio == level and d.id < member_id(head))) then
          take_due(d)
          ci = ci + 1
        else
          redis.call('LPOP', list)
          if redis.call('EXISTS', list) == 0 then
            redis.call('ZREM', lv_key, levels[li])
          end
          take(head)
        end
      end
    end
    if mode == 'revisits' then
      for _, d in ipairs(due) do
        if got >= want then break end
        if d.fetches > 0 then take_due(d) end
      end
    elseif mode == 'new' then
      by_priority('new')
    end
    if got < want then by_priority(nil) end
    if got > 0 then
      taken = taken + got
      refresh_worst(KEYS[2], lv_key, host)
      refresh_host(KEYS[3], KEYS[4], lv_key, nb_key, host)
    end
  end
end
if taken > 0 then
  redis.call('HINCRBY', KEYS[6], 'queued', -taken)
  redis.call('HINCRBY', KEYS[6], 'leased', taken)
end
return out
