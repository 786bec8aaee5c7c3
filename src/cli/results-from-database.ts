import { DATABASE_URL_SETTING } from "../config/database-url.js";
import { safeUrl } from "../config/url-credentials.js";
import { BatchNotRecordedError } from "../records/errors/batch-not-recorded-error.js";
import { openPool, type Pool } from "../records/pool.js";
import type { ResultsFilter } from "../records/results-filter.js";
import { batchHeadQuery, batchRowsQuery, recordsQuery } from "../records/results-query.js";
import { batchHead, batchRow, recordRow, type BatchRow, type RecordRow } from "../records/results-rows.js";
import { checkSchema } from "../records/schema-version.js";
import { streamRows } from "../records/stream-rows.js";
import { csvCell } from "../results/csv-cell.js";
import { BODY_COLUMN, EXPORT_HEADER } from "../results/export-records.js";
import { REPORT_HEADER } from "../results/report-row.js";
import type { OutputSink } from "./output-sink.js";
import { escapedText, shownName } from "../names/shown-text.js";

export type ResultsFormat = "csv" | "jsonl";

/**
 * `results` over the results of record in PostgreSQL (RESULTS_DATABASE_URL): the same columns as the
 * export from Redis, streamed row by row from a cursor into `out`; CSV cells neutralised like the
 * reports', JSON lines raw.
 */
export async function exportFromDatabase(
  url: string,
  filter: ResultsFilter,
  format: ResultsFormat,
  out: OutputSink,
): Promise<void> {
  const where = safeUrl(url, DATABASE_URL_SETTING);
  const pool = await openPool(url, { max: 1, applicationName: "invoice-relay-results" });
  try {
    await checkSchema(pool, { where });
    if (filter.batch === undefined) await exportRecords(pool, filter, format, out);
    else await exportBatchRows(pool, { ...filter, batch: filter.batch }, format, out, where);
  } finally {
    await pool.end();
  }
}

async function exportRecords(pool: Pool, filter: ResultsFilter, format: ResultsFormat, out: OutputSink) {
  const columns: readonly string[] = [...EXPORT_HEADER, ...(filter.withBody ? [BODY_COLUMN] : [])];
  if (format === "csv" && !(await out.write(`${columns.join(",")}\r\n`))) return;
  const buffer = new LineBuffer(out);
  for await (const row of streamRows(pool, recordsQuery(filter), recordRow)) {
    const values = recordValues(row);
    const line =
      format === "csv"
        ? csvLineOf(columns.map((name) => values[name]))
        : `${JSON.stringify(Object.fromEntries(columns.map((name) => [name, values[name] ?? null])))}\n`;
    if (!(await buffer.write(line))) return;
  }
  await buffer.flush();
}

async function exportBatchRows(
  pool: Pool,
  filter: ResultsFilter & { readonly batch: string },
  format: ResultsFormat,
  out: OutputSink,
  where: string,
) {
  const headQuery = batchHeadQuery(filter.batch);
  const found = await pool.query(headQuery.text, [...headQuery.values]);
  const [head] = batchHead.array().parse(found.rows);
  if (head === undefined) throw new BatchNotRecordedError(filter.batch, where);
  if (format === "csv" && !(await out.write(`${REPORT_HEADER.join(",")}\r\n`))) return;
  if (head.state === "rejected") {
    // like its report: no rows, the file was unreadable as a whole
    process.stderr.write(
      `batch ${head.batch_id} (${shownName(head.file)}) was rejected as a whole: ${escapedText(head.file_error ?? "")}\n`,
    );
    return;
  }
  const buffer = new LineBuffer(out);
  for await (const row of streamRows(pool, batchRowsQuery(filter), batchRow)) {
    const line =
      format === "csv"
        ? csvLineOf(REPORT_HEADER.map((name) => row[name]))
        : `${JSON.stringify(batchRowJson(row))}\n`;
    if (!(await buffer.write(line))) return;
  }
  await buffer.flush();
}

/** Lines gathered into writes of about 64 kB: one write (and one wait for the reader) per line is slow. */
class LineBuffer {
  private text = "";
  constructor(private readonly out: OutputSink) {}

  async write(line: string): Promise<boolean> {
    this.text += line;
    return this.text.length < 65_536 ? this.out.open : this.flush();
  }

  async flush(): Promise<boolean> {
    const text = this.text;
    this.text = "";
    return text === "" ? this.out.open : this.out.write(text);
  }
}

type Cell = string | number | null | undefined;

function csvLineOf(cells: readonly Cell[]): string {
  return `${cells.map((cell) => csvCell(cell ?? "")).join(",")}\r\n`;
}

function recordValues(row: RecordRow): Record<string, Cell> {
  return {
    ...row,
    first_attempt_at: row.first_attempt_at?.toISOString() ?? null,
    last_attempt_at: row.last_attempt_at?.toISOString() ?? null,
  };
}

/** As reportRowJson (src/results/report-row-json.ts): an error the CSV leaves empty is null. */
function batchRowJson(row: BatchRow): BatchRow | (Omit<BatchRow, "error"> & { error: string | null }) {
  return { ...row, error: row.error === "" ? null : row.error };
}
