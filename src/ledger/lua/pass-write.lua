--[[
  Writes a pass's record (src/ledger/passes.ts), and removes the passes that started before the
  retention's cutoff, with their records.

  KEYS[1] passes        zset   pass id -> when it started (ms)
  KEYS[2] pass-records  hash   pass id -> record (JSON)
  KEYS[3] open-passes   set    the passes that have not ended
  KEYS[4] pass-leases   hash   pass id -> '<ms> <host>:<pid>' (src/ledger/pass-lease.ts)

  ARGV[1] id, ARGV[2] when it started (ms), ARGV[3] the record, ARGV[4] 1 while it has not ended, else 0,
  ARGV[5] the cutoff (ms): a pass that started before it is removed, ARGV[6] the holder of its lease
  ('<host>:<pid>', taken with the start of a `run`; '' for none). An end removes the lease.

  Returns the number of passes removed.
]]
-- @include "clock"

local passes, records, open, leases = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id = ARGV[1]
redis.call('ZADD', passes, ARGV[2], id)
redis.call('HSET', records, id, ARGV[3])
if ARGV[4] == '1' then
  redis.call('SADD', open, id)
  if ARGV[6] ~= '' then redis.call('HSET', leases, id, ledger_now('') .. ' ' .. ARGV[6]) end
else
  redis.call('SREM', open, id)
  redis.call('HDEL', leases, id)
end
local gone = redis.call('ZRANGEBYSCORE', passes, '-inf', '(' .. ARGV[5])
for _, old in ipairs(gone) do
  redis.call('HDEL', records, old)
  redis.call('SREM', open, old)
  redis.call('HDEL', leases, old)
end
if #gone > 0 then redis.call('ZREMRANGEBYSCORE', passes, '-inf', '(' .. ARGV[5]) end
return #gone
