--[[
  Restores records of keys whose final answer Redis's retention forgot, as the results of record
  (PostgreSQL) hold them, for the rows of a batch being ingested: the register script then decides those
  rows as within the retention (a re-drop `duplicate` with the original answer; a changed version
  `conflict` with an earlier success; a corrected version sent, the earlier failure `superseded`). A
  record is written only where the key has none; the batch has the key (its key list, the record's
  `batches`) so retention removes it with the batch. A restored failed key is not put in the failed set:
  it is restored only for a newer version to supersede, never for `retry` to send.

  KEYS[1]     counts        hash   status -> number of keys
  KEYS[2]     external-ids  hash   external_id -> the key that carries it now
  KEYS[3]     batch-keys    string the batch's keys, 16 bytes each
  KEYS[3+i]   string the record of the i-th key

  ARGV[1] batch id, ARGV[2] the keys packed (16 bytes each, in KEYS order), then per key 12 values:
  key, external_id, status (succeeded | failed), line, attempts, first, last, http, cid, ruleset, error,
  body ('' when absent).

  Returns the number of records written.
]]
-- @include "record"

local counts, xkey, kkey = KEYS[1], KEYS[2], KEYS[3]
local batch, packed = ARGV[1], ARGV[2]
local FIELDS = 12
local restored = { succeeded = 0, failed = 0 }
local written = 0
for i = 1, #KEYS - 3 do
  local rkey = KEYS[3 + i]
  local at = 2 + (i - 1) * FIELDS
  local status = ARGV[at + 3]
  if status ~= 'succeeded' and status ~= 'failed' then
    return redis.error_reply('restore: status must be succeeded or failed, not ' .. status)
  end
  if redis.call('EXISTS', rkey) == 0 then
    local key, eid = ARGV[at + 1], ARGV[at + 2]
    local head = { status = status, eid = eid, batches = { batch }, line = tonumber(ARGV[at + 4]),
      attempts = tonumber(ARGV[at + 5]) }
    if ARGV[at + 6] ~= '' then head.first = tonumber(ARGV[at + 6]) end
    if ARGV[at + 7] ~= '' then head.last = tonumber(ARGV[at + 7]) end
    if ARGV[at + 8] ~= '' then head.http = tonumber(ARGV[at + 8]) end
    if ARGV[at + 9] ~= '' then head.cid = ARGV[at + 9] end
    if ARGV[at + 10] ~= '' then head.ruleset = ARGV[at + 10] end
    if ARGV[at + 11] ~= '' then head.error = ARGV[at + 11] end
    write_record(rkey, head, ARGV[at + 12])
    -- Another version of the external_id that Redis still knows keeps the index (as register.lua
    -- leaves it to decide between them); else the index names this key, as for a registered one.
    redis.call('HSETNX', xkey, eid, key)
    redis.call('APPEND', kkey, string.sub(packed, 16 * i - 15, 16 * i))
    restored[status] = restored[status] + 1
    written = written + 1
  end
end
for status, n in pairs(restored) do
  if n > 0 then redis.call('HINCRBY', counts, status, n) end
end
return written
