-- Adds the counts of requests (src/ledger/fleet-counts.ts) to count hashes: for each of `n` hashes,
-- KEYS[first], KEYS[first + 1], …, ARGV from `at` holds when the hash expires (ms since the epoch; 0:
-- never), the number p of field/increment pairs, then the pairs. Returns the index of the ARGV after them.
local function add_counts(first, n, at)
  for k = 0, n - 1 do
    local key, expire_at, p = KEYS[first + k], tonumber(ARGV[at]), tonumber(ARGV[at + 1])
    at = at + 2
    for f = at, at + 2 * p - 1, 2 do redis.call('HINCRBY', key, ARGV[f], ARGV[f + 1]) end
    at = at + 2 * p
    if expire_at > 0 and p > 0 then redis.call('PEXPIREAT', key, expire_at) end
  end
  return at
end
