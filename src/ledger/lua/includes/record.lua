-- A record is one string: a JSON head (never holding a line break), then, after "\n", the service's
-- answer body as received (bounded by RESPONSE_BODY_MAX_BYTES). The head's fields are listed in
-- src/ledger/record.ts. Only the head is decoded here; the body is carried through untouched.

-- Records read ahead (read_records_ahead), kept as written since: a script that reads many records reads
-- them in one call, not one GET each. A record not read ahead is read on its own.
local record_values = {}

-- Arguments per call of a command given a list (Lua's unpack stops at a few thousand values).
local LIST_CALL_MAX = 1000

-- `command` on `list` (after `first`, a name or nil), in calls of at most LIST_CALL_MAX items (even, so
-- that field/value pairs stay whole); the replies joined in order, when they are lists.
local function call_on_list(command, first, list)
  local out = {}
  for from = 1, #list, LIST_CALL_MAX do
    local to = math.min(from + LIST_CALL_MAX - 1, #list)
    local part
    if first then part = redis.call(command, first, unpack(list, from, to))
    else part = redis.call(command, unpack(list, from, to)) end
    if type(part) == 'table' then
      for j = 1, to - from + 1 do out[from + j - 1] = part[j] end
    end
  end
  return out
end

-- Reads the records `rkeys` (all declared in KEYS) with MGET, for read_record below.
local function read_records_ahead(rkeys)
  local values = call_on_list('MGET', nil, rkeys)
  for i, rkey in ipairs(rkeys) do record_values[rkey] = values[i] end
end

local function read_record(rkey)
  local value = record_values[rkey]
  if value == nil then value = redis.call('GET', rkey) end
  if not value then return nil, nil end
  local nl = string.find(value, '\n', 1, true)
  if not nl then return cjson.decode(value), nil end
  return cjson.decode(string.sub(value, 1, nl - 1)), string.sub(value, nl + 1)
end

-- Set by a script that writes its records together (write_records_at_end): the names written, in order.
local record_writes = nil

local function write_record(rkey, head, body)
  local value = cjson.encode(head)
  if body and body ~= '' then value = value .. '\n' .. body end
  if record_writes then
    if not record_writes[rkey] then
      record_writes[rkey] = true
      record_writes[#record_writes + 1] = rkey
    end
    record_values[rkey] = value
    return
  end
  redis.call('SET', rkey, value)
  if record_values[rkey] ~= nil then record_values[rkey] = value end
end

-- From here on write_record keeps what it writes (read_record sees it) until flush_record_writes
-- writes it all in one MSET, which the script must call before it returns.
local function write_records_at_end()
  record_writes = {}
end

local function flush_record_writes()
  local items = {}
  for _, rkey in ipairs(record_writes) do
    items[#items + 1] = rkey
    items[#items + 1] = record_values[rkey]
  end
  call_on_list('MSET', nil, items)
  record_writes = nil
end

local function has(list, item)
  if not list then return false end
  for _, v in ipairs(list) do if v == item then return true end end
  return false
end

local function without(list, item)
  local out = {}
  if list then for _, v in ipairs(list) do if v ~= item then out[#out + 1] = v end end end
  return out
end
