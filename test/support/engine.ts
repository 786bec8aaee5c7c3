import { loadConfig, requireSubmitConfig, type SubmitConfig } from "../../src/config/load.js";
import { silentLogger } from "../../src/log/logger.js";
import { createRedis } from "../../src/queue/connection.js";
import { createInvoiceQueue, enqueueInvoices } from "../../src/queue/invoice-queue.js";
import {
  startSubmission,
  type SubmissionHooks,
  type SubmissionService,
} from "../../src/queue/submission-service.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import type { SubmitOutcome } from "../../src/submit/submit-invoice.js";
import type { InvoiceTracing } from "../../src/tracing/invoice-tracing.js";
import type { KeyedInvoice } from "./invoices.js";
import { testPrefix, testRedisUrl } from "./redis.js";

export interface EngineOptions {
  readonly apiUrl: string;
  readonly apiKey: string;
  readonly redisUrl?: string;
  readonly prefix?: string;
  readonly env?: Record<string, string>;
  readonly hooks?: SubmissionHooks;
}

/** Settings for tests: short backoff and lock so retries and crash recovery happen within seconds. */
export function testConfig(options: EngineOptions): SubmitConfig {
  return requireSubmitConfig(
    loadConfig({
      REDIS_URL: options.redisUrl ?? testRedisUrl(),
      INVOICE_API_URL: options.apiUrl,
      INVOICE_API_KEY: options.apiKey,
      QUEUE_PREFIX: options.prefix ?? testPrefix(),
      BACKOFF_BASE_MS: "50",
      BACKOFF_CAP_MS: "500",
      LOCK_DURATION_MS: "2000",
      LOG_LEVEL: "silent",
      ...options.env,
    }),
  );
}

/** Registers invoices as rows of one batch in the ledger and enqueues them, as ingest does. */
export async function enqueueBatch(
  config: SubmitConfig,
  batch: string,
  invoices: readonly KeyedInvoice[],
  tracing?: InvoiceTracing,
): Promise<void> {
  const redis = createRedis(config.redisUrl, "producer");
  const store = new RedisLedger(redis, config.queuePrefix);
  const queue = createInvoiceQueue(redis, config.queuePrefix, config.maxAttempts);
  try {
    const rows = invoices.map((inv, i) => ({
      line: i + 2,
      key: inv.key,
      externalId: inv.invoice.external_id,
    }));
    await store.registerRows(batch, rows);
    await store.finishIngest(batch);
    await enqueueInvoices(
      queue,
      invoices.map((inv, i) => ({ key: inv.key, data: { invoice: inv.invoice, batch, line: i + 2 } })),
      tracing,
    );
  } finally {
    await queue.close();
    redis.disconnect();
  }
}

/** A submission worker in this process, plus a way to await N final outcomes (events, not polling). */
export async function startTestWorker(config: SubmitConfig, hooks: SubmissionHooks = {}) {
  const finals = new Set<string>();
  const waiters: { count: number; resolve: () => void }[] = [];
  const service: SubmissionService = await startSubmission(config, silentLogger(), {
    ...hooks,
    onOutcome: (key: string, outcome: SubmitOutcome) => {
      hooks.onOutcome?.(key, outcome);
      if (outcome.kind === "succeeded" || outcome.kind === "failed" || outcome.kind === "skipped")
        finals.add(key);
      for (const waiter of waiters.filter((w) => finals.size >= w.count)) waiter.resolve();
    },
  });
  return {
    service,
    finals,
    untilFinal(count: number): Promise<void> {
      if (finals.size >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
  };
}
