-- failed -> queued. The key waits in `requeuing` until its job is known to exist (whoever requeued it
-- adds the job; `run` and `retry` repair a key whose job never came), and every batch that has it waits
-- for it again; a batch already reported is reopened and its report written again once the key is final.
local function requeue(g, rkey, key, head)
  move_counts(g.counts, g.failed, key, head.status, 'queued')
  head.status = 'queued'
  head.error = nil
  redis.call('SADD', g.requeuing, key)
  local waiting = head.waiting or {}
  for _, b in ipairs(head.batches or {}) do
    if not has(waiting, b) and redis.call('HEXISTS', g.pending, b) == 1 then
      waiting[#waiting + 1] = b
      redis.call('HINCRBY', g.pending, b, 1)
      redis.call('ZREM', g.completed, b)
      redis.call('SADD', g.reopened, b)
    end
  end
  if #waiting > 0 then head.waiting = waiting end
end

-- A failed key whose external_id is now carried by a newer key `by` becomes `superseded` (final; `retry`
-- never sends it again, which would put an outdated version into effect beside the newer one). Its
-- complete batches are reported again, now showing it superseded.
local function supersede(g, okey, old, by, now)
  local head, body = read_record(okey)
  if not head or head.status ~= 'failed' then return false end
  move_counts(g.counts, g.failed, old, 'failed', 'superseded')
  head.status = 'superseded'
  head.by = by
  write_record(okey, head, body)
  outbox_record(g.outbox, old, head, body)
  for _, b in ipairs(head.batches or {}) do complete_if_done(g.pending, g.ingesting, g.completed, b, now) end
  return true
end
