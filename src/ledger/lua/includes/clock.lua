-- The ledger's time, in ms: Redis's own clock (TIME), the one every process of the deployment shares and
-- the one the outbox's entry ids are made of, so that a machine whose clock is off neither expires a
-- batch early nor keeps one late (docs/ledger.md, "Retention"). A caller that passes a time ('' for none)
-- is a test that moves days forward without waiting. Redis 7 replicates a script's effects, not the
-- script, so reading TIME before writing is safe on replicas and in the AOF.
local function ledger_now(given)
  if given ~= nil and given ~= '' then return tonumber(given) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
