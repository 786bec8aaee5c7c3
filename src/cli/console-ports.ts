import { BatchStore } from "../ledger/batch-store.js";
import { RedisLedger } from "../ledger/redis-ledger.js";
import { resolveNamespace } from "../invoice/key.js";
import { createInvoiceQueue } from "../queue/invoice-queue.js";
import { consoleRoutes } from "../ops/console/console-routes.js";
import type { OpsContext, OpsRoutes } from "../ops/ops-server.js";
import { RowPages } from "../results/row-pages.js";
import { retryFailed } from "../use-cases/retry-failed.js";

/**
 * The web console with what it may not reach itself: a batch's rows (from its report or its file, in
 * src/results) and `retry` of a batch's failed rows (src/use-cases), both on the ops server's connection.
 */
export function consoleOps(): OpsRoutes {
  return consoleRoutes({
    rows: (ctx) => {
      const prefix = ctx.config.queuePrefix;
      return new RowPages({
        ledger: new RedisLedger(ctx.redis(), prefix),
        batches: new BatchStore(ctx.redis(), prefix),
        namespace: resolveNamespace(ctx.config.idempotencyNamespace),
      });
    },
    ledger: (ctx) => new RedisLedger(ctx.redis(), ctx.config.queuePrefix),
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
