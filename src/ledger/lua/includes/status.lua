-- Moves a key's status and keeps the per-status counts and the failed set right.
-- counts_key: hash status -> number of keys; failed_key: set of failed keys.
local function move_counts(counts_key, failed_key, key, from, to)
  if from then redis.call('HINCRBY', counts_key, from, -1) end
  redis.call('HINCRBY', counts_key, to, 1)
  if to == 'failed' then redis.call('SADD', failed_key, key)
  elseif from == 'failed' then redis.call('SREM', failed_key, key) end
end

-- A batch is complete when its ingest is finished and no key is pending for it; complete batches wait
-- in the `completed` sorted set (score: when) for their report to be written.
local function complete_if_done(pending_key, ingesting_key, completed_key, batch, now)
  local pending = redis.call('HGET', pending_key, batch)
  if pending and tonumber(pending) <= 0 and redis.call('SISMEMBER', ingesting_key, batch) == 0 then
    redis.call('ZADD', completed_key, now, batch)
  end
end
