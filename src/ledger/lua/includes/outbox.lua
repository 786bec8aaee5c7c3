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

-- A `record` event: the key's record as it stands now; the body only with a final answer.
local function outbox_record(outbox, key, head, body)
  if not outbox then return end
  local final = head.status == 'succeeded' or head.status == 'failed'
  redis.call('XADD', outbox, '*', 'e', cjson.encode({
    t = 'record', key = key, eid = head.eid, status = head.status, http = or_null(head.http),
    cid = or_null(head.cid), ruleset = or_null(head.ruleset), attempts = head.attempts or 0,
    first = or_null(head.first), last = or_null(head.last), error = or_null(head.error),
    by = or_null(head.by), body = (final and body and body ~= '') and body or cjson.null }))
end

-- The number of a key's next attempt: after the last one exported (`an`) and the ones recorded.
local function next_attempt(head)
  return math.max(tonumber(head.an) or 0, tonumber(head.attempts) or 0) + 1
end

-- An `attempt` event: `facts` is the JSON the caller sent ('{"n":…,"at":…}'), `n` replaced when given.
local function outbox_attempt(outbox, key, n, facts)
  if not outbox or not facts then return end
  local rest = string.sub(facts, 2)
  if n then
    local comma = string.find(facts, ',', 1, true)
    rest = '"n":' .. string.format('%d', n) .. string.sub(facts, comma)
  end
  redis.call('XADD', outbox, '*', 'e', '{"t":"attempt","key":' .. cjson.encode(key) .. ',' .. rest)
end
