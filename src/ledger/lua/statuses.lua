--[[
  The status of many keys.

  KEYS[i]  string  the record of the i-th key

  Returns one status per key, '' for a key with no record. The records are read in one MGET.
]]
-- @include "record"

read_records_ahead(KEYS)
local out = {}
for i = 1, #KEYS do
  local head = read_record(KEYS[i])
  out[i] = head and head.status or ''
end
return out
