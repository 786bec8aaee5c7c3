--[[
  Registers rows of a batch (a chunk of its file, in file order) and decides each.

  KEYS[1]  counts        hash   status -> number of keys
  KEYS[2]  failed        set    keys that ended failed
  KEYS[3]  requeuing     set    keys put back to queued whose job may not exist yet
  KEYS[4]  pending       hash   batch -> keys it still waits for
  KEYS[5]  ingesting     set    batches whose ingest is not finished
  KEYS[6]  completed     zset   batches complete and not yet reported (score: when)
  KEYS[7]  external-ids  hash   external_id -> the key that carries it now
  KEYS[8]  batch         hash   the batch's record
  KEYS[9]  decisions     hash   line -> duplicate | conflict:<key>, for this batch
  KEYS[10] batch-keys    string the batch's keys, 16 bytes each
  KEYS[11] reopened      set    reported batches that wait for a requeued key again
  KEYS[12] outbox-on     string present while the outbox is on
  KEYS[13] outbox        stream events for the results of record
  KEYS[14 .. 13+n]       string the record of each row's key
  KEYS[14+n ..]          string the record of each key named in ARGV[5+3n ..]

  ARGV[1] batch id, ARGV[2] now (ms; '' for Redis's clock), ARGV[3] the rows' keys packed (16 bytes
  each, row order), ARGV[4] n, then per row: line, key, external_id; then the keys whose records follow
  the rows' in KEYS (what the external-id index named for the rows' external_ids when the caller read it).

  Returns one decision per row: new | requeue | join | queued | retrying | succeeded | failed |
  superseded | duplicate | conflict:<earlier key> (see src/ledger/statuses.ts); or, having written
  nothing, {'stale', key...}: the external-id index names keys whose records are not declared; the caller
  declares them and calls again. The batch remembers the last line it registered, so a re-run after a
  crash gets the same decisions and counts nothing twice, while a first pass skips those look-ups. The
  index and the records are read in one call each, and written, like the batch's new keys, in one each.
  While the outbox is on, each record requeued or superseded writes a `record` event; a new one writes
  none (its row reaches the results of record with its first answer).
]]
-- @include "clock"
-- @include "record"
-- @include "status"
-- @include "outbox"
-- @include "requeue"

local g = { counts = KEYS[1], failed = KEYS[2], requeuing = KEYS[3], pending = KEYS[4],
  ingesting = KEYS[5], completed = KEYS[6], reopened = KEYS[11], outbox = outbox_of(KEYS[12], KEYS[13]) }
local xkey, bkey, dkey, kkey = KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local batch, now, packed, n = ARGV[1], ledger_now(ARGV[2]), ARGV[3], tonumber(ARGV[4])

-- Where each key's record is declared; every live key must be among them before anything is written.
local declared = {}
for i = 1, n do declared[ARGV[4 + 3 * i - 1]] = KEYS[13 + i] end
for j = 5 + 3 * n, #ARGV do declared[ARGV[j]] = KEYS[13 + n + (j - 4 - 3 * n)] end
-- What the index names for the rows' external_ids, read in one HMGET.
local lives, eids, missing = {}, {}, {}
for i = 1, n do
  local eid = ARGV[4 + 3 * i]
  if lives[eid] == nil then
    lives[eid] = false
    eids[#eids + 1] = eid
  end
end
local named = call_on_list('HMGET', xkey, eids)
for j, eid in ipairs(eids) do
  local live = named[j]
  lives[eid] = live or false
  if live and not declared[live] then missing[#missing + 1] = live end
end
if #missing > 0 then
  table.insert(missing, 1, 'stale')
  return missing
end
local rkeys = {}
for k = 14, #KEYS do rkeys[#rkeys + 1] = KEYS[k] end
read_records_ahead(rkeys)
write_records_at_end()

if redis.call('HGET', bkey, 'ingested') ~= '1' then
  redis.call('SADD', g.ingesting, batch)
  redis.call('HSETNX', g.pending, batch, 0)
end
local seen = tonumber(redis.call('HGET', bkey, 'registered_line') or '-1')
local out = {}
local pending, queued, last = 0, 0, seen
local added_keys, index_writes = {}, {}
for i = 1, n do
  local line, key, eid = ARGV[4 + 3 * i - 2], ARGV[4 + 3 * i - 1], ARGV[4 + 3 * i]
  local at = tonumber(line)
  local rkey = KEYS[13 + i]
  local head, body = read_record(rkey)
  local decided = nil
  if at <= seen then
    decided = redis.call('HGET', dkey, line)
    if not decided and head and has(head.batches, batch) then decided = head.status end
  end
  if decided then
    out[i] = decided
  else
    local live = lives[eid]
    local verdict = nil
    if live and live ~= key then
      local other = read_record(declared[live])
      local s = other and other.status
      if s == 'succeeded' or s == 'queued' or s == 'retrying' then verdict = 'conflict:' .. live end
    end
    if not verdict and head and head.status == 'succeeded' then verdict = 'duplicate' end
    if verdict then
      redis.call('HSET', dkey, line, verdict)
      out[i] = verdict
    else
      if live ~= key then
        index_writes[#index_writes + 1] = eid
        index_writes[#index_writes + 1] = key
        lives[eid] = key
        if live then supersede(g, declared[live], live, key, now) end
      end
      local added = false
      if not head then
        head = { status = 'queued', eid = eid, batches = { batch }, line = at, waiting = { batch } }
        queued = queued + 1
        pending = pending + 1
        added = true
        out[i] = 'new'
      else
        if not has(head.batches, batch) then
          head.batches[#head.batches + 1] = batch
          added = true
        end
        if head.status == 'failed' or head.status == 'superseded' then
          -- a re-drop of this version sends it again; the newest version dropped is the one in effect
          head.by = nil
          requeue(g, rkey, key, head)
          out[i] = 'requeue'
        else
          if not has(head.waiting, batch) then
            head.waiting = head.waiting or {}
            head.waiting[#head.waiting + 1] = batch
            pending = pending + 1
          end
          out[i] = 'join'
        end
      end
      if added then added_keys[#added_keys + 1] = string.sub(packed, 16 * i - 15, 16 * i) end
      write_record(rkey, head, body)
      if out[i] == 'requeue' then outbox_record(g.outbox, key, head, body) end
    end
  end
  if at > last then last = at end
end
flush_record_writes()
call_on_list('HSET', xkey, index_writes)
if #added_keys > 0 then redis.call('APPEND', kkey, table.concat(added_keys)) end
if queued > 0 then redis.call('HINCRBY', g.counts, 'queued', queued) end
if pending > 0 then redis.call('HINCRBY', g.pending, batch, pending) end
redis.call('HSET', bkey, 'registered_line', last)
return out
