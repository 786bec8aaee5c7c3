import { ledgerNow, type LedgerClock } from "./clock.js";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

/** How long a batch's stuck-notice marker lives: a batch still unfinished this long after is announced again. */
export const STUCK_NOTICE_TTL_MS = 30 * 86_400_000;

/**
 * What the stuck-batch alert reads and writes in the ledger: the batches not finished yet that were
 * dropped before a time, and a marker per batch (SET NX with a TTL) so that of the processes watching,
 * one sends the alert, once.
 */
export class StuckBatches {
  readonly #names: LedgerNames;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    /** A fixed clock for tests; absent: Redis's own (src/ledger/clock.ts). */
    private readonly clock?: LedgerClock,
  ) {
    this.#names = new LedgerNames(prefix);
  }

  /** The ledger's time now (Redis's clock), the clock the batches' creation times are on. */
  async now(): Promise<number> {
    return ledgerNow(this.redis, this.clock);
  }

  /**
   * Batches created at or before `createdBefore` (epoch ms) that still wait for keys, are still being
   * ingested, or are complete but not reported yet; oldest first. Reported batches are not read.
   */
  async unfinishedSince(createdBefore: number): Promise<string[]> {
    const n = this.#names;
    const replies = await this.redis
      .multi()
      .hgetall(n.pending)
      .smembers(n.ingesting)
      .zrange(n.completed, 0, -1)
      .exec();
    const [pending, ingesting, completed] = (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    const open = new Set<string>();
    if (isStringRecord(pending))
      for (const [id, waiting] of Object.entries(pending)) if (Number(waiting) > 0) open.add(id);
    for (const list of [ingesting, completed])
      if (Array.isArray(list)) for (const id of list) if (typeof id === "string") open.add(id);
    if (open.size === 0) return [];
    const ids = [...open];
    const scores = await Promise.all(ids.map((id) => this.redis.zscore(n.batches, id)));
    return ids
      .map((id, i) => ({
        id,
        created: scores[i] === null || scores[i] === undefined ? NaN : Number(scores[i]),
      }))
      .filter((b) => !Number.isNaN(b.created) && b.created <= createdBefore)
      .sort((a, b) => a.created - b.created)
      .map((b) => b.id);
  }

  /** Whether this caller is the one to announce the batch as stuck (the first to ask, within the TTL). */
  async claimNotice(batchId: string, ttlMs = STUCK_NOTICE_TTL_MS): Promise<boolean> {
    const answer = await this.redis.set(
      this.#names.stuckNotice(batchId),
      String(await this.now()),
      "PX",
      ttlMs,
      "NX",
    );
    return answer === "OK";
  }
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
