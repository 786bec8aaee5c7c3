import { EarlierLayoutError } from "./errors/earlier-layout-error.js";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

/** The ledger's data layout: 2 since the records became one string per key (docs/ledger.md). */
export const LAYOUT_VERSION = "2";

/**
 * Checks that the prefix holds no ledger of invoice-relay 0.1 and marks it as layout 2. A 0.1 ledger has
 * a status-counts hash but no layout mark (0.1 wrote none). `write`: throw EarlierLayoutError; otherwise
 * (readers) return whether it is an earlier layout, for a warning.
 */
export async function checkLayout(redis: RedisClient, prefix: string, write: boolean): Promise<boolean> {
  const names = new LedgerNames(prefix);
  const [layout, counts] = await Promise.all([redis.get(names.layout), redis.exists(names.counts)]);
  if (layout === null && counts === 1) {
    if (write) throw new EarlierLayoutError(prefix);
    return true;
  }
  if (layout === null && write) await redis.set(names.layout, LAYOUT_VERSION, "NX");
  return false;
}
