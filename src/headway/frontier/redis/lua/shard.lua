-- Shard lease of one node: acquire, renew or release the shard's owner key.
-- KEYS: 1 owner.  ARGV: 1 op (acquire | renew | release), 2 node, 3 ttl in ms.
-- Returns 1 when the node holds the shard after acquire/renew (release: when it did).
local cur = redis.call('GET', KEYS[1])
local op, node = ARGV[1], ARGV[2]
if op == 'acquire' then
  if cur == false then
    redis.call('SET', KEYS[1], node, 'PX', ARGV[3])
    return 1
  end
  if cur == node then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return 1
  end
  return 0
elseif op == 'renew' then
  if cur == node then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return 1
  end
  return 0
else
  if cur == node then
    redis.call('DEL', KEYS[1])
    return 1
  end
  return 0
end
