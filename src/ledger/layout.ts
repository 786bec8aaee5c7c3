import { EarlierLayoutError } from "./errors/earlier-layout-error.js";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

/**
 * Whether the prefix holds a ledger in the earlier three-key layout, which this version does not read
 * (docs/ledger.md, "Upgrading from the three-key layout"). That layout kept each batch's pending count
 * in the batch's own hash; this layout keeps it in the `pending` hash, so the newest batch tells (one
 * look, whatever the size).
 * `write`: throw EarlierLayoutError; readers get the answer, for a warning.
 */
export async function checkLayout(redis: RedisClient, prefix: string, write: boolean): Promise<boolean> {
  const names = new LedgerNames(prefix);
  const [newest] = await redis.zrevrange(names.batches, 0, 0);
  const earlier = newest !== undefined && (await redis.hexists(names.batch(newest), "pending")) === 1;
  if (earlier && write) throw new EarlierLayoutError(prefix);
  return earlier;
}
