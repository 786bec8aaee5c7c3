--[[
  Renews a `run` pass's lease (src/ledger/pass-lease.ts) while the pass is open and still has one: a
  pass another process has found lapsed and ended is not brought back.

  KEYS[1] open-passes   set    the passes that have not ended
  KEYS[2] pass-leases   hash   pass id -> '<ms> <host>:<pid>'

  ARGV[1] id, ARGV[2] the holder ('<host>:<pid>').

  Returns 1 when renewed, else 0.
]]
-- @include "clock"

if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 or redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[1], ledger_now('') .. ' ' .. ARGV[2])
return 1
