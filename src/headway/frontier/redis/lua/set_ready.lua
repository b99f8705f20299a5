-- Persist a host's earliest next fetch time and move it in the shard's ready set.
-- KEYS: 1 ready, 2 hosts, 3 lv, 4 nb.  ARGV: 1 host, 2 ready_at.
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
refresh_host(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1])
return 1
