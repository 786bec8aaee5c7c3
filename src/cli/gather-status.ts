import { ledgerSize } from "../ledger/footprint.js";
import type { BatchMeta } from "../ledger/batch-store.js";
import { readDeployment } from "../queue/deployment-view.js";
import { requireKnownBatch } from "./batch-option.js";
import type { AppContext } from "./context.js";
import { probeDatabase } from "./database-probe.js";
import { statusReport, type StatusReport } from "./status-report.js";

/** How many batches `status` shows without --batch; the total is always given. */
const STATUS_BATCH_LIMIT = 20;
/** How long `status` waits for Redis's answers before it says Redis does not answer. */
const STATUS_READ_TIMEOUT_MS = 10_000;

/**
 * Reads everything `status` shows; with a batch id, only that batch (unknown: UnknownBatchError). The
 * deployment's state is the view /metrics and the console read too (src/queue/deployment-view.ts).
 */
export async function gatherStatus(ctx: AppContext, batchId: string | undefined): Promise<StatusReport> {
  const metas =
    batchId === undefined
      ? await recentBatches(ctx, STATUS_BATCH_LIMIT)
      : [await requireKnownBatch(ctx.batches, batchId, ctx.config.queuePrefix)];
  const view = await readDeployment(ctx.redis, ctx.queue, ctx.config, STATUS_READ_TIMEOUT_MS);
  const size = await ledgerSize(ctx.redis, ctx.config.queuePrefix, ctx.batches, view.census.records);
  const database =
    ctx.config.resultsDatabaseUrl === undefined ? null : await probeDatabase(ctx.config.resultsDatabaseUrl);
  return statusReport({
    prefix: ctx.config.queuePrefix,
    retentionMs: ctx.config.resultsRetention,
    now: Date.now(),
    view,
    metas,
    size,
    database,
  });
}

/** The newest batches first; a record that vanished meanwhile is left out. */
async function recentBatches(ctx: AppContext, limit: number): Promise<BatchMeta[]> {
  const ids = await ctx.batches.newest(limit);
  const metas = await Promise.all(ids.map((id) => ctx.batches.get(id)));
  return metas.filter((m): m is BatchMeta => m !== undefined);
}
