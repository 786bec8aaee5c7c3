import type { Queue } from "bullmq";
import type { Config } from "../config/load.js";
import { describeTarget, redisTarget } from "../config/redis-target.js";
import type { Logger } from "../log/logger.js";
import { dropFolder, type DropFolder } from "../ingest/drop-folder.js";
import { checkDropFolder } from "../ingest/drop-folder-usable.js";
import { takeDropFolder } from "../ingest/drop-folder-owner.js";
import { deploymentName } from "./deployment-name.js";
import { resolveNamespace, type KeyNamespace } from "../invoice/key.js";
import { createRedis, endConnection, ensureConnected } from "../queue/connection.js";
import { createInvoiceQueue } from "../queue/invoice-queue.js";
import type { InvoiceJobData } from "../queue/job-data.js";
import { checkKeyLayout, checkRedis, type RedisAccess } from "../queue/redis-checks.js";
import { BatchStore } from "../ledger/batch-store.js";
import type { RedisClient } from "../ledger/redis-client.js";
import { checkLayout } from "../ledger/layout.js";
import { checkOutboxDatabase, type OutboxUse } from "../ledger/outbox-detach.js";
import { RedisLedger } from "../ledger/redis-ledger.js";
import { commandLogger } from "./runtime.js";

/** What most commands need: a Redis connection, the stores, the queue and the drop folder. */
export interface AppContext {
  readonly config: Config;
  readonly redis: RedisClient;
  readonly ledger: RedisLedger;
  readonly batches: BatchStore;
  readonly queue: Queue<InvoiceJobData>;
  readonly folder: DropFolder;
  readonly namespace: KeyNamespace;
  close(): Promise<void>;
}

export interface OpenContextOptions {
  /**
   * Check that the drop folder can be used (checkDropFolder: before Redis is reached), create its
   * subfolders and take it for this deployment (takeDropFolder): another deployment's is refused.
   */
  readonly dropFolder?: boolean;
  /** `read-only` for commands that only read (`status`, `results`); anything else may write. */
  readonly access?: RedisAccess;
  /** Where the Redis set-up warnings go; the default command logger when absent. */
  readonly logger?: Logger;
  /**
   * How the command uses the ledger, for the outbox check (src/ledger/outbox-detach.ts): by default
   * `writes` when read-write, else `reads`. `reads` for a read-write command that writes nothing to
   * the ledger (the console without CONSOLE_TOKEN); `detaches` for `db detach`.
   */
  readonly outbox?: OutboxUse;
}

/**
 * Connects (failing fast with a clear message if Redis is unreachable), checks that Redis is set up so
 * the guarantees hold (`checkRedis`, the ledger's layout, an outbox left on without RESULTS_DATABASE_URL),
 * and builds the context. Every command that uses Redis starts here, so a Redis it must refuse is refused
 * before any key is written or any file claimed.
 */
export async function openContext(config: Config, options: OpenContextOptions = {}): Promise<AppContext> {
  const target = redisTarget(config);
  checkKeyLayout(target, config.queuePrefix);
  const folder = dropFolder(config.dropDir, {
    doneMarkerSuffix: config.doneMarkerSuffix,
    reportEncoding: config.reportEncoding,
  });
  if (options.dropFolder === true) await checkDropFolder(folder);
  const redis = createRedis(target, "producer", "invoice-relay-cli");
  // A failed connection attempt is reported by ensureConnected; keep ioredis from printing its own.
  redis.on("error", () => undefined);
  let warnings: string[];
  try {
    await ensureConnected(redis, target);
    warnings = await checkRedis(redis, {
      access: options.access ?? "read-write",
      allowEvicting: config.allowEvictingRedis,
      safeUrl: describeTarget(target),
    });
    const write = (options.access ?? "read-write") === "read-write";
    if (await checkLayout(redis, config.queuePrefix, write))
      warnings.push(
        `QUEUE_PREFIX=${config.queuePrefix} holds results in the earlier ledger layout, which this version does not read ` +
          '(docs/ledger.md, "Upgrading from the three-key layout")',
      );
    const outbox = await checkOutboxDatabase(redis, config.queuePrefix, {
      hasDatabase: config.resultsDatabaseUrl !== undefined,
      use: options.outbox ?? (write ? "writes" : "reads"),
    });
    if (outbox !== undefined) warnings.push(outbox);
  } catch (error) {
    endConnection(redis);
    throw error;
  }
  const logger = options.logger ?? commandLogger(config);
  for (const warning of warnings) logger.warn(warning);
  if (options.dropFolder === true)
    await takeDropFolder(folder, deploymentName(config)).catch((error: unknown) => {
      endConnection(redis);
      throw error;
    });
  const queue = createInvoiceQueue(redis, config.queuePrefix, config.maxAttempts);
  return {
    config,
    redis,
    ledger: new RedisLedger(redis, config.queuePrefix),
    batches: new BatchStore(redis, config.queuePrefix),
    queue,
    folder,
    namespace: resolveNamespace(config.idempotencyNamespace),
    close: async () => {
      await queue.close();
      endConnection(redis);
    },
  };
}
