/**
 * Lua scripts of the results store. Each runs atomically in Redis, which is what keeps final states
 * final and batch counters exact when several workers answer at once. Key names are built inside
 * from the `{prefix}:relay` base passed as ARGV[1] (single Redis, not Cluster).
 */

/** Shared: move a key's status and keep the per-status counts and the failed set right. */
const SET_STATUS = `
local function move_counts(base, key, from, to)
  if from then redis.call('HINCRBY', base .. ':counts', from, -1) end
  redis.call('HINCRBY', base .. ':counts', to, 1)
  if to == 'failed' then redis.call('SADD', base .. ':failed', key)
  elseif from == 'failed' then redis.call('SREM', base .. ':failed', key) end
end
local function set_status(base, rkey, key, from, to)
  redis.call('HSET', rkey, 'status', to)
  move_counts(base, key, from, to)
end
`;

/**
 * Shared: failed → queued. The key waits in `requeuing` until its job is known to exist (whoever
 * requeued it adds the job; `run` and `retry` repair a key whose job never came), and every batch that
 * has it waits for it again: a batch already reported goes back to `ingested`, and its report is
 * written again once the key is final.
 */
const REQUEUE_KEY = `${SET_STATUS}
local function requeue(base, rkey, key, from)
  set_status(base, rkey, key, from, 'queued')
  redis.call('HDEL', rkey, 'error')
  redis.call('SADD', base .. ':requeuing', key)
  for _, b in ipairs(redis.call('SMEMBERS', base .. ':kb:' .. key)) do
    local bkey = base .. ':batch:' .. b
    if redis.call('SADD', base .. ':w:' .. key, b) == 1 then
      redis.call('HINCRBY', bkey, 'pending', 1)
      redis.call('HDEL', bkey, 'completed_at')
      redis.call('SREM', base .. ':batches:complete', b)
      if redis.call('HGET', bkey, 'state') == 'reported' then redis.call('HSET', bkey, 'state', 'ingested') end
    end
  end
end
`;

/**
 * Shared: a failed key whose external_id is now carried by a newer key `by` becomes `superseded`
 * (final; `retry` never sends it again, which would put an outdated version into effect beside the
 * newer one). Its batches that are already complete are reported again, now showing it superseded.
 */
const SUPERSEDE = `${REQUEUE_KEY}
local function supersede(base, old, by)
  local okey = base .. ':r:' .. old
  if redis.call('HGET', okey, 'status') ~= 'failed' then return false end
  set_status(base, okey, old, 'failed', 'superseded')
  redis.call('HSET', okey, 'superseded_by', by)
  for _, b in ipairs(redis.call('SMEMBERS', base .. ':kb:' .. old)) do
    local bkey = base .. ':batch:' .. b
    if redis.call('HGET', bkey, 'ingested') == '1' and tonumber(redis.call('HGET', bkey, 'pending') or '0') <= 0 then
      redis.call('SADD', base .. ':batches:complete', b)
    end
  end
  return true
end
`;

/**
 * Register rows of a batch against the store. ARGV: base, batch, now, then (line, key, external_id)*.
 * Returns one decision per row: new | requeue | join | queued | retrying | succeeded | failed |
 * duplicate | conflict:<earlier key>. Rows come in file order; the batch remembers the last line it
 * registered, so a re-run after a crash recognises what it did before (same decisions, nothing counted
 * twice) while a first pass skips those look-ups.
 */
export const REGISTER = `${SUPERSEDE}
local base, batch, now = ARGV[1], ARGV[2], ARGV[3]
local bkey = base .. ':batch:' .. batch
local dkey = base .. ':batch:' .. batch .. ':decisions'
local seen = tonumber(redis.call('HGET', bkey, 'registered_line') or '-1')
local out = {}
local pending, queued, last = 0, 0, seen
for i = 4, #ARGV, 3 do
  local line, key, eid = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local n = tonumber(line)
  local rkey = base .. ':r:' .. key
  local kbkey = base .. ':kb:' .. key
  local decided = nil
  if n <= seen then
    decided = redis.call('HGET', dkey, line)
    if not decided and redis.call('SISMEMBER', kbkey, batch) == 1 then
      decided = redis.call('HGET', rkey, 'status') or 'queued'
    end
  end
  if decided then
    out[#out + 1] = decided
  else
    local xkey = base .. ':x:' .. eid
    local live = redis.call('GET', xkey)
    local status = redis.call('HGET', rkey, 'status')
    local verdict = nil
    if live and live ~= key then
      local s = redis.call('HGET', base .. ':r:' .. live, 'status')
      if s == 'succeeded' or s == 'queued' or s == 'retrying' then verdict = 'conflict:' .. live end
    end
    if not verdict and status == 'succeeded' then verdict = 'duplicate' end
    if verdict then
      redis.call('HSET', dkey, line, verdict)
      out[#out + 1] = verdict
    else
      if live ~= key then
        redis.call('SET', xkey, key)
        if live then supersede(base, live, key) end
      end
      if not status then
        redis.call('HSET', rkey, 'status', 'queued', 'external_id', eid, 'batch', batch, 'line', line, 'created_at', now)
        queued = queued + 1
        out[#out + 1] = 'new'
      elseif status == 'failed' then
        requeue(base, rkey, key, status)
        out[#out + 1] = 'requeue'
      else
        out[#out + 1] = 'join'
      end
      redis.call('SADD', kbkey, batch)
      pending = pending + redis.call('SADD', base .. ':w:' .. key, batch)
    end
  end
  if n > last then last = n end
end
if queued > 0 then redis.call('HINCRBY', base .. ':counts', 'queued', queued) end
if pending > 0 then redis.call('HINCRBY', bkey, 'pending', pending) end
redis.call('HSET', bkey, 'registered_line', last)
return out
`;

