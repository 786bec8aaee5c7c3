--[[
  Writes a batch's record (its hash) and, while the outbox is on, its `batch` event in the same step.

  KEYS[1] batch       hash   the batch's record
  KEYS[2] batches     zset   every batch, scored by when it was created
  KEYS[3] completed   zset   batches complete and not yet reported (score: when)
  KEYS[4] reopened    set    reported batches that wait for a requeued key again
  KEYS[5] outbox-on   string present while the outbox is on
  KEYS[6] outbox      stream events for the results of record

  ARGV[1] batch id, ARGV[2] now (ms; '' for Redis's clock), ARGV[3] what:
  - open: a new batch gets the fields and `created_at`, and joins `batches`; a known one (resumed after a
    crash) takes only `path`, and `size` and `sha256` if it has none;
  - update: the fields are set;
  - changed: the fields are set; the batch leaves `completed` (it is never reported);
  - report: the fields, `reported_at` and `completed_at` (when it completed) are set; the batch leaves
    `completed` and `reopened`.
  ARGV[4 ..] field/value pairs. Returns 1 when `open` created the batch, else 0.
]]
-- @include "clock"
-- @include "outbox"

local bkey, batches, completed, reopened = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, now, what = ARGV[1], ledger_now(ARGV[2]), ARGV[3]
local fields = {}
for f = 4, #ARGV, 2 do fields[ARGV[f]] = ARGV[f + 1] end
local function set(from)
  if #ARGV >= from then redis.call('HSET', bkey, unpack(ARGV, from)) end
end

local created = 0
if what == 'open' then
  if redis.call('HSETNX', bkey, 'id', id) == 1 then
    created = 1
    set(4)
    redis.call('HSET', bkey, 'created_at', now)
    redis.call('ZADD', batches, now, id)
  else
    if fields.path then redis.call('HSET', bkey, 'path', fields.path) end
    if fields.size and fields.sha256 then
      redis.call('HSETNX', bkey, 'size', fields.size)
      redis.call('HSETNX', bkey, 'sha256', fields.sha256)
    end
  end
elseif what == 'report' then
  set(4)
  redis.call('HSET', bkey, 'reported_at', now)
  local at = redis.call('ZSCORE', completed, id)
  if at then redis.call('HSET', bkey, 'completed_at', at) end
  redis.call('ZREM', completed, id)
  redis.call('SREM', reopened, id)
elseif what == 'changed' then
  set(4)
  redis.call('ZREM', completed, id)
else
  set(4)
end

local outbox = outbox_of(KEYS[5], KEYS[6])
if outbox then
  local b = {}
  local all = redis.call('HGETALL', bkey)
  for f = 1, #all, 2 do b[all[f]] = all[f + 1] end
  local function num(name)
    local v = tonumber(b[name])
    if v == nil then return cjson.null end
    return v
  end
  local counts = cjson.null
  if b.counts then
    local ok, decoded = pcall(cjson.decode, b.counts)
    if ok and type(decoded) == 'table' then counts = decoded end
  end
  redis.call('XADD', outbox, '*', 'e', cjson.encode({
    t = 'batch', batch = id, file = or_null(b.file), format = or_null(b.format), state = or_null(b.state),
    created = num('created_at'), size = num('size'), sha256 = or_null(b.sha256), rows = num('rows'),
    valid = num('valid_rows'), counts = counts, report_csv = or_null(b.report_csv),
    summary_json = or_null(b.summary_json), profile = or_null(b.profile), file_error = or_null(b.file_error),
    reported = num('reported_at'), replaced_by = or_null(b.replaced_by) }))
end
return created
