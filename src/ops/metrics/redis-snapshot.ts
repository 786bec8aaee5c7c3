import type { Queue } from "bullmq";
import { ledgerCensus, type LedgerCensus } from "../../ledger/census.js";
import { LastPasses, type LastPass } from "../../ledger/last-pass.js";
import type { RedisClient } from "../../ledger/redis-client.js";
import { remoteSourceStates, type RemoteSourceState } from "../../ledger/remote-claims.js";
import { readApiKeyRefusal } from "../../queue/api-key-refusal.js";
import { readSendRate, type RateSettings, type SendRateView } from "../../queue/send-rate-view.js";
import { within } from "../within.js";

/** What a scrape reads from Redis; `up: false` when Redis did not answer in time (the rest is absent). */
export type RedisSnapshot =
  | { readonly up: false }
  | {
      readonly up: true;
      readonly census: LedgerCensus;
      readonly apiKeyRefused: boolean;
      readonly coolingDown: boolean;
      readonly lastPass: LastPass | undefined;
      /** The fleet's send budget; undefined before any process sent (or with SUBMIT_RATE_ADAPTIVE=false). */
      readonly sendRate: SendRateView | undefined;
      /** Each SFTP source polled so far, by name (what `status` shows of it too). */
      readonly sftpSources: ReadonlyMap<string, RemoteSourceState>;
    };

/**
 * `queue.rateLimit` (an outage cool-down, the hold after a refused key) sets BullMQ's limiter to this
 * count; the worker's own SUBMIT_RATE_PER_SEC limiter never reaches it, so it tells them apart.
 */
const RATE_LIMIT_SET_BY_HAND = Number.MAX_SAFE_INTEGER;

export async function readRedisSnapshot(
  redis: RedisClient,
  queue: Queue,
  prefix: string,
  timeoutMs: number,
  rateSettings: RateSettings,
): Promise<RedisSnapshot> {
  // A connection that lost Redis would only queue the commands until it is back.
  if (!["wait", "connecting", "connect", "ready"].includes(redis.status)) return { up: false };
  const reads = Promise.all([
    ledgerCensus(redis, prefix),
    readApiKeyRefusal(redis, prefix),
    queue.getRateLimitTtl(RATE_LIMIT_SET_BY_HAND),
    new LastPasses(redis, prefix).read(),
    readSendRate(redis, prefix, rateSettings),
    remoteSourceStates(redis, prefix),
  ]);
  try {
    const answer = await within(reads, timeoutMs);
    if (answer === undefined) return { up: false };
    const [census, refusal, ttl, lastPass, sendRate, sftpSources] = answer;
    return {
      up: true,
      census,
      apiKeyRefused: refusal !== undefined,
      coolingDown: ttl > 0,
      lastPass,
      sendRate,
      sftpSources,
    };
  } catch {
    return { up: false };
  }
}
