-- Settle leases of one shard (DONE, FAILED, RETRY, REQUEUE, DONE with a revisit), and
-- requeue leases (reclaim of expired leases, release of a node's own leases).
-- KEYS: 1 urls, 2 ready, 3 hosts, 4 leases, 5 totals, then (lv, nb) per host.
-- ARGV: 1 host count, then the hosts, then 6 values per item: lease member
--       ("<id>|<node>"), host index, kind, not_before, expiry bound, validators.
--   kind: done | failed | retry | requeue | revisit | reclaim (attempts unchanged).
--   expiry bound: '' or a time; with a time the lease must have expired before it.
--   validators: '' keeps the stored ones, otherwise '=' followed by the new value.
-- A URL queued again waits in its host's waiting set, due at its not_before (0 for a
-- reclaim: at once).
-- Returns the number of leases settled (items whose lease was not held are ignored).
local nhosts = tonumber(ARGV[1])
local base = 1 + nhosts
local settled = 0
local delta = {queued = 0, leased = 0, done = 0, failed = 0, fetched = 0}
local touched = {}
for i = base + 1, #ARGV, 6 do
  local lease, hidx, kind = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
  local bound = ARGV[i + 4]
  local live = true
  if bound ~= '' then
    local exp = redis.call('ZSCORE', KEYS[4], lease)
    live = exp ~= false and tonumber(exp) < tonumber(bound)
  end
  if live and redis.call('ZREM', KEYS[4], lease) == 1 then
    settled = settled + 1
    delta.leased = delta.leased - 1
    local id = string.sub(lease, 1, string.find(lease, '|', 1, true) - 1)
    if kind == 'done' then
      redis.call('HDEL', KEYS[1], id)
      delta.done = delta.done + 1
      delta.fetched = delta.fetched + 1
    elseif kind == 'failed' then
      redis.call('HDEL', KEYS[1], id)
      delta.failed = delta.failed + 1
    else
      local rec = cjson.decode(redis.call('HGET', KEYS[1], id))
      -- record: url, host, depth, priority, fp, via, attempts, validators, fetches
      -- [, handler] (the rest of the record is kept as it is)
      if kind == 'retry' then
        rec[7] = rec[7] + 1
      elseif kind == 'revisit' then
        delta.fetched = delta.fetched + 1
        rec[7] = 0
        rec[9] = rec[9] + 1
        rec[4] = -1000000000  -- store.REVISIT_PRIORITY: never shed while it waits
      end
      local v = ARGV[i + 5]
      if v ~= '' then rec[8] = string.sub(v, 2) end
      redis.call('HDEL', KEYS[1], id)
      local nb = ARGV[i + 3]
      if kind == 'reclaim' then nb = '0' end
      redis.call('ZADD', KEYS[5 + 2 * hidx], nb, id .. cjson.encode(rec))
      delta.queued = delta.queued + 1
      touched[hidx] = true
    end
  end
end
for hidx, _ in pairs(touched) do
  refresh_host(KEYS[2], KEYS[3], KEYS[4 + 2 * hidx], KEYS[5 + 2 * hidx], ARGV[1 + hidx])
end
for name, d in pairs(delta) do
  if d ~= 0 then redis.call('HINCRBY', KEYS[5], name, d) end
end
return settled
