-- A record is one string: a JSON head (never holding a line break), then, after "\n", the service's
-- answer body as received (bounded by RESPONSE_BODY_MAX_BYTES). The head's fields are listed in
-- src/ledger/record.ts. Only the head is decoded here; the body is carried through untouched.
local function read_record(rkey)
  local value = redis.call('GET', rkey)
  if not value then return nil, nil end
  local nl = string.find(value, '\n', 1, true)
  if not nl then return cjson.decode(value), nil end
  return cjson.decode(string.sub(value, 1, nl - 1)), string.sub(value, nl + 1)
end

local function write_record(rkey, head, body)
  local value = cjson.encode(head)
  if body and body ~= '' then value = value .. '\n' .. body end
  redis.call('SET', rkey, value)
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
