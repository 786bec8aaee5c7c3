import { KEY_STATUSES, type KeyStatus } from "./statuses.js";
import { redisTimeMs } from "./outbox-backlog.js";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

/** The ledger's size and what it waits for, read without a SCAN: cheap enough for every scrape. */
export interface LedgerCensus {
  /** Records (one per idempotency key): the sum of the `counts` hash. */
  readonly records: number;
  /** Records by their status (the `counts` hash): what the ledger holds, whoever wrote it. */
  readonly byStatus: Readonly<Record<KeyStatus, number>>;
  /** Batches kept (the `batches` sorted set). */
  readonly batches: number;
  /** Unfinished batches (still ingesting, or waiting for keys) → keys they still wait for. */
  readonly waitingByBatch: ReadonlyMap<string, number>;
  /** Epoch ms at which the oldest unfinished batch was created; undefined when none is unfinished. */
  readonly oldestUnfinishedAt: number | undefined;
  /** Redis's clock at the reading, the clock the creation times are on: ages are taken against it. */
  readonly at: number;
}

/**
 * Reads the counters and sets the scripts keep up to date, and Redis's clock; three round trips whatever
 * the ledger's size.
 */
export async function ledgerCensus(redis: RedisClient, prefix: string): Promise<LedgerCensus> {
  const names = new LedgerNames(prefix);
  const [counts, batches, pending, ingesting, at] = await Promise.all([
    redis.hgetall(names.counts),
    redis.zcard(names.batches),
    redis.hgetall(names.pending),
    redis.smembers(names.ingesting),
    redisTimeMs(redis),
  ]);
  const waitingByBatch = new Map<string, number>();
  for (const id of ingesting) waitingByBatch.set(id, 0);
  for (const [id, value] of Object.entries(pending)) {
    const waiting = Number(value);
    if (Number.isFinite(waiting) && waiting > 0) waitingByBatch.set(id, waiting);
  }
  const ids = [...waitingByBatch.keys()];
  const created = ids.length === 0 ? [] : await redis.zmscore(names.batches, ...ids);
  const times = created.filter((t): t is string => t !== null).map(Number);
  const byStatus = Object.fromEntries(
    KEY_STATUSES.map((status) => [status, Math.max(0, Number(counts[status] ?? 0))]),
  ) as Record<KeyStatus, number>;
  return {
    records: KEY_STATUSES.reduce((sum, status) => sum + byStatus[status], 0),
    byStatus,
    batches,
    waitingByBatch,
    oldestUnfinishedAt: times.length === 0 ? undefined : Math.min(...times),
    at,
  };
}
