import { join } from "node:path";
import { claimedName, moveClaimed, type DropFolder } from "../ingest/drop-folder.js";
import { findContentChange } from "../ingest/claimed-content.js";
import { firstExisting } from "../ingest/local-files.js";
import { BatchLease } from "../ledger/batch-lease.js";
import type { Logger } from "../log/logger.js";
import type { BatchMeta } from "../ledger/batch-store.js";
import type { RedisClient } from "../ledger/redis-client.js";
import { writeBatchReport, type WrittenReport } from "./batch-report.js";
import type { BatchRowsDeps } from "./batch-rows.js";

/** Where a batch's file is on this machine: its recorded path, or processing/ or archive/ by name. */
function locate(folder: DropFolder, batch: BatchMeta): Promise<string | undefined> {
  const name = claimedName(batch.id, batch.file);
  return firstExisting([batch.path, join(folder.processing, name), join(folder.archive, name)]);
}

/**
 * Writes the report of every batch whose rows are all final and archives its file. Batches whose file
 * is not on this machine are left to the process that has it. Safe to run from several processes.
 */
export async function finalizeCompleteBatches(
  deps: BatchRowsDeps & { readonly folder: DropFolder; readonly logger: Logger; readonly redis: RedisClient },
): Promise<WrittenReport[]> {
  const written: WrittenReport[] = [];
  for (const id of await deps.batches.complete()) {
    // One process writes a given report at a time; the others skip it this round.
    const lease = new BatchLease(deps.redis, deps.batches.names.reportLease(id));
    if (!(await lease.acquire())) continue;
    try {
      const report = await finalizeBatch(deps, id);
      if (report !== undefined) written.push(report);
    } finally {
      await lease.release();
    }
  }
  return written;
}

async function finalizeBatch(
  deps: BatchRowsDeps & { readonly folder: DropFolder; readonly logger: Logger },
  id: string,
): Promise<WrittenReport | undefined> {
  const meta = await deps.batches.get(id);
  if (meta === undefined || meta.state === "ingesting") return undefined;
  if (!(await deps.batches.isComplete(id))) return undefined; // another process wrote it meanwhile
  if (meta.state === "changed") {
    // Answers that landed since put it back among the complete batches; it is still not reported.
    await deps.batches.markChanged(id, meta.file_error ?? "changed after it was claimed");
    return undefined;
  }
  const path = await locate(deps.folder, meta);
  if (path === undefined) return undefined;
  if (meta.size !== undefined && meta.sha256 !== undefined) {
    // Reported only if the claimed bytes are still those ingested: a rewritten file has rows other than
    // those sent.
    const change = await findContentChange(path, meta.file, { size: meta.size, sha256: meta.sha256 });
    // A file that only grew is reported for the rows it claimed, then taken again whole (take-again.ts).
    if (change !== undefined && !change.prefixIntact) {
      deps.logger.error(
        { batch: id, file: meta.file, err: change.message },
        "file changed after it was claimed; kept in processing/, not reported",
      );
      await deps.batches.markChanged(id, change.message);
      return undefined;
    }
  }
  const report = await writeBatchReport(deps, { ...meta, path }, deps.folder.reports);
  const archived = path.startsWith(deps.folder.processing)
    ? await moveClaimed(deps.folder, { batchId: meta.id, name: meta.file, path }, "archive")
    : path;
  await deps.batches.markReported(id, {
    report_csv: report.csvPath,
    summary_json: report.summaryPath,
    counts: JSON.stringify(report.summary.counts),
    path: archived,
  });
  deps.logger.info(
    { batch: id, file: meta.file, counts: report.summary.counts, report: report.csvPath },
    "report written",
  );
  return report;
}
