import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type pg from "pg";
import { z } from "zod";
import { parseReportCsv, type ReportRow } from "./report-csv.js";

const LIST = 5; // how many offenders a failure names

const summarySchema = z.object({
  batch_id: z.string(),
  rows: z.number(),
  counts: z.record(z.string(), z.number()),
});
const storedRow = z.object({
  line: z.number(),
  key: z.string().nullable(),
  decision: z.string(),
  external_id: z.string().nullable(),
  error: z.string().nullable(),
  status: z.string().nullable(),
  http_status: z.number().nullable(),
  correlation_id: z.string().nullable(),
  ruleset_version: z.string().nullable(),
  attempts: z.number().nullable(),
});
type StoredRow = z.infer<typeof storedRow>;

/** The report row as the results of record must hold it: what differs, or undefined when all agree. */
function difference(report: ReportRow, stored: StoredRow | undefined): string | undefined {
  if (stored === undefined) return "not in batch_rows";
  const text = (value: string | number | null) => (value === null ? "" : String(value));
  // what batch_rows holds of the line itself (a report's `pending` travels as `queued`)
  const want: [string, string, string][] = [
    ["idempotency_key", report.status === "rejected" ? "" : report.idempotency_key, text(stored.key)],
    ["decision", report.status === "pending" ? "queued" : report.status, stored.decision],
    ["external_id", report.external_id, text(stored.external_id)],
    ["error", report.error, text(stored.error)],
  ];
  // and, for a row that was sent, its key's result
  if (report.status === "succeeded" || report.status === "failed")
    want.push(
      ["status", report.status, text(stored.status)],
      ["http_status", report.http_status, text(stored.http_status)],
      ["correlation_id", report.correlation_id, text(stored.correlation_id)],
      ["ruleset_version", report.ruleset_version, text(stored.ruleset_version)],
      ["attempts", report.attempts, text(stored.attempts)],
    );
  const wrong = want
    .filter(([, a, b]) => a !== b)
    .map(([name, a, b]) => `${name} ${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`);
  return wrong.length === 0 ? undefined : wrong.join(", ");
}

/**
 * PostgreSQL against the reports on disk, row for row: every report's batch with its counts, every CSV
 * line in batch_rows with the report's decision, key and error and, for a sent row, in results with its
 * status, HTTP status, correlation id, ruleset version and attempts; no line, batch or attempt more.
 * Returns what differs (empty when all agree) and how many report rows were compared.
 */
export async function compareWithReports(
  pool: pg.Pool,
  dropDir: string,
): Promise<{ failures: string[]; rows: number }> {
  const failures: string[] = [];
  const reports = join(dropDir, "reports");
  const names = (await readdir(reports)).filter((n) => n.endsWith(".results.csv"));
  let compared = 0;
  const batchIds: string[] = [];
  for (const name of names) {
    const summary = summarySchema.parse(
      JSON.parse(await readFile(join(reports, name.replace(/\.results\.csv$/, ".summary.json")), "utf8")),
    );
    batchIds.push(summary.batch_id);
    const { rows } = parseReportCsv(await readFile(join(reports, name), "utf8"));
    const head = await pool.query<{ state: string; counts: unknown }>(
      "SELECT state, counts FROM batches WHERE batch_id = $1",
      [summary.batch_id],
    );
    const batch = head.rows[0];
    if (
      batch?.state !== "reported" ||
      JSON.stringify(sortKeys(batch.counts)) !== JSON.stringify(sortKeys(summary.counts))
    )
      failures.push(
        `${name}: batches holds ${JSON.stringify(batch)}, the summary counts ${JSON.stringify(summary.counts)}`,
      );
    const stored = await pool.query(
      `SELECT br.line, br.idempotency_key::text AS key, br.decision, br.external_id, br.error, r.status,
              r.http_status, r.correlation_id, r.ruleset_version, r.attempts
         FROM batch_rows br LEFT JOIN results r USING (idempotency_key)
        WHERE br.batch_id = $1 ORDER BY br.line`,
      [summary.batch_id],
    );
    const byLine = new Map(stored.rows.map((row) => storedRow.parse(row)).map((row) => [row.line, row]));
    const wrong: string[] = [];
    for (const row of rows) {
      compared++;
      const problem = difference(row, byLine.get(row.line));
      if (problem !== undefined) wrong.push(`line ${row.line}: ${problem}`);
      byLine.delete(row.line);
    }
    if (byLine.size > 0)
      wrong.push(`lines in batch_rows the report lacks: ${[...byLine.keys()].slice(0, LIST).join(", ")}`);
    if (wrong.length > 0)
      failures.push(
        `${name}: ${wrong.length} row(s) differ from PostgreSQL: ${wrong.slice(0, LIST).join("; ")}`,
      );
  }
  const others = await pool.query<{ batch_id: string }>(
    "SELECT batch_id FROM batches WHERE NOT (batch_id = ANY($1::text[]))",
    [batchIds],
  );
  if (others.rows.length > 0)
    failures.push(`batches in PostgreSQL without a report: ${others.rows.map((r) => r.batch_id).join(", ")}`);
  // every attempt a result counts is in attempts (once: the table's key). attempts may hold more: an
  // answer that changed nothing (a late one to a key already final, a refused API key) is an attempt
  // row the record does not count (docs/results-of-record.md)
  const attempts = await pool.query<{ key: string; counted: number; rows: number }>(
    `SELECT r.idempotency_key::text AS key, r.attempts AS counted, count(a.attempt)::int AS rows
       FROM results r LEFT JOIN attempts a USING (idempotency_key)
      GROUP BY 1, 2 HAVING r.attempts > count(a.attempt)`,
  );
  if (attempts.rows.length > 0)
    failures.push(
      `${attempts.rows.length} result(s) counting more attempts than their attempt rows: ` +
        attempts.rows
          .slice(0, LIST)
          .map((a) => `${a.key} ${a.counted} ≠ ${a.rows}`)
          .join(", "),
    );
  return { failures, rows: compared };
}

function sortKeys(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)));
}
