-- The outbox (docs/ledger.md, "Outbox"): events for the results-of-record exporter, written only while
-- the deployment's `outbox-on` string exists. Both names come from the caller's KEYS.

-- The outbox stream's name while the outbox is on, else nil (nothing is written then).
local function outbox_of(on_key, stream_key)
  if redis.call('EXISTS', on_key) == 1 then return stream_key end
  return nil
end

local function or_null(value)
  if value == nil then return cjson.null end
  return value
end

-- One stream entry holding `events` (JSON texts), each in a field `e`, in order: the events of one step
-- of one key travel together (an answer's attempt and record), one entry instead of two.
local function outbox_add(outbox, events)
  if not outbox or #events == 0 then return end
  local args = { 'XADD', outbox, '*' }
  for _, e in ipairs(events) do
    args[#args + 1] = 'e'
    args[#args + 1] = e
  end
  redis.call(unpack(args))
end

-- A `record` event's JSON: the key's record as it stands now; the body only with a final answer; the
-- trace id only when the record has one (tracing on), so events without tracing are as before.
local function record_event(key, head, body)
  local final = head.status == 'succeeded' or head.status == 'failed'
  return cjson.encode({
    t = 'record', key = key, eid = head.eid, status = head.status, http = or_null(head.http),
    cid = or_null(head.cid), ruleset = or_null(head.ruleset), attempts = head.attempts or 0,
    first = or_null(head.first), last = or_null(head.last), error = or_null(head.error),
    by = or_null(head.by), body = (final and body and body ~= '') and body or cjson.null, tr = head.tr })
end

-- A `record` event in an entry of its own.
local function outbox_record(outbox, key, head, body)
  if outbox then outbox_add(outbox, { record_event(key, head, body) }) end
end

-- The number of a key's next attempt: after the last one exported (`an`) and the ones recorded.
local function next_attempt(head)
  return math.max(tonumber(head.an) or 0, tonumber(head.attempts) or 0) + 1
end

-- An `attempt` event's JSON: `facts` is the JSON the caller sent ('{"n":…,"at":…}'), `n` replaced when given.
local function attempt_event(key, n, facts)
  local rest = string.sub(facts, 2)
  if n then
    local comma = string.find(facts, ',', 1, true)
    rest = '"n":' .. string.format('%d', n) .. string.sub(facts, comma)
  end
  return '{"t":"attempt","key":' .. cjson.encode(key) .. ',' .. rest
end

-- An `attempt` event in an entry of its own.
local function outbox_attempt(outbox, key, n, facts)
  if outbox and facts then outbox_add(outbox, { attempt_event(key, n, facts) }) end
end
