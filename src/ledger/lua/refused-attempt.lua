--[[
  An attempt the service answered by refusing the API key (401/403): nothing of it goes into the
  record's status, but while the outbox is on it is exported as an `attempt` event, numbered after the
  key's earlier attempts (the record keeps that number as `an`).

  KEYS[1] outbox-on   string present while the outbox is on
  KEYS[2] outbox      stream events for the results of record
  KEYS[3] record      string the key's record
  KEYS[4..3+c]        hash   the fleet's totals and answers per second the attempt's counts add to

  ARGV[1] key, ARGV[2] the attempt as src/ledger/record.ts attemptJson writes it, ARGV[3] c, then the
  attempt's counts per count hash (includes/counts.lua).

  Returns 1 when an event was written, 0 when the outbox is off.
]]
-- @include "record"
-- @include "outbox"
-- @include "counts"

add_counts(4, tonumber(ARGV[3]), 4)
local outbox = outbox_of(KEYS[1], KEYS[2])
if not outbox then return 0 end
local rkey, key, facts = KEYS[3], ARGV[1], ARGV[2]
local head, body = read_record(rkey)
local n = nil
if head then
  n = next_attempt(head)
  head.an = n
  write_record(rkey, head, body)
end
outbox_attempt(outbox, key, n, facts)
return 1
