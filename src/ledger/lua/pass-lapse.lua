--[[
  Ends a `run` pass whose lease has lapsed (src/ledger/pass-lease.ts) with the record given, if nothing
  changed since it was read: still open, the same lease (compare-and-set: a pass that ended or renewed
  meanwhile is left as it is).

  KEYS[1] pass-records  hash   pass id -> record (JSON)
  KEYS[2] open-passes   set    the passes that have not ended
  KEYS[3] pass-leases   hash   pass id -> '<ms> <host>:<pid>'

  ARGV[1] id, ARGV[2] the lease as read, ARGV[3] the ended record.

  Returns 1 when it was ended, else 0.
]]
local id = ARGV[1]
if redis.call('SISMEMBER', KEYS[2], id) == 0 then return 0 end
if redis.call('HGET', KEYS[3], id) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], id, ARGV[3])
redis.call('SREM', KEYS[2], id)
redis.call('HDEL', KEYS[3], id)
return 1
