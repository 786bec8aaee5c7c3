--[[
  Restores records of keys that succeeded before Redis's retention forgot them, as the results of
  record (PostgreSQL) hold them, for the rows of a batch being ingested: the register script then
  decides those rows `duplicate` with the original answer. A record is written only where the key has
  none; the batch has the key (its key list, the record's `batches`) so retention removes it with the
  batch.

  KEYS[1]     counts        hash   status -> number of keys
  KEYS[2]     external-ids  hash   external_id -> the key that carries it now
  KEYS[3]     batch-keys    string the batch's keys, 16 bytes each
  KEYS[3+i]   string the record of the i-th key

  ARGV[1] batch id, ARGV[2] the keys packed (16 bytes each, in KEYS order), then per key 10 values:
  key, external_id, line, attempts, first, last, http, cid, ruleset, body ('' when absent).

  Returns the number of records written.
]]
-- @include "record"

local counts, xkey, kkey = KEYS[1], KEYS[2], KEYS[3]
local batch, packed = ARGV[1], ARGV[2]
local FIELDS = 10
local restored = 0
for i = 1, #KEYS - 3 do
  local rkey = KEYS[3 + i]
  local at = 2 + (i - 1) * FIELDS
  if redis.call('EXISTS', rkey) == 0 then
    local key, eid = ARGV[at + 1], ARGV[at + 2]
    local head = { status = 'succeeded', eid = eid, batches = { batch }, line = tonumber(ARGV[at + 3]),
      attempts = tonumber(ARGV[at + 4]) }
    if ARGV[at + 5] ~= '' then head.first = tonumber(ARGV[at + 5]) end
    if ARGV[at + 6] ~= '' then head.last = tonumber(ARGV[at + 6]) end
    if ARGV[at + 7] ~= '' then head.http = tonumber(ARGV[at + 7]) end
    if ARGV[at + 8] ~= '' then head.cid = ARGV[at + 8] end
    if ARGV[at + 9] ~= '' then head.ruleset = ARGV[at + 9] end
    write_record(rkey, head, ARGV[at + 10])
    -- Another version of the external_id that Redis still knows keeps the index (as register.lua
    -- leaves it to decide between them); else the index names this key, as for a registered one.
    redis.call('HSETNX', xkey, eid, key)
    redis.call('APPEND', kkey, string.sub(packed, 16 * i - 15, 16 * i))
    restored = restored + 1
  end
end
if restored > 0 then redis.call('HINCRBY', counts, 'succeeded', restored) end
return restored
