-- Whether a batch's retention has passed and nothing of it may still be needed: its report is written
-- (state reported, or rejected for a file refused whole) at least `retention` ms ago, it is not reopened
-- (no key pending, not waiting for its report), and its report counted no failed or pending row: a
-- failed key keeps its batch whole for `retry` until it succeeds or is superseded (see docs/ledger.md,
-- "Retention").
local function expirable(bkey, pending, completed, batch, now, retention)
  local meta = redis.call('HMGET', bkey, 'state', 'reported_at', 'counts')
  if meta[1] ~= 'reported' and meta[1] ~= 'rejected' then return false end
  if not meta[2] or tonumber(meta[2]) + retention > now then return false end
  local waiting = redis.call('HGET', pending, batch)
  if waiting and tonumber(waiting) ~= 0 then return false end
  if redis.call('ZSCORE', completed, batch) then return false end
  if meta[3] then
    local counts = cjson.decode(meta[3])
    if (tonumber(counts.failed) or 0) > 0 or (tonumber(counts.pending) or 0) > 0 then return false end
  end
  return true
end
