import { CallBatcher } from "./call-batcher.js";
import { SENT_FIELD } from "./fleet-counts.js";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

/**
 * Counts the fleet's requests as they are sent (the totals' `sent`, src/ledger/fleet-counts.ts): each is
 * counted in Redis, and the count acknowledged, before it goes, so a process killed with requests in
 * flight leaves every request the service may have received counted (a count written only once the bytes
 * are out can be lost with the process). Requests sent within one turn of the event loop are counted in
 * one HINCRBY.
 */
export class SentCount {
  readonly #batcher: CallBatcher<undefined, undefined>;

  constructor(redis: RedisClient, prefix: string) {
    const totals = new LedgerNames(prefix).fleetTotals;
    this.#batcher = new CallBatcher(async (calls) => {
      await redis.hincrby(totals, SENT_FIELD, calls.length);
      return calls.map(() => undefined);
    });
  }

  /** Resolves once one request more is counted: the request may go. */
  sending(): Promise<void> {
    return this.#batcher.call(undefined);
  }
}
