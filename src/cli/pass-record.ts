import { LastPasses } from "../ledger/last-pass.js";
import type { RedisClient } from "../ledger/redis-client.js";
import type { Logger } from "../log/logger.js";
import { within } from "../ops/within.js";

/** How long the pass's end waits for Redis to take its record: a run whose Redis is away exits anyway. */
export const PASS_RECORD_WAIT_MS = 1_000;

/**
 * Records when this nightly pass ended and its exit code, for every process's /metrics
 * (invoice_relay_last_pass_*). Redis being away then (not connected, or not answering within
 * PASS_RECORD_WAIT_MS) is logged: the exit code stands either way, and the process exits without waiting
 * for Redis to return.
 */
export async function recordPassEnd(
  redis: RedisClient,
  prefix: string,
  exitCode: number,
  logger: Logger,
): Promise<void> {
  if (redis.status !== "ready") {
    logger.warn(
      { exitCode, redis: redis.status },
      "Redis is away: the pass's end is not recorded for /metrics",
    );
    return;
  }
  const recorded = new LastPasses(redis, prefix).record({ endedAt: Date.now(), exitCode }).then(
    () => true,
    (error: unknown) => error,
  );
  const outcome = await within(recorded, PASS_RECORD_WAIT_MS);
  if (outcome === true) return;
  logger.warn(
    { err: outcome ?? new Error(`Redis did not answer within ${PASS_RECORD_WAIT_MS} ms`), exitCode },
    "could not record the pass's end in Redis for /metrics",
  );
}
