import { join } from "node:path";
import { claimedName, moveClaimed, type DropFolder } from "../ingest/drop-folder.js";
import { checkClaimedBytes, type ClaimedContent } from "../ingest/claimed-content.js";
import { firstExisting } from "../ingest/local-files.js";
import { BatchLease } from "../ledger/batch-lease.js";
import type { Logger } from "../log/logger.js";
import type { BatchMeta } from "../ledger/batch-store.js";
import type { RedisClient } from "../ledger/redis-client.js";
import { writeBatchReport, type WrittenReport } from "./batch-report.js";
import type { BatchRowsDeps } from "./batch-rows.js";
import { mapInFlight } from "../ingest/files-in-flight.js";
import { coerceError } from "../errors/relay-error.js";
import { shownName } from "../names/shown-text.js";
import { ledgerRows } from "./ledger-rows.js";
import { emptyCounts } from "./report-row.js";
import { folderProblemOf } from "../ingest/drop-folder-usable.js";
import { ReportWriteError } from "./errors/report-write-error.js";
import type { GoneFileReport } from "../ingest/errors/batch-file-gone-error.js";

/** Where a batch's file is on this machine: its recorded path, or processing/ or archive/ by name. */
export function locate(folder: DropFolder, batch: BatchMeta): Promise<string | undefined> {
  const name = claimedName(batch.id, batch.file);
  return firstExisting([batch.path, join(folder.processing, name), join(folder.archive, name)]);
}

/** checkClaimedBytes at `path`; undefined when no file is there. */
async function checkIfThere(
  path: string,
  file: string,
  claimed: ClaimedContent,
): Promise<Awaited<ReturnType<typeof checkClaimedBytes>> | undefined> {
  try {
    return await checkClaimedBytes(path, file, claimed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Writes the report of every batch whose rows are all final and archives its file. Batches whose file
 * is not on this machine are left to the process that has it. Safe to run from several processes.
 * Several batches are finalized side by side (files-in-flight.ts): a report is a few reads and writes of
 * Redis and of files, each a short wait.
 */
export async function finalizeCompleteBatches(
  deps: BatchRowsDeps & {
    readonly folder: DropFolder;
    readonly logger: Logger;
    readonly redis: RedisClient;
  },
): Promise<WrittenReport[]> {
  const written = await mapInFlight(await deps.batches.complete(), async (id) => {
    // One process writes a given report at a time; the others skip it this round.
    const lease = new BatchLease(deps.redis, deps.batches.names.reportLease(id));
    if (!(await lease.acquire())) return undefined;
    try {
      return await finalizeBatch(deps, id);
    } finally {
      await lease.release();
    }
  });
  return written.filter((report): report is WrittenReport => report !== undefined);
}

async function finalizeBatch(
  deps: BatchRowsDeps & {
    readonly folder: DropFolder;
    readonly logger: Logger;
  },
  id: string,
): Promise<WrittenReport | undefined> {
  const read = await deps.batches.getForReport(id);
  if (read === undefined || read.meta.state === "ingesting") return undefined;
  if (!read.complete) return undefined; // another process wrote it meanwhile
  const meta = read.meta;
  if (meta.state === "changed") {
    // Answers that landed since put it back among the complete batches; it is still not reported.
    await deps.batches.markChanged(id, meta.file_error ?? "changed after it was claimed");
    return undefined;
  }
  const claimed =
    meta.size === undefined || meta.sha256 === undefined
      ? undefined
      : { size: meta.size, sha256: meta.sha256 };
  // Reported only if the claimed bytes are still those ingested: a rewritten file has rows other than
  // those sent. Those of a small file are read once, for this check and for the report, from where the
  // record says the file is; the other places are looked at only when it is not there.
  const atRecorded = claimed === undefined ? undefined : await checkIfThere(meta.path, meta.file, claimed);
  const path = atRecorded === undefined ? await locate(deps.folder, meta) : meta.path;
  if (path === undefined) return undefined;
  const checked =
    atRecorded ?? (claimed === undefined ? {} : await checkClaimedBytes(path, meta.file, claimed));
  // A file that only grew is reported for the rows it claimed, then taken again whole (take-again.ts).
  if (checked.change !== undefined && !checked.change.prefixIntact) {
    deps.logger.error(
      { batch: id, file: meta.file, err: checked.change.message },
      "file changed after it was claimed; kept in processing/, not reported",
    );
    await deps.batches.markChanged(id, checked.change.message);
    return undefined;
  }
  const report = await writeBatchReport(deps, { ...meta, path }, deps.folder, {
    bytes: checked.bytes,
    outbox: read.outbox,
  });
  // Not on the pass's deadline: a pass reports what is done when its deadline comes, so its archive is
  // bounded by the hard stop (the deadline and the grace), which names it if the file system holds it.
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

/**
 * The report of a batch whose invoices are all final but whose file is gone (removed from processing/,
 * its folder unmounted), written where it can be: in reports/, from what Redis keeps (ledger-rows.ts),
 * its summary saying so; the batch is then reported. Where reports/ cannot be written, the batch's
 * record says where and why (`status` shows it) and it stays unreported, for a later run to write.
 */
export async function reportGoneFile(
  deps: BatchRowsDeps & { readonly folder: DropFolder; readonly logger: Logger; readonly redis: RedisClient },
  meta: BatchMeta,
): Promise<GoneFileReport | { readonly busy: true }> {
  const lease = new BatchLease(deps.redis, deps.batches.names.reportLease(meta.id));
  if (!(await lease.acquire())) return { busy: true };
  const gone =
    `its file ${shownName(meta.path)} was gone once its invoices were final: this report lists the rows ` +
    "it sent, from Redis; rows not sent (rejected, duplicates) are named only in the file";
  try {
    const report = await writeBatchReport(deps, { ...meta, file_error: gone }, deps.folder, {
      rows: ledgerRows(deps, meta),
    });
    await deps.batches.update(meta.id, { file_error: gone });
    await deps.batches.markReported(meta.id, {
      report_csv: report.csvPath,
      summary_json: report.summaryPath,
      counts: JSON.stringify(report.summary.counts),
      path: meta.path,
    });
    deps.logger.warn({ batch: meta.id, file: meta.file, report: report.csvPath }, `report written: ${gone}`);
    return { written: report.csvPath };
  } catch (error) {
    // The file system refused (reports/ gone with its folder, read-only): said where; anything else thrown.
    if (!(error instanceof ReportWriteError) && (error as NodeJS.ErrnoException).syscall === undefined)
      throw error;
    // Said as the drop folder's check says it when the folder itself is gone or refuses (one wording).
    const problem = coerceError(await folderProblemOf(deps.folder, error)).message;
    const where = `in ${deps.folder.reports} (${problem})`;
    const why = `its file ${shownName(meta.path)} is gone and its report could not be written ${where}`;
    // Its outcomes are kept with its record all the same, for `status` and the pass's tally.
    const counts = emptyCounts();
    for await (const row of ledgerRows(deps, meta)) counts[row.status] += 1;
    await deps.batches.update(meta.id, { file_error: why, counts: JSON.stringify(counts) });
    return { notWritten: where };
  } finally {
    await lease.release();
  }
}
