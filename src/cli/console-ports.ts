import { BatchStore } from "../ledger/batch-store.js";
import { RedisLedger } from "../ledger/redis-ledger.js";
import { Passes } from "../ledger/passes.js";
import { readSendSeries } from "../ledger/send-series.js";
import { resolveNamespace } from "../invoice/key.js";
import { DeploymentReader } from "../queue/deployment-view.js";
import { createInvoiceQueue } from "../queue/invoice-queue.js";
import { consoleRoutes } from "../ops/console/console-routes.js";
import type { OpsContext, OpsRoutes } from "../ops/ops-server.js";
import { RowPages } from "../results/row-pages.js";
import { retryFailed } from "../use-cases/retry-failed.js";
import { checkOutboxDatabase } from "../ledger/outbox-detach.js";

/**
 * The web console with its ports, all on the ops server's connection: the batches, a batch's rows (from
 * its report or its file, in src/results), the deployment's view (src/queue), the search's ledger and
 * `retry` of a batch's failed rows (src/use-cases).
 */
export function consoleOps(): OpsRoutes {
  return consoleRoutes({
    batches: (ctx) => new BatchStore(ctx.redis(), ctx.config.queuePrefix),
    deployment: (ctx) => new DeploymentReader(ctx.redis(), ctx.config),
    rows: (ctx) => {
      const prefix = ctx.config.queuePrefix;
      return new RowPages({
        ledger: new RedisLedger(ctx.redis(), prefix),
        batches: new BatchStore(ctx.redis(), prefix),
        namespace: resolveNamespace(ctx.config.idempotencyNamespace),
      });
    },
    ledger: (ctx) => new RedisLedger(ctx.redis(), ctx.config.queuePrefix),
    writesRefused: (ctx) => () =>
      checkOutboxDatabase(ctx.redis(), ctx.config.queuePrefix, {
        hasDatabase: ctx.config.resultsDatabaseUrl !== undefined,
        use: "reads",
      }),
    passes: (ctx) => {
      const prefix = ctx.config.queuePrefix;
      const passes = new Passes(ctx.redis(), prefix);
      return {
        get: (id) => passes.get(id),
        newest: (n) => passes.newest(n),
        count: () => passes.count(),
        series: (from, to) => readSendSeries(ctx.redis(), prefix, from, to),
      };
    },
    retry: (ctx: OpsContext) => async (batchId) => {
      const prefix = ctx.config.queuePrefix;
      const queue = createInvoiceQueue(ctx.redis(), prefix, ctx.config.maxAttempts);
      try {
        const outcome = await retryFailed(
          {
            ledger: new RedisLedger(ctx.redis(), prefix),
            batches: new BatchStore(ctx.redis(), prefix),
            queue,
          },
          batchId,
        );
        return {
          requeued: outcome.requeued + outcome.resumed,
          busy: outcome.busy.count,
          superseded: outcome.superseded.count,
          noDocument: outcome.noDocument.count,
        };
      } finally {
        await queue.close();
      }
    },
  });
}
