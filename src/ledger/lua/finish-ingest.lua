--[[
  Every row of a batch is registered: the batch completes as soon as no key is pending for it.

  KEYS[1] pending     hash   batch -> keys it still waits for
  KEYS[2] ingesting   set    batches whose ingest is not finished
  KEYS[3] completed   zset   batches complete and not yet reported (score: when)
  KEYS[4] batch       hash   the batch's record

  ARGV[1] batch id, ARGV[2] now (ms; '' for Redis's clock).
]]
-- @include "clock"
-- @include "status"

local pending, ingesting, completed, bkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local batch, now = ARGV[1], ledger_now(ARGV[2])
if redis.call('HGET', bkey, 'ingested') ~= '1' then
  redis.call('HSET', bkey, 'ingested', '1', 'ingested_at', now)
end
redis.call('HSETNX', pending, batch, 0)
redis.call('SREM', ingesting, batch)
complete_if_done(pending, ingesting, completed, batch, now)
return 1
