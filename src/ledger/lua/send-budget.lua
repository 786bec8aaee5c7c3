--[[
  The fleet's send budget: one per deployment, shared by every process (src/ledger/send-budget.ts).
  Times are the Redis server's (TIME), so processes on several hosts space their requests on one clock.

  KEYS[1] send-budget  hash   tat (when the next request may go, ms), hold (none before this, ms),
                              v + state (the learned rate's version and JSON, src/submit/send-rate.ts),
                              sec/cnt/prev (requests granted this second and the one before),
                              seen (when a request was last granted), sent (granted in all),
                              refused (requests the service refused for capacity, in all)

  ARGV[1] 'take': ARGV[2] requests wanted, ARGV[3] ms between two requests, ARGV[4] how far ahead of now
          a request may be booked (ms). Books up to that many evenly spaced times (GCRA) and returns
          { booked, ms until the first, sent per second lately, v, state, hold, now, seen before }; none
          booked when the next time is further ahead, and then the ms until one can be.
  ARGV[1] 'event': ARGV[2] the version the new state was computed from ('' : no new state), ARGV[3] the
          new state, ARGV[4] its version, ARGV[5] ms to hold every request back (Retry-After; 0: none),
          ARGV[6] requests refused for capacity to count.
          Writes the state only if the version still matches (another process may have cut first), and
          returns { 0, 0, sent per second, v, state, hold, now, seen }.
  Both replies end with the count of requests refused, in all.
]]
local budget = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local f = redis.call('HMGET', budget, 'tat', 'hold', 'sec', 'cnt', 'prev', 'v', 'state', 'seen')
local hold = tonumber(f[2]) or 0
local sec = math.floor(now / 1000)
local cnt, prev = tonumber(f[4]) or 0, tonumber(f[5]) or 0
local last = tonumber(f[3]) or sec
if last ~= sec then
  prev = (last == sec - 1) and cnt or 0
  cnt = 0
end
local booked, wait = 0, 0
local v, state, seen = f[6] or '0', f[7] or '', f[8] or '0'
local refused = tonumber(redis.call('HGET', budget, 'refused')) or 0

if ARGV[1] == 'take' then
  local wanted, interval, ahead = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  local tat = math.max(tonumber(f[1]) or 0, now, hold)
  wait = tat - now
  if wait <= ahead then
    booked = math.min(wanted, math.floor((ahead - wait) / interval) + 1)
    cnt = cnt + booked
    redis.call('HSET', budget, 'tat', string.format('%.3f', tat + booked * interval), 'seen', now)
    redis.call('HINCRBY', budget, 'sent', booked)
  else
    wait = wait - ahead
  end
  redis.call('HSET', budget, 'sec', sec, 'cnt', cnt, 'prev', prev)
elseif ARGV[1] == 'event' then
  if ARGV[2] ~= '' and ARGV[2] == v then
    v, state = ARGV[4], ARGV[3]
    redis.call('HSET', budget, 'v', v, 'state', state)
  end
  local counted = tonumber(ARGV[6]) or 0
  if counted > 0 then refused = redis.call('HINCRBY', budget, 'refused', counted) end
  local ms = tonumber(ARGV[5])
  if ms > 0 and now + ms > hold then
    hold = now + ms
    redis.call('HSET', budget, 'hold', hold)
  end
else
  return redis.error_reply('send-budget.lua: unknown mode ' .. tostring(ARGV[1]))
end
local sent = prev * (1 - (now % 1000) / 1000) + cnt
return {
  booked, string.format('%.3f', wait), string.format('%.3f', sent), v, state, tostring(hold), tostring(now), seen,
  tostring(refused),
}
