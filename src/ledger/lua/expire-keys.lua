--[[
  Retention, step 1 (repeated per chunk of a batch's keys): removes the records of keys whose every
  batch has expired, and their external-id index entries. A key that another batch still has stays until
  that batch expires.

  KEYS[1] counts        hash   status -> number of keys
  KEYS[2] external-ids  hash   external_id -> the key that carries it now
  KEYS[3] pending       hash   batch -> keys it still waits for
  KEYS[4] completed     zset   batches complete and not yet reported (score: when)
  KEYS[5] batches       zset   every batch kept (score: created)
  KEYS[6] batch         hash   the batch's record
  KEYS[6+i]             string the record of the i-th key

  ARGV[1] batch id, ARGV[2] now (ms; '' for Redis's clock), ARGV[3] retention (ms), then the keys.

  Returns the number of records removed, or -1 (nothing written) when the batch may not expire (now).
]]
-- @include "clock"
-- @include "record"
-- @include "expiry"

local counts, xkey, pending, completed, batches, bkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local batch, now, retention = ARGV[1], ledger_now(ARGV[2]), tonumber(ARGV[3])
if not expirable(bkey, pending, completed, batch, now, retention) then return -1 end
local removed = 0
for i = 4, #ARGV do
  local key, rkey = ARGV[i], KEYS[3 + i]
  local head = read_record(rkey)
  local kept = false
  if head then
    if head.status ~= 'succeeded' and head.status ~= 'superseded' then kept = true end
    for _, b in ipairs(head.batches or {}) do
      if b ~= batch and redis.call('ZSCORE', batches, b) then kept = true end
    end
    if not kept then
      redis.call('DEL', rkey)
      if redis.call('HGET', xkey, head.eid) == key then redis.call('HDEL', xkey, head.eid) end
      redis.call('HINCRBY', counts, head.status, -1)
      removed = removed + 1
    end
  end
end
return removed
