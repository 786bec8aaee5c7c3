--[[
  Records the answers of attempts, for many keys at once (the worker records what one turn of its event
  loop heard in one run).

  KEYS[1] counts      hash   status -> number of keys
  KEYS[2] failed      set    keys that ended failed
  KEYS[3] pending     hash   batch -> keys it still waits for
  KEYS[4] ingesting   set    batches whose ingest is not finished
  KEYS[5] completed   zset   batches complete and not yet reported (score: when)
  KEYS[6] outbox-on   string present while the outbox is on
  KEYS[7] outbox      stream events for the results of record
  KEYS[8]             hash   the fleet's totals (src/ledger/fleet-counts.ts)
  KEYS[9..7+c]        hash   the answers per second, one hash per hour the answers fall in
  KEYS[7+c+i]         string the record of the i-th answer's key

  ARGV[1] now (ms; '' for Redis's clock), ARGV[2] c, then the counts of the requests these answers
  answer, per count hash (includes/counts.lua), then per answer: key, status (succeeded | failed |
  retrying), the number m of field/value items that follow, and those m items (head fields of
  src/ledger/record.ts, `body`, or `attempt`: the HTTP attempt as src/ledger/record.ts attemptJson
  writes it). An answer that makes its key succeeded or failed adds one to the totals' `final:<status>`:
  requests and final answers are counted in the write that records them, so they survive any crash.

  - succeeded is never overwritten; failed or superseded may become succeeded (a late success is still
    a success); superseded is not overwritten by failed;
  - retrying never overwrites a final status;
  - a key with no record is left without one ('unknown'): Redis lost it (a restart without persistence,
    a failover to a stale replica) and its batch is ingested again with the same keys.
  Returns one string per answer: 'ok', 'already', 'already-succeeded' or 'unknown' for a final answer;
  for a retrying one the status the key is left in, or 'unknown'.
  The answers' records are read in one MGET and written in one MSET. While the outbox is on, every
  answer given with its `attempt` writes an `attempt` event, numbered after the key's earlier ones, and
  every record changed a `record` event; an answer's events share one stream entry (attempt first).
]]
-- @include "clock"
-- @include "record"
-- @include "status"
-- @include "outbox"
-- @include "counts"

local counts, failed, pending, ingesting, completed = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now = ledger_now(ARGV[1])
local outbox = outbox_of(KEYS[6], KEYS[7])
local delta = { queued = 0, retrying = 0, succeeded = 0, failed = 0, superseded = 0 }
local finals = { succeeded = 0, failed = 0 }
local released, released_order = {}, {}
local out = {}
local c = tonumber(ARGV[2])
local rkeys = {}
for k = 8 + c, #KEYS do rkeys[#rkeys + 1] = KEYS[k] end
read_records_ahead(rkeys)
write_records_at_end()
local i, a = add_counts(8, c, 3), 0
while i <= #ARGV do
  a = a + 1
  local key, status, first = ARGV[i], ARGV[i + 1], i + 3
  i = first + tonumber(ARGV[i + 2])
  local rkey = KEYS[7 + c + a]
  local head, body = read_record(rkey)
  local current = head and head.status
  local facts, n = nil, nil
  if outbox then
    for f = first, i - 1, 2 do if ARGV[f] == 'attempt' then facts = ARGV[f + 1] end end
    if facts and head then n = next_attempt(head) end
  end
  local changed = false
  local final = status ~= 'retrying'
  if not current then
    out[a] = 'unknown'
  elseif current == 'succeeded' then
    out[a] = final and 'already-succeeded' or current
  elseif final and current == status then
    out[a] = 'already'
  elseif (current == 'failed' or current == 'superseded') and not final then
    out[a] = current
  elseif current == 'superseded' and status == 'failed' then
    out[a] = 'already'
  else
    head.status = status
    head.attempts = (head.attempts or 0) + 1
    head.first = head.first or now
    head.last = now
    for f = first, i - 1, 2 do
      local name, value = ARGV[f], ARGV[f + 1]
      if name == 'attempt' then -- the outbox's, not the record's
      elseif name == 'body' then body = value
      elseif name == 'http' or name == 'attempts' then head[name] = tonumber(value)
      elseif value == '' then head[name] = nil
      else head[name] = value end
    end
    if status == 'succeeded' then
      head.document = nil -- what retry would resend; a success needs it no more
      head.by = nil
      head.error = nil
    end
    delta[current] = delta[current] - 1
    delta[status] = delta[status] + 1
    if status == 'failed' then redis.call('SADD', failed, key)
    elseif current == 'failed' or current == 'superseded' then
      redis.call('SREM', failed, key)
      -- batches that already reported this key as failed are reported again
      for _, b in ipairs(head.batches or {}) do complete_if_done(pending, ingesting, completed, b, now) end
    end
    if final then
      finals[status] = finals[status] + 1
      for _, b in ipairs(head.waiting or {}) do
        if not released[b] then released[b] = 0; released_order[#released_order + 1] = b end
        released[b] = released[b] + 1
      end
      head.waiting = nil
      out[a] = 'ok'
    else
      out[a] = 'retrying'
    end
    changed = true
  end
  if n then head.an = n > (head.attempts or 0) and n or nil end
  if changed or n then write_record(rkey, head, body) end
  if outbox then
    local events = {}
    if facts then events[1] = attempt_event(key, n, facts) end
    if changed then events[#events + 1] = record_event(key, head, body) end
    outbox_add(outbox, events)
  end
end
flush_record_writes()
for _, s in ipairs({ 'queued', 'retrying', 'succeeded', 'failed', 'superseded' }) do
  if delta[s] ~= 0 then redis.call('HINCRBY', counts, s, delta[s]) end
end
for _, s in ipairs({ 'succeeded', 'failed' }) do
  if finals[s] ~= 0 then redis.call('HINCRBY', KEYS[8], 'final:' .. s, finals[s]) end
end
for _, b in ipairs(released_order) do
  if redis.call('HEXISTS', pending, b) == 1 then
    redis.call('HINCRBY', pending, b, -released[b])
    complete_if_done(pending, ingesting, completed, b, now)
  end
end
return out
