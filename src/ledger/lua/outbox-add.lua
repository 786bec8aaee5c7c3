--[[
  Adds events the caller built (a batch report's `rows`) to the outbox, while it is on.

  KEYS[1] outbox-on   string present while the outbox is on
  KEYS[2] outbox      stream events for the results of record

  ARGV: the events, one JSON text each. Returns how many were added (0 when the outbox is off).
]]
-- @include "outbox"

local outbox = outbox_of(KEYS[1], KEYS[2])
if not outbox then return 0 end
for _, event in ipairs(ARGV) do redis.call('XADD', outbox, '*', 'e', event) end
return #ARGV
