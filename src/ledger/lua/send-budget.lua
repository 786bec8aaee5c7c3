--[[
  The fleet's send budget, one per deployment (src/ledger/send-budget.ts): mechanism only, no policy.
  Times are the Redis server's (TIME), so processes on several hosts space their requests on one clock.

  KEYS[1] hash: last (when the last request booked goes), hold (nothing goes before it), v + state (the
          learned rate's, by compare-and-set), seen (when a request was last booked), capped (when
          SUBMIT_CONCURRENCY was last found too low), refusedAt (when a refusal was last counted), sent,
          accepted, refused in all, and per quarter of a second (q; s/a/r this quarter's, ps/pa/pr the one
          before).
  ARGV    wanted (send times to book), interval (ms), ahead (the furthest a time may be booked), owed and
          span (requests sent on room, charged first; ms back from now the first went), accepted and
          refused (answers to count), hold (ms from now; 0: none), from + state + version (written if the
          stored version is still `from`; '': none), capped (1: SUBMIT_CONCURRENCY below the rate's need).
  Returns name, value pairs: booked (the first in waitMs, then one per interval; none: waitMs until one
          can be), now, hold, v, state, seen (before this call), the rates lately (sent, accepted, refused
          per second), accepted and refused in all, capped and refusedAt (0: never).
]]
local QUARTER_MS = 250
local key = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local f = redis.call('HMGET', key, 'last', 'hold', 'v', 'state', 'seen', 'q', 's', 'a', 'r', 'ps', 'pa', 'pr',
  'sent', 'accepted', 'refused', 'capped', 'refusedAt')
local num = function(i) return tonumber(f[i]) or 0 end
local n = {}
for i = 1, 8 do n[i] = tonumber(ARGV[i]) end
local wanted, interval, ahead, owed, span, accepted, refused, holdMs = unpack(n)
local from, written, version = ARGV[9], ARGV[10], ARGV[11]
local hold, v, state, seen, capped = num(2), f[3] or '0', f[4] or '', num(5), num(16)

-- this quarter's counts, and the one before (zero when it was not the last)
local q = math.floor(now / QUARTER_MS)
local s, a, r, ps, pa, pr = num(7), num(8), num(9), num(10), num(11), num(12)
if num(6) ~= q then
  if num(6) == q - 1 then ps, pa, pr = s, a, r else ps, pa, pr = 0, 0, 0 end
  s, a, r = 0, 0, 0
end

-- GCRA, spaced at today's interval from the last send (a new rate holds from the next request on):
-- requests sent on room are charged at the times they went, then up to `wanted` times are booked
local last = num(1)
if owed > 0 then last = math.max(last + interval, now - span) + (owed - 1) * interval end
local go = math.max(last + interval, now, hold)
local wait, booked = go - now, 0
if wait <= ahead then
  booked = math.min(wanted, math.floor((ahead - wait) / interval) + 1)
  if booked > 0 then last = go + (booked - 1) * interval end
else
  wait = wait - ahead
end
-- the counts with this call's
s, a, r = s + booked + owed, a + accepted, r + refused
local sent, acc, ref = num(13) + booked + owed, num(14) + accepted, num(15) + refused
local out = { 'q', q, 's', s, 'a', a, 'r', r, 'ps', ps, 'pa', pa, 'pr', pr, 'sent', sent,
  'accepted', acc, 'refused', ref }
local counts = #out
local put = function(...) for _, x in ipairs({ ... }) do out[#out + 1] = x end end
if booked + owed > 0 then put('last', string.format('%.3f', last), 'seen', now) end
if holdMs > 0 and now + holdMs > hold then hold = now + holdMs; put('hold', hold) end
if from ~= '' and from == v then v, state = version, written; put('v', v, 'state', state) end
if ARGV[12] == '1' then capped = now; put('capped', now) end
local refusedAt = num(17)
if refused > 0 then refusedAt = now; put('refusedAt', now) end
-- a read (nothing booked, counted, held or written) writes nothing: status never creates the budget
if booked + owed + accepted + refused > 0 or #out > counts then redis.call('HSET', key, unpack(out)) end

-- a rate lately: this quarter and the share of the one before still within the last QUARTER_MS
local lately = function(cur, prev)
  return string.format('%.3f', (prev * (1 - (now % QUARTER_MS) / QUARTER_MS) + cur) * (1000 / QUARTER_MS))
end
return { 'booked', booked, 'waitMs', string.format('%.3f', wait), 'now', now, 'hold', hold, 'v', v,
  'state', state, 'seen', seen, 'sentPerSec', lately(s, ps), 'acceptedPerSec', lately(a, pa),
  'refusedPerSec', lately(r, pr), 'accepted', acc, 'refused', ref,
  'capped', capped, 'refusedAt', refusedAt }
