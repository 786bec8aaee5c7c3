import { redisTimeMs } from "./outbox-backlog.js";
import type { RedisClient } from "./redis-client.js";

/**
 * The ledger's times (a batch's creation, completion and report, its retention, the stuck-batch alert)
 * are on Redis's clock, read inside the scripts with TIME: every process of a deployment shares it, and
 * it is the clock of the outbox's entry ids, so a machine whose own clock is off neither expires a batch
 * before its retention or its export nor announces a fresh batch as stuck (docs/ledger.md, "Retention").
 *
 * A `LedgerClock` replaces it with a fixed time (epoch ms): only for tests that move days forward
 * without waiting. Everything else leaves it undefined.
 */
export type LedgerClock = () => number;

/** A script's `now` argument: the fixed time, or '' (the scripts then read Redis's TIME). */
export function nowArgument(clock: LedgerClock | undefined): number | "" {
  return clock === undefined ? "" : clock();
}

/** The ledger's time now, for a decision taken outside a script: Redis's clock unless one is given. */
export async function ledgerNow(redis: RedisClient, clock: LedgerClock | undefined): Promise<number> {
  return clock === undefined ? redisTimeMs(redis) : clock();
}
