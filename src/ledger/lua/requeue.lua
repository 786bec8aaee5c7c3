--[[
  `retry`: a failed key goes back to queued and every batch that has it waits for it again; the key stays
  in `requeuing` until its job exists. A failed key whose external_id has since moved to another key is
  superseded instead: only the newest version of an invoice is ever sent again.

  KEYS[1] counts        hash   status -> number of keys
  KEYS[2] failed        set    keys that ended failed
  KEYS[3] requeuing     set    keys put back to queued whose job may not exist yet
  KEYS[4] pending       hash   batch -> keys it still waits for
  KEYS[5] ingesting     set    batches whose ingest is not finished
  KEYS[6] completed     zset   batches complete and not yet reported (score: when)
  KEYS[7] external-ids  hash   external_id -> the key that carries it now
  KEYS[8] record        string the key's record
  KEYS[9] live record   string the record of the key the index named when the caller read it
  KEYS[10] reopened     set    reported batches that wait for a requeued key again
  KEYS[11] outbox-on    string present while the outbox is on
  KEYS[12] outbox       stream events for the results of record

  ARGV[1] key, ARGV[2] the live key the caller read ('' for none), ARGV[3] now (ms; '' for Redis's clock).

  Returns 'requeued', 'superseded', 'not-failed', or, having written nothing, 'stale': the index no
  longer names ARGV[2]; the caller reads it again. While the outbox is on, the record written goes to it
  as a `record` event.
]]
-- @include "clock"
-- @include "record"
-- @include "status"
-- @include "outbox"
-- @include "requeue"

local g = { counts = KEYS[1], failed = KEYS[2], requeuing = KEYS[3], pending = KEYS[4],
  ingesting = KEYS[5], completed = KEYS[6], reopened = KEYS[10], outbox = outbox_of(KEYS[11], KEYS[12]) }
local xkey, rkey, lkey = KEYS[7], KEYS[8], KEYS[9]
local key, expected, now = ARGV[1], ARGV[2], ledger_now(ARGV[3])
local head, body = read_record(rkey)
if not head or head.status ~= 'failed' then return 'not-failed' end
local live = redis.call('HGET', xkey, head.eid) or ''
if live ~= expected then return 'stale' end
if live ~= '' and live ~= key and redis.call('EXISTS', lkey) == 1 then
  supersede(g, rkey, key, live, now)
  return 'superseded'
end
requeue(g, rkey, key, head)
write_record(rkey, head, body)
outbox_record(g.outbox, key, head, body)
return 'requeued'
