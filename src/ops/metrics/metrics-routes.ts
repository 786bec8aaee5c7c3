import type { Queue } from "bullmq";
import { createInvoiceQueue } from "../../queue/invoice-queue.js";
import type { OpsContext, OpsRoutes } from "../ops-server.js";
import { registerRedisGauges } from "./redis-gauges.js";
import { within } from "../within.js";
import { readRedisSnapshot, type RedisSnapshot } from "./redis-snapshot.js";
import { rateSettingsOf } from "../../queue/send-rate-view.js";
import type { RelayMetrics } from "./relay-metrics.js";

/** How long a scrape waits for Redis before answering without what Redis holds (redis_up 0). */
export const SCRAPE_REDIS_TIMEOUT_MS = 1000;

/**
 * `GET /metrics`: this process's metrics in Prometheus' text format, then BullMQ's own for the invoice
 * queue (bullmq_job_count by state, bullmq_job_completed_total, bullmq_job_failed_total); docs/operations.md,
 * "Metrics". Whatever Redis does, the scrape is answered.
 */
export function metricsRoutes(metrics: RelayMetrics): OpsRoutes {
  return (ctx) => (app) => {
    let queue: Queue | undefined;
    const invoiceQueue = (): Queue =>
      (queue ??= createInvoiceQueue(ctx.redis(), ctx.config.queuePrefix, ctx.config.maxAttempts));
    // One read of Redis per scrape, shared by the gauges that collect from it.
    let scrape: Promise<RedisSnapshot> | undefined;
    const read = (): Promise<RedisSnapshot> =>
      readRedisSnapshot(
        ctx.redis(),
        invoiceQueue(),
        ctx.config.queuePrefix,
        SCRAPE_REDIS_TIMEOUT_MS,
        rateSettingsOf(ctx.config),
      );
    registerRedisGauges(metrics.registry, () => (scrape ??= read()));

    app.addHook("onClose", async () => {
      await queue?.close();
    });
    app.get("/metrics", async (_request, reply) => {
      scrape = read();
      const snapshot = await scrape;
      const ours = await metrics.registry.metrics();
      const bullmq = snapshot.up ? await bullmqMetrics(invoiceQueue(), ctx) : "";
      return reply
        .type(metrics.registry.contentType)
        .header("cache-control", "no-store")
        .send(`${ours.trimEnd()}\n${bullmq}`);
    });
  };
}

/** BullMQ's export, its label sets written without the space after commas that strict parsers refuse. */
async function bullmqMetrics(queue: Queue, ctx: OpsContext): Promise<string> {
  try {
    const text = await within(queue.exportPrometheusMetrics(), SCRAPE_REDIS_TIMEOUT_MS);
    if (text === undefined) return "";
    return `${text.replace(/, (?=[a-zA-Z_][a-zA-Z0-9_]*=")/g, ",").trimEnd()}\n`;
  } catch (error) {
    ctx.logger.debug({ err: error }, "BullMQ's queue metrics could not be read for /metrics");
    return "";
  }
}
