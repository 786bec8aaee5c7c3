import { open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { z } from "zod";
import { join } from "node:path";
import type { BatchMeta } from "../ledger/batch-store.js";
import type { FileName } from "../names/file-name.js";
import type { DropFolder } from "../ingest/drop-folder.js";
import { profileOfBatch } from "../ingest/profiles/profile-snapshot.js";
import type { ReportEncoding } from "../ingest/profiles/source-profile.js";
import { fileSystemCode } from "../errors/file-system-fixes.js";
import { ReportWriteError } from "./errors/report-write-error.js";
import { ROWS_PER_EVENT, type OutboxRow } from "../ledger/outbox.js";
import { batchRows, type BatchRowsDeps } from "./batch-rows.js";
import { csvLine, emptyCounts, REPORT_HEADER, type ReportRow, type StatusCounts } from "./report-row.js";
import { rowLines } from "../ingest/raw-item.js";

export interface BatchSummary {
  readonly file: string;
  readonly batch_id: string;
  readonly format: string;
  /** The source profile the file was read with (`sources.yaml, profile 1 ("sap-*.csv")`), or null. */
  readonly profile: string | null;
  readonly rows: number;
  readonly counts: StatusCounts;
  readonly created_at: string;
  readonly completed_at: string;
  readonly results_csv: string;
  readonly file_error?: string;
  /**
   * The file grew or changed after this batch claimed it and was taken again, whole, as this batch: its
   * report covers every row of the file (this report's rows keep what this batch itself did).
   */
  readonly replaced_by?: Replacement;
  /** The file is the same bytes an earlier batch took from the same SFTP source (perhaps under another name). */
  readonly same_content_as?: { readonly batch_id: string; readonly file: string };
}

export interface Replacement {
  readonly batch_id: string;
  readonly results_csv: string;
  readonly summary_json: string;
}

export interface WrittenReport {
  readonly csvPath: string;
  readonly summaryPath: string;
  readonly summary: BatchSummary;
}

/** A report is written in pieces of about this many characters: a file stream's own chunk, 64 KiB. */
const WRITE_CHUNK_CHARS = 64 * 1024;

/**
 * What a results CSV starts with in each report encoding: nothing, or U+FEFF, which UTF-8 writes as the
 * byte order mark EF BB BF (Unicode §23.8) that Excel takes as "this is UTF-8".
 */
const CSV_START: Readonly<Record<ReportEncoding, string>> = { "utf-8": "", "utf-8-bom": "\uFEFF" };

/** The encoding of a batch's report: its source profile's `report_encoding:`, else REPORT_ENCODING. */
export function reportEncodingOf(
  batch: Pick<BatchMeta, "profile_json">,
  folder: Pick<DropFolder, "reportEncoding">,
): ReportEncoding {
  return profileOfBatch(batch)?.reportEncoding ?? folder.reportEncoding ?? "utf-8";
}

/** `reports/<source file name>.<batch id>.results.csv` and `.summary.json`. */
export function reportPaths(
  reportsDir: string,
  batch: Pick<BatchMeta, "file" | "id">,
): { csv: string; summary: string } {
  const base = join(reportsDir, `${batch.file}.${batch.id}`);
  return { csv: `${base}.results.csv`, summary: `${base}.summary.json` };
}

/**
 * A report row as the outbox's `rows` events carry it. `pending` (a key not final when the report was
 * written) goes as `queued`: the results of record know no `pending` decision.
 */
function outboxRow(row: ReportRow): OutboxRow {
  const orNull = (text: string | undefined) => (text === undefined || text === "" ? null : text);
  return [
    row.line,
    row.status === "rejected" ? null : orNull(row.idempotency_key),
    row.status === "pending" ? "queued" : row.status,
    orNull(row.external_id),
    orNull(row.error),
    orNull(row.conflict_with),
  ];
}

/**
 * Writes a batch's report: every row of the file with its final status, then the summary. Each file is
 * written to a temporary name and renamed, so a reader never sees half a report. While the ledger's
 * outbox is on, the rows also go to it (`rows` events of one report generation) before the caller marks
 * the batch reported; a report written again sends them again as a newer generation, whose rows replace
 * the older one's in the results of record. The CSV is written in reportEncodingOf the batch; the
 * summary JSON is always UTF-8 without a byte order mark, which JSON writers must not add (RFC 8259, 8.1). A file
 * system that refuses the write (full, read-only) raises ReportWriteError naming the file and the fix.
 */
export async function writeBatchReport(
  deps: BatchRowsDeps,
  batch: BatchMeta,
  folder: Pick<DropFolder, "reports" | "reportEncoding">,
  known: {
    /** The claimed bytes, read and checked by the caller (checkClaimedBytes): the file is not read again. */
    readonly bytes?: Uint8Array | undefined;
    /** Whether the outbox is on, read by the caller with the batch's record (getForReport). */
    readonly outbox?: boolean | undefined;
    /** The rows, when not read from the file (its file is gone: ledger-rows.ts). */
    readonly rows?: AsyncIterable<ReportRow> | undefined;
  } = {},
): Promise<WrittenReport> {
  const paths = reportPaths(folder.reports, batch);
  try {
    return await writeReportFiles(deps, batch, folder, paths, known);
  } catch (error) {
    const errno = fileSystemCode(error);
    if (errno === undefined) throw error;
    throw new ReportWriteError(folder.reports, batch.file, batch.id, errno, { cause: error });
  }
}

async function writeReportFiles(
  deps: BatchRowsDeps,
  batch: BatchMeta,
  folder: Pick<DropFolder, "reports" | "reportEncoding">,
  paths: { readonly csv: string; readonly summary: string },
  known: {
    readonly bytes?: Uint8Array | undefined;
    readonly outbox?: boolean | undefined;
    readonly rows?: AsyncIterable<ReportRow> | undefined;
  },
): Promise<WrittenReport> {
  const reportsDir = folder.reports;
  const counts = emptyCounts();
  let rows = 0;
  const tmpCsv = `${paths.csv}.${process.pid}.tmp`;
  // Opened as a promise, not a stream: a name the file system refuses fails here, to the caller, and
  // no 'error' event is ever left without a listener.
  const out = await open(tmpCsv, "w");
  let buffered = `${CSV_START[reportEncodingOf(batch, folder)]}${REPORT_HEADER.join(",")}\r\n`;
  const flush = async (atLeast: number) => {
    if (buffered.length < atLeast) return;
    await out.writeFile(buffered);
    buffered = "";
  };
  const outbox = batch.state !== "rejected" && (known.outbox ?? (await deps.batches.outboxEnabled()));
  let pending: OutboxRow[] = [];
  // The report's generation in the outbox: the exporter keeps only the newest generation's rows of a batch.
  let report = "";
  try {
    if (batch.state !== "rejected") {
      for await (const row of known.rows ?? batchRows(deps, batch, known.bytes)) {
        counts[row.status] += rowLines(row);
        rows += rowLines(row);
        buffered += csvLine(row);
        await flush(WRITE_CHUNK_CHARS);
        if (outbox) pending.push(outboxRow(row));
        if (pending.length >= ROWS_PER_EVENT) {
          report = await deps.batches.addReportRows(batch.id, pending, report);
          pending = [];
        }
      }
    }
    // a report without rows still sends one (empty) event: its generation replaces an older report's rows
    if (outbox && (pending.length > 0 || report === ""))
      await deps.batches.addReportRows(batch.id, pending, report);
    await flush(1);
    await out.close();
    await rename(tmpCsv, paths.csv);
  } catch (error) {
    await out.close().catch(() => undefined);
    await rm(tmpCsv, { force: true });
    throw error;
  }
  const summary: BatchSummary = {
    file: batch.file,
    batch_id: batch.id,
    format: batch.format,
    profile: batch.profile ?? null,
    rows,
    counts,
    created_at: new Date(batch.created_at).toISOString(),
    completed_at: new Date(batch.completed_at ?? Date.now()).toISOString(),
    results_csv: paths.csv,
    ...(batch.file_error === undefined ? {} : { file_error: batch.file_error }),
    ...(batch.replaced_by === undefined
      ? {}
      : { replaced_by: replacementOf(reportsDir, batch.file, batch.replaced_by) }),
    ...(batch.same_content_as === undefined
      ? {}
      : { same_content_as: { batch_id: batch.same_content_as.batch, file: batch.same_content_as.file } }),
  };
  await writeSummary(paths.summary, summary);
  return { csvPath: paths.csv, summaryPath: paths.summary, summary };
}

/** Where the report of the batch a file was taken again as is (or will be) written. */
export function replacementOf(reportsDir: string, file: FileName, batchId: string): Replacement {
  const paths = reportPaths(reportsDir, { file, id: batchId });
  return { batch_id: batchId, results_csv: paths.csv, summary_json: paths.summary };
}

/**
 * Notes in a written summary that its batch was replaced. The results CSV is left as it is: its header is
 * fixed (docs/vendor-files.md, "Batches and reports") and its rows stay true of what this batch did.
 */
export async function markSummaryReplaced(summaryPath: string, replacement: Replacement): Promise<void> {
  const parsed = summaryFile.safeParse(JSON.parse(await readFile(summaryPath, "utf8")));
  if (!parsed.success) return; // not a summary this relay wrote: left alone
  await writeSummary(summaryPath, { ...parsed.data, replaced_by: replacement });
}

const summaryFile = z.looseObject({ batch_id: z.string() });

async function writeSummary(path: string, summary: object): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(summary, null, 2)}\n`);
  await rename(tmp, path);
}
