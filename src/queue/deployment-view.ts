import type { Queue } from "bullmq";
import type { Config } from "../config/load.js";
import { BatchStore } from "../ledger/batch-store.js";
import { ledgerCensus, type LedgerCensus } from "../ledger/census.js";
import { readFleetTotals, type FleetTotals } from "../ledger/fleet-counts.js";
import { Passes, type PassRecord } from "../ledger/passes.js";
import { Outbox } from "../ledger/outbox.js";
import { outboxBacklog, refusedEventCount, type OutboxBacklog } from "../ledger/outbox-backlog.js";
import type { RedisClient } from "../ledger/redis-client.js";
import { remoteSourceStates, type RemoteSourceState } from "../ledger/remote-claims.js";
import { Retention, type OldestKept } from "../ledger/retention.js";
import { readApiKeyRefusal, type ApiKeyRefusal } from "./api-key-refusal.js";
import { RedisNotAnsweringError } from "./errors/redis-not-answering-error.js";
import { createInvoiceQueue } from "./invoice-queue.js";
import { rateSettingsOf, readSendRate, type SendRateView } from "./send-rate-view.js";

/** The BullMQ job states the deployment's view counts. */
export const QUEUE_STATES = ["waiting", "active", "delayed", "failed", "paused"] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

/**
 * How the deployment is doing, read in one go: what `status`, /metrics and the console's queue page show,
 * each from this one reading (docs/operations.md, "Web console").
 */
export interface DeploymentView {
  /** Records by status, batches kept, unfinished batches and Redis's clock at the reading. */
  readonly census: LedgerCensus;
  /** BullMQ's jobs by state (`failed`: stopped by unexpected errors) and whether the queue is paused. */
  readonly queue: {
    readonly counts: Readonly<Record<QueueState, number>>;
    readonly isPaused: boolean;
  };
  /**
   * Milliseconds left of the hold on every worker (an outage cool-down, or the hold after a refused key);
   * 0 when none is in force.
   */
  readonly coolDownMs: number;
  /** The service's refusal of the API key, while it stands. */
  readonly apiKeyRefusal: ApiKeyRefusal | undefined;
  /** The oldest batch kept and when its retention ends (or why it is kept); undefined when none is kept. */
  readonly oldestBatch: OldestKept | undefined;
  /** The outbox to PostgreSQL: switched on, what it still holds, and the events PostgreSQL refused. */
  readonly outbox: {
    readonly on: boolean;
    readonly backlog: OutboxBacklog;
    readonly refused: number;
  };
  /** The fleet's sending rate; undefined before any process sent. */
  readonly sendRate: SendRateView | undefined;
  /** Each SFTP source polled so far, by name. */
  readonly sftpSources: ReadonlyMap<string, RemoteSourceState>;
  /** The passes started last, newest first (at most PASSES_READ). */
  readonly passes: readonly PassRecord[];
  /** The last pass ended with an outcome (Passes.lastOutcome); undefined until one has. */
  readonly lastPass: PassRecord | undefined;
  /** What every process of the deployment counted of its requests since it began. */
  readonly fleetTotals: FleetTotals;
}

/** The passes a reading holds: what `status` lists, and enough to find the last one ended. */
export const PASSES_READ = 5;

/** The settings the reading depends on. */
export type DeploymentSettings = Pick<
  Config,
  "queuePrefix" | "resultsRetention" | "submitRatePerSec" | "submitRateStart" | "retryAfterCapMs"
>;

/**
 * How long a scrape or a console page waits for Redis: beyond it the reading fails with
 * RedisNotAnsweringError (a scrape then answers redis_up 0 at once, rather than when Prometheus gives up
 * on it). `status`, run by a person who would rather wait for an answer, gives it longer.
 */
export const DEPLOYMENT_READ_TIMEOUT_MS = 1000;

/**
 * `queue.rateLimit` (what the submission worker calls for an outage cool-down and for the hold after a
 * refused key) sets BullMQ's limiter to this count; the workers' own SUBMIT_RATE_PER_SEC limiter never
 * reaches it, so asking for the time left at this count tells the hold from ordinary rate limiting.
 */
const RATE_LIMIT_SET_BY_HAND = Number.MAX_SAFE_INTEGER;

/** Connection states in which a command is answered soon; in any other, ioredis would only queue it. */
const LIVE = new Set(["wait", "connecting", "connect", "ready"]);

/** Reads the deployment's state; RedisNotAnsweringError when Redis does not answer in time. */
export async function readDeployment(
  redis: RedisClient,
  queue: Queue,
  settings: DeploymentSettings,
  timeoutMs = DEPLOYMENT_READ_TIMEOUT_MS,
): Promise<DeploymentView> {
  if (!LIVE.has(redis.status)) throw new RedisNotAnsweringError(timeoutMs);
  const prefix = settings.queuePrefix;
  const retention = new Retention(redis, prefix, new BatchStore(redis, prefix), settings.resultsRetention);
  const [
    census,
    counts,
    isPaused,
    ttl,
    refusal,
    oldest,
    outboxOn,
    backlog,
    refused,
    rate,
    sources,
    passes,
    lastPass,
    fleetTotals,
  ] = await inTime(
    timeoutMs,
    Promise.all([
      ledgerCensus(redis, prefix),
      queue.getJobCounts(...QUEUE_STATES),
      queue.isPaused(),
      queue.getRateLimitTtl(RATE_LIMIT_SET_BY_HAND),
      readApiKeyRefusal(redis, prefix),
      retention.oldest(),
      new Outbox(redis, prefix).enabled(),
      outboxBacklog(redis, prefix),
      refusedEventCount(redis, prefix),
      readSendRate(redis, prefix, rateSettingsOf(settings)),
      remoteSourceStates(redis, prefix),
      new Passes(redis, prefix).newest(PASSES_READ),
      new Passes(redis, prefix).lastOutcome(),
      readFleetTotals(redis, prefix),
    ]),
  );
  const count = (state: QueueState): number => counts[state] ?? 0;
  return {
    census,
    queue: {
      counts: {
        waiting: count("waiting"),
        active: count("active"),
        delayed: count("delayed"),
        failed: count("failed"),
        paused: count("paused"),
      },
      isPaused,
    },
    coolDownMs: Math.max(0, ttl),
    apiKeyRefusal: refusal,
    oldestBatch: oldest,
    outbox: { on: outboxOn, backlog, refused },
    sendRate: rate,
    sftpSources: sources,
    passes,
    lastPass,
    fleetTotals,
  };
}

/** The reads' answer, or RedisNotAnsweringError once `timeoutMs` has passed. */
async function inTime<T>(timeoutMs: number, reads: Promise<T>): Promise<T> {
  // a late rejection, after the timeout answered, is nobody's to handle
  reads.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new RedisNotAnsweringError(timeoutMs));
    }, timeoutMs);
  });
  try {
    return await Promise.race([reads, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Reads the deployment on a connection of the caller's, with a queue handle of its own opened at the
 * first read: what the ops server's /metrics and console hold for as long as they serve.
 */
export class DeploymentReader {
  #queue: Queue | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly settings: DeploymentSettings & Pick<Config, "maxAttempts">,
  ) {}

  /** The invoice queue on this connection. */
  get queue(): Queue {
    this.#queue ??= createInvoiceQueue(this.redis, this.settings.queuePrefix, this.settings.maxAttempts);
    return this.#queue;
  }

  read(): Promise<DeploymentView> {
    return readDeployment(this.redis, this.queue, this.settings);
  }

  async close(): Promise<void> {
    await this.#queue?.close();
  }
}
