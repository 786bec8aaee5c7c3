import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Config } from "../config/load.js";
import { dropFolder, ensureDropFolder, type DropFolder } from "../ingest/drop-folder.js";
import { resolveNamespace, type KeyNamespace } from "../invoice/key.js";
import { createRedis, ensureConnected } from "../queue/connection.js";
import { createInvoiceQueue } from "../queue/invoice-queue.js";
import type { InvoiceJobData } from "../queue/job-data.js";
import { BatchStore } from "../results/batch-store.js";
import { RedisResultsStore } from "../results/redis-results-store.js";

/** What most commands need: a Redis connection, the stores, the queue and the drop folder. */
export interface AppContext {
  readonly config: Config;
  readonly redis: Redis;
  readonly store: RedisResultsStore;
  readonly batches: BatchStore;
  readonly queue: Queue<InvoiceJobData>;
  readonly folder: DropFolder;
  readonly namespace: KeyNamespace;
  close(): Promise<void>;
}

/** Connects (failing fast with a clear message if Redis is unreachable) and builds the context. */
export async function openContext(
  config: Config,
  options: { readonly dropFolder?: boolean } = {},
): Promise<AppContext> {
  const redis = createRedis(config.redisUrl, "producer", "invoice-relay-cli");
  // A failed connection attempt is reported by ensureConnected; keep ioredis from printing its own.
  redis.on("error", () => undefined);
  try {
    await ensureConnected(redis, config.redisUrl);
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  const folder = dropFolder(config.dropDir);
  if (options.dropFolder === true) await ensureDropFolder(folder);
  const queue = createInvoiceQueue(redis, config.queuePrefix, config.maxAttempts);
  return {
    config,
    redis,
    store: new RedisResultsStore(redis, config.queuePrefix),
    batches: new BatchStore(redis, config.queuePrefix),
    queue,
    folder,
    namespace: resolveNamespace(config.idempotencyNamespace),
    close: async () => {
      await queue.close();
      redis.disconnect();
    },
  };
}
