import type { Queue } from "bullmq";
import {
  DEPLOYMENT_READ_TIMEOUT_MS,
  DeploymentReader,
  type DeploymentView,
} from "../../queue/deployment-view.js";
import type { OpsContext, OpsRoutes } from "../ops-server.js";
import { registerRedisGauges } from "./redis-gauges.js";
import { within } from "../within.js";
import type { RelayMetrics } from "./relay-metrics.js";

/**
 * `GET /metrics`: this process's metrics in Prometheus' text format, then BullMQ's own for the invoice
 * queue (bullmq_job_count by state, bullmq_job_completed_total, bullmq_job_failed_total); docs/operations.md,
 * "Metrics". Whatever Redis does, the scrape is answered.
 */
export function metricsRoutes(metrics: RelayMetrics): OpsRoutes {
  return (ctx) => (app) => {
    const deployment = new DeploymentReader(ctx.redis(), ctx.config);
    // One reading of the deployment per scrape, shared by the gauges that collect from it; undefined
    // when Redis did not answer in time (redis_up 0).
    let scrape: Promise<DeploymentView | undefined> | undefined;
    const read = (): Promise<DeploymentView | undefined> =>
      deployment.read().catch((error: unknown) => {
        ctx.logger.debug({ err: error }, "the deployment's state could not be read for /metrics");
        return undefined;
      });
    registerRedisGauges(metrics.registry, () => (scrape ??= read()));

    app.addHook("onClose", async () => {
      await deployment.close();
    });
    app.get("/metrics", async (_request, reply) => {
      scrape = read();
      const view = await scrape;
      const ours = await metrics.registry.metrics();
      const bullmq = view === undefined ? "" : await bullmqMetrics(deployment.queue, ctx);
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
    const text = await within(queue.exportPrometheusMetrics(), DEPLOYMENT_READ_TIMEOUT_MS);
    if (text === undefined) return "";
    return `${text.replace(/, (?=[a-zA-Z_][a-zA-Z0-9_]*=")/g, ",").trimEnd()}\n`;
  } catch (error) {
    ctx.logger.debug({ err: error }, "BullMQ's queue metrics could not be read for /metrics");
    return "";
  }
}
