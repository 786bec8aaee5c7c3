--[[
  The fleet's send budget: one per deployment, shared by every process (src/ledger/send-budget.ts).
  Times are the Redis server's (TIME), so processes on several hosts space their requests on one clock.

  KEYS[1] send-budget  hash   tat (when the next request may go, ms), hold (none before this, ms),
                              v + state (the learned rate's version and JSON, src/submit/send-rate.ts),
                              sec/cnt/prev (requests granted in this quarter of a second and the
                              one before: the fleet's rate lately, quick enough to follow a probe),
                              seen (when a request was last granted), sent (granted in all),
                              refused (requests the service refused for capacity, in all),
                              rlast (the last slot of the ring with a refused answer),
                              answers: the service's answers by when their requests were sent, in a ring
                              of SLOTS slots of SLOT_MS (t<i> the slot held at i, a<i> accepted, r<i>
                              refused, q<i> the sum of the fleet's rates they were sent at), and procs
                              (each process's oldest request still unanswered and when it said so:
                              `id,ms,at;…`; a process with none, or silent for PROC_TTL_MS, a slow
                              process's event loop, holds nobody's answers back)

  ARGV[1] 'take': ARGV[2] requests wanted, ARGV[3] ms between two requests, ARGV[4] how far ahead of now
          a request may be booked (ms), ARGV[5] requests already sent to charge first, ARGV[6] the ms back
          from now they were sent over. Books up to that many evenly spaced times (GCRA); none booked when
          the next time is further ahead, and then the ms until one can be. The report is from ARGV[7].
  ARGV[1] 'event': ARGV[2] the version the new state was computed from ('' : no new state), ARGV[3] the
          new state, ARGV[4] its version, ARGV[5] ms to hold every request back (Retry-After; 0: none),
          ARGV[6] requests refused for capacity to count. Writes the state only if the version still
          matches (another process may have cut first). The report is from ARGV[7].
  The report (at o): ARGV[o] this process's id ('' : none), ARGV[o+1] its oldest request unanswered
          (ms; '' : none), ARGV[o+2] from when answers are judged (ms), ARGV[o+3] and ARGV[o+4] the
          span whose answers teach the floor (ms), ARGV[o+5] the rate those must have been sent within,
          ARGV[o+6] n, then n answers slots of 4 values: send time (ms), accepted, refused, rate sum.
  Returns { booked, ms until the first or until one can be booked, sent per second lately, v, state,
  hold, now, seen before, refused in all, judged accepted, judged refused, judged rate sum, judged
  span (ms from the first slot with answers to the last, gaps included: at a low rate most slots hold
  none), taught accepted, taught refused, 1 when the taught span is whole }. Judged: the answers to requests sent
  from ARGV[o+2] and after the slot of the first refused one (whose other answers came while the
  service still had room), up to the oldest request any process still waits for; taught: the answers
  in the span, sent within the rate, up to that point.
]]
local SLOT_MS, SLOTS, PROC_TTL_MS = 20, 100, 200
local budget = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local f = redis.call('HMGET', budget, 'tat', 'hold', 'sec', 'cnt', 'prev', 'v', 'state', 'seen', 'procs', 'rlast',
  'refused', 'sent')
local rlast = tonumber(f[10]) or -1
-- The budget's own fields are written with one HSET at the end: one command for the AOF, not up to six.
local w = {}
local hold = tonumber(f[2]) or 0
local QUARTER_MS = 250
local sec = math.floor(now / QUARTER_MS)
local cnt, prev = tonumber(f[4]) or 0, tonumber(f[5]) or 0
local last = tonumber(f[3]) or sec
if last ~= sec then
  prev = (last == sec - 1) and cnt or 0
  cnt = 0
end
local booked, wait = 0, 0
local v, state, seen = f[6] or '0', f[7] or '', f[8] or '0'
local refused = tonumber(f[11]) or 0
local o

if ARGV[1] == 'take' then
  local wanted, interval, ahead = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  local owed, span = tonumber(ARGV[5]) or 0, tonumber(ARGV[6]) or 0
  local tat = tonumber(f[1]) or 0
  -- Requests already sent (while the schedule had room) are charged at the times they went: the
  -- schedule from `span` ms ago on, so that a fleet under its rate still has room after the charge.
  if owed > 0 then tat = math.max(tat, now - span) + owed * interval end
  local charged = tat
  tat = math.max(tat, now, hold)
  wait = tat - now
  if wait <= ahead then
    booked = math.min(wanted, math.floor((ahead - wait) / interval) + 1)
    charged = tat + booked * interval
  else
    wait = wait - ahead
  end
  if booked + owed > 0 then
    cnt = cnt + booked + owed
    w[#w + 1], w[#w + 2] = 'tat', string.format('%.3f', charged)
    w[#w + 1], w[#w + 2] = 'seen', now
    w[#w + 1], w[#w + 2] = 'sent', (tonumber(f[12]) or 0) + booked + owed
  end
  w[#w + 1], w[#w + 2] = 'sec', sec
  w[#w + 1], w[#w + 2] = 'cnt', cnt
  w[#w + 1], w[#w + 2] = 'prev', prev
  o = 7
elseif ARGV[1] == 'event' then
  if ARGV[2] ~= '' and ARGV[2] == v then
    v, state = ARGV[4], ARGV[3]
    w[#w + 1], w[#w + 2] = 'v', v
    w[#w + 1], w[#w + 2] = 'state', state
  end
  local counted = tonumber(ARGV[6]) or 0
  if counted > 0 then
    refused = refused + counted
    w[#w + 1], w[#w + 2] = 'refused', refused
  end
  local ms = tonumber(ARGV[5])
  if ms > 0 and now + ms > hold then
    hold = now + ms
    w[#w + 1], w[#w + 2] = 'hold', hold
  end
  o = 7
else
  return redis.error_reply('send-budget.lua: unknown mode ' .. tostring(ARGV[1]))
end

-- The answers this process heard, into the ring by the time their requests were sent.
local rlast_was = rlast
local proc = ARGV[o] or ''
local n = tonumber(ARGV[o + 6]) or 0
for i = 0, n - 1 do
  local b = o + 7 + i * 4
  local slot = math.floor(tonumber(ARGV[b]) / SLOT_MS)
  if slot > math.floor(now / SLOT_MS) - SLOTS then
    local at = slot % SLOTS
    if tonumber(redis.call('HGET', budget, 't' .. at)) ~= slot then
      redis.call('HSET', budget, 't' .. at, slot, 'a' .. at, 0, 'r' .. at, 0, 'q' .. at, 0)
    end
    redis.call('HINCRBY', budget, 'a' .. at, ARGV[b + 1])
    redis.call('HINCRBY', budget, 'r' .. at, ARGV[b + 2])
    redis.call('HINCRBYFLOAT', budget, 'q' .. at, ARGV[b + 3])
    if tonumber(ARGV[b + 2]) > 0 and slot > rlast then rlast = slot end
  end
end
if rlast ~= rlast_was then w[#w + 1], w[#w + 2] = 'rlast', rlast end

-- Each process's oldest request unanswered; the answers are whole up to the least of them.
local whole = now
local kept = {}
for id, ms, at in string.gmatch(f[9] or '', '([^,;]+),([^,;]+),([^,;]+)') do
  if id ~= proc and tonumber(at) > now - PROC_TTL_MS then
    kept[#kept + 1] = id .. ',' .. ms .. ',' .. at
    whole = math.min(whole, tonumber(ms))
  end
end
if proc ~= '' then
  local mine = tonumber(ARGV[o + 1])
  if mine then
    kept[#kept + 1] = proc .. ',' .. string.format('%d', mine) .. ',' .. now
    whole = math.min(whole, mine)
  end
  w[#w + 1], w[#w + 2] = 'procs', table.concat(kept, ';')
end
if #w > 0 then redis.call('HSET', budget, unpack(w)) end

-- The judged sample and the taught one, from the whole slots only.
local ja, jr, jq, la, lr = 0, 0, 0, 0, 0
local js_first, js_last = nil, nil
local from = tonumber(ARGV[o + 2]) or now
local learn_from, learn_to = tonumber(ARGV[o + 3]) or 0, tonumber(ARGV[o + 4]) or 0
local within = tonumber(ARGV[o + 5]) or 0
local first = math.max(math.floor(math.min(from, learn_from > 0 and learn_from or from) / SLOT_MS),
  math.floor(now / SLOT_MS) - SLOTS + 1)
local upto = math.floor(whole / SLOT_MS) - 1
-- No refusal since `from`: nothing to judge, and only the span that teaches is read (if any). Under a
-- service that refuses nothing this keeps a booking to a handful of commands.
if (rlast + 1) * SLOT_MS <= from then
  if learn_from > 0 then
    first = math.max(first, math.floor(learn_from / SLOT_MS))
    upto = math.min(upto, math.floor((learn_to - 1) / SLOT_MS))
  else
    upto = first - 1
  end
end
local started = false
if proc ~= '' then
  for slot = first, upto do
    local at = slot % SLOTS
    local s = redis.call('HMGET', budget, 't' .. at, 'a' .. at, 'r' .. at, 'q' .. at)
    if tonumber(s[1]) == slot then
      local a, r, q = tonumber(s[2]) or 0, tonumber(s[3]) or 0, tonumber(s[4]) or 0
      local start = slot * SLOT_MS
      if start + SLOT_MS > from then
        if started and a + r > 0 then
          ja, jr, jq = ja + a, jr + r, jq + q
          js_first = js_first or slot
          js_last = slot
        end
        if r > 0 then started = true end
      end
      if start >= learn_from and start < learn_to and a + r > 0 and q / (a + r) <= within then
        la, lr = la + (tonumber(s[2]) or 0), lr + (tonumber(s[3]) or 0)
      end
    end
  end
end
local taught_whole = (learn_to > 0 and whole >= learn_to) and 1 or 0

local sent = (prev * (1 - (now % QUARTER_MS) / QUARTER_MS) + cnt) * (1000 / QUARTER_MS)
return {
  booked, string.format('%.3f', wait), string.format('%.3f', sent), v, state, tostring(hold), tostring(now), seen,
  tostring(refused), ja, jr, string.format('%.3f', jq), js_first and (js_last - js_first + 1) * SLOT_MS or 0,
  la, lr, taught_whole,
}