/** All rows registered: the batch completes as soon as nothing is pending. ARGV: base, batch, now. */
export const FINISH_INGEST = `
local base, batch, now = ARGV[1], ARGV[2], ARGV[3]
local bkey = base .. ':batch:' .. batch
redis.call('HSET', bkey, 'ingested', '1', 'ingested_at', now)
if tonumber(redis.call('HGET', bkey, 'pending') or '0') <= 0 then
  if not redis.call('HGET', bkey, 'completed_at') then redis.call('HSET', bkey, 'completed_at', now) end
  redis.call('SADD', base .. ':batches:complete', batch)
end
return 1
`;

/**
 * The answers of attempts, for many keys at once (the worker records what one turn of its event loop
 * heard in one run). ARGV: base, now, then per answer: key, status (succeeded | failed | retrying), the
 * number n of field/value items that follow, and those n items.
 * - succeeded is never overwritten; failed or superseded may become succeeded (a late success is
 *   still a success); superseded is not overwritten by failed;
 * - retrying never overwrites a final status;
 * - a key with no record is left without one ('unknown').
 * Returns one string per answer: 'ok', 'already', 'already-succeeded' or 'unknown' for a final answer,
 * the status the key is left in (or 'unknown') for a retrying one. Per key it costs one read and one HSET of the record; the
 * status counts and the batches' pending counts move once per run, whatever the number of keys.
 */
export const ANSWERS = `
local base, now = ARGV[1], ARGV[2]
local delta = { queued = 0, retrying = 0, succeeded = 0, failed = 0, superseded = 0 }
local released, released_order = {}, {}
local out = {}
local i = 3
while i <= #ARGV do
  local key, status, first = ARGV[i], ARGV[i + 1], i + 3
  i = first + tonumber(ARGV[i + 2])
  local rkey = base .. ':r:' .. key
  local was = redis.call('HMGET', rkey, 'status', 'attempts', 'first_attempt_at')
  local current = was[1]
  local final = status ~= 'retrying'
  if not current then
    -- no record: Redis lost it (a restart without persistence, a failover to a stale replica); the
    -- batch is re-ingested with the same keys, and a half record here would hide that
    out[#out + 1] = 'unknown'
  elseif current == 'succeeded' then
    out[#out + 1] = final and 'already-succeeded' or current
  elseif final and current == status then
    out[#out + 1] = 'already'
  elseif (current == 'failed' or current == 'superseded') and not final then
    out[#out + 1] = current
  elseif current == 'superseded' and status == 'failed' then
    out[#out + 1] = 'already'
  else
    redis.call('HSET', rkey, 'status', status, 'attempts', (tonumber(was[2]) or 0) + 1,
      'first_attempt_at', was[3] or now, 'last_attempt_at', now, unpack(ARGV, first, i - 1))
    if current then delta[current] = delta[current] - 1 end
    delta[status] = delta[status] + 1
    if status == 'failed' then redis.call('SADD', base .. ':failed', key)
    elseif current == 'failed' or current == 'superseded' then
      redis.call('SREM', base .. ':failed', key)
      -- batches that already reported this key as failed are reported again
      for _, b in ipairs(redis.call('SMEMBERS', base .. ':kb:' .. key)) do
        redis.call('SADD', base .. ':batches:complete', b)
      end
    end
    if final then
      local wkey = base .. ':w:' .. key
      for _, b in ipairs(redis.call('SMEMBERS', wkey)) do
        if not released[b] then released[b] = 0; released_order[#released_order + 1] = b end
        released[b] = released[b] + 1
      end
      redis.call('DEL', wkey)
      out[#out + 1] = 'ok'
    else
      out[#out + 1] = 'retrying'
    end
  end
end
for _, s in ipairs({ 'queued', 'retrying', 'succeeded', 'failed', 'superseded' }) do
  if delta[s] ~= 0 then redis.call('HINCRBY', base .. ':counts', s, delta[s]) end
end
for _, b in ipairs(released_order) do
  local bkey = base .. ':batch:' .. b
  if redis.call('HINCRBY', bkey, 'pending', -released[b]) <= 0 and redis.call('HGET', bkey, 'ingested') == '1' then
    redis.call('HSET', bkey, 'completed_at', now)
    redis.call('SADD', base .. ':batches:complete', b)
  end
end
return out
`;

/** The status of many keys, '' for a key with no record. ARGV: base, then the keys. */
export const STATUSES = `
local base = ARGV[1]
local out = {}
for i = 2, #ARGV do out[i - 1] = redis.call('HGET', base .. ':r:' .. ARGV[i], 'status') or '' end
return out
`;

/**
 * `retry`: a failed key goes back to queued and every batch that has it waits for it again; the key
 * stays in `requeuing` until its job exists. A failed key whose external_id has since moved to another
 * key is superseded instead: only the newest version of an invoice is ever sent again. ARGV: base, key.
 * Returns 1 if requeued, 2 if superseded, 0 if the key was not failed.
 */
export const REQUEUE = `${SUPERSEDE}
local base, key = ARGV[1], ARGV[2]
local rkey = base .. ':r:' .. key
local current = redis.call('HGET', rkey, 'status')
if current ~= 'failed' then return 0 end
local eid = redis.call('HGET', rkey, 'external_id')
local live = eid and redis.call('GET', base .. ':x:' .. eid)
if live and live ~= key and redis.call('EXISTS', base .. ':r:' .. live) == 1 then
  supersede(base, key, live)
  return 2
end
requeue(base, rkey, key, current)
return 1
`;
