import { LastPasses } from "../ledger/last-pass.js";
import type { RedisClient } from "../ledger/redis-client.js";
import type { Logger } from "../log/logger.js";

/**
 * Records when this nightly pass ended and its exit code, for every process's /metrics
 * (invoice_relay_last_pass_*). Redis being away then is logged: the exit code stands either way.
 */
export async function recordPassEnd(
  redis: RedisClient,
  prefix: string,
  exitCode: number,
  logger: Logger,
): Promise<void> {
  try {
    await new LastPasses(redis, prefix).record({ endedAt: Date.now(), exitCode });
  } catch (error) {
    logger.warn({ err: error, exitCode }, "could not record the pass's end in Redis for /metrics");
  }
}
