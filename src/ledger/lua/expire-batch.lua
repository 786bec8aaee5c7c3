--[[
  Retention, step 2 (after step 1 went through all of the batch's keys): removes the batch itself.

  KEYS[1] pending     hash   batch -> keys it still waits for
  KEYS[2] ingesting   set    batches whose ingest is not finished
  KEYS[3] completed   zset   batches complete and not yet reported (score: when)
  KEYS[4] batches     zset   every batch kept (score: created)
  KEYS[5] batch       hash   the batch's record
  KEYS[6] decisions   hash   line -> duplicate | conflict:<key>, for this batch
  KEYS[7] batch-keys  string the batch's keys, 16 bytes each
  KEYS[8] reopened    set    reported batches that wait for a requeued key again

  ARGV[1] batch id, ARGV[2] now (ms; '' for Redis's clock), ARGV[3] retention (ms).

  Returns 1 when removed, 0 (nothing written) when the batch may not expire (now).
]]
-- @include "clock"
-- @include "expiry"

local pending, ingesting, completed, batches = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local batch, now, retention = ARGV[1], ledger_now(ARGV[2]), tonumber(ARGV[3])
if not expirable(KEYS[5], pending, completed, batch, now, retention) then return 0 end
redis.call('DEL', KEYS[5], KEYS[6], KEYS[7])
redis.call('ZREM', batches, batch)
redis.call('HDEL', pending, batch)
redis.call('SREM', ingesting, batch)
redis.call('SREM', KEYS[8], batch)
return 1
