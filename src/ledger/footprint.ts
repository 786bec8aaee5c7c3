import type { BatchStore } from "./batch-store.js";
import { LedgerNames } from "./names.js";
import { isCluster, type RedisClient } from "./redis-client.js";

/** Records sampled with MEMORY USAGE to estimate the ledger's bytes. */
const SAMPLE = 16;

/** How big the ledger is now, for `status` (its records and batches are counted by census.ts). */
export interface LedgerSize {
  /**
   * Estimated bytes: the mean MEMORY USAGE of up to 16 records of the newest batch times the records,
   * plus the external-id index. Undefined when Redis refuses MEMORY USAGE (some managed services).
   */
  readonly bytes: number | undefined;
  /** Redis' own `used_memory` (summed over the masters of a cluster); undefined when INFO is refused. */
  readonly redisUsedMemory: number | undefined;
}

export async function ledgerSize(
  redis: RedisClient,
  prefix: string,
  batches: BatchStore,
  records: number,
): Promise<LedgerSize> {
  const names = new LedgerNames(prefix);
  return {
    bytes: await estimateBytes(redis, names, batches, records).catch(() => undefined),
    redisUsedMemory: await usedMemory(redis).catch(() => undefined),
  };
}

async function estimateBytes(
  redis: RedisClient,
  names: LedgerNames,
  batches: BatchStore,
  records: number,
): Promise<number | undefined> {
  const index = Number((await redis.call("MEMORY", "USAGE", names.externalIds)) ?? 0);
  if (records === 0) return index;
  const sample: string[] = [];
  for (const id of await batches.newest(5)) {
    for await (const page of batches.keysOf(id, SAMPLE)) {
      sample.push(...page);
      break;
    }
    if (sample.length >= SAMPLE) break;
  }
  const sizes: number[] = [];
  for (const key of sample.slice(0, SAMPLE)) {
    const bytes = await redis.call("MEMORY", "USAGE", names.record(key), "SAMPLES", "0");
    if (typeof bytes === "number") sizes.push(bytes);
  }
  if (sizes.length === 0) return undefined;
  return Math.round((sizes.reduce((a, b) => a + b, 0) / sizes.length) * records + index);
}

async function usedMemory(redis: RedisClient): Promise<number | undefined> {
  const nodes = isCluster(redis) ? redis.nodes("master") : [redis];
  let total = 0;
  for (const node of nodes) {
    const match = /^used_memory:(\d+)/m.exec(await node.info("memory"));
    if (match?.[1] === undefined) return undefined;
    total += Number(match[1]);
  }
  return total;
}
