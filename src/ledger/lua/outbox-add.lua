--[[
  Adds a batch report's `rows` events to the outbox, while it is on, each stamped with the report's
  generation (docs/ledger.md, "Outbox"): the exporter keeps the rows of the newest generation only.

  KEYS[1] outbox-on   string present while the outbox is on
  KEYS[2] outbox      stream events for the results of record

  ARGV[1] the report's generation, or empty for a report's first call: it then takes a fresh stream id,
  greater than the id of every event before it, and the caller passes it on with the report's later rows.
  ARGV[2 ..] the events, one JSON object each, without `report`.
  Returns the generation, or empty when the outbox is off (nothing added).
]]
-- @include "outbox"

local outbox = outbox_of(KEYS[1], KEYS[2])
if not outbox then return '' end
local report = ARGV[1]
if report == '' then
  -- Redis gives stream ids in order even when its clock goes back; an entry removed in the same step
  -- reserves one, so no exporter ever reads it.
  report = redis.call('XADD', outbox, '*', 'e', '{}')
  redis.call('XDEL', outbox, report)
end
local stamp = '{"report":' .. cjson.encode(report) .. ','
for i = 2, #ARGV do redis.call('XADD', outbox, '*', 'e', stamp .. string.sub(ARGV[i], 2)) end
return report
