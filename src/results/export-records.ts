import { csvCell } from "./csv-cell.js";
import type { ResultRecord } from "../ledger/record.js";
import type { KeyStatus } from "../ledger/statuses.js";

/** Columns of `results` without --batch: one line per idempotency key of this QUEUE_PREFIX. */
export const EXPORT_HEADER = [
  "idempotency_key",
  "external_id",
  "status",
  "http_status",
  "correlation_id",
  "ruleset_version",
  "attempts",
  "batch",
  "line",
  "first_attempt_at",
  "last_attempt_at",
  "error",
  "trace_id",
] as const;

/** Appended only with --with-body: the service's answers may carry more than an operator should paste. */
export const BODY_COLUMN = "response_body";

/** One exported record; absent values are null (CSV: empty), times ISO 8601. */
export interface ExportRow {
  readonly idempotency_key: string;
  readonly external_id: string;
  readonly status: KeyStatus;
  readonly http_status: number | null;
  readonly correlation_id: string | null;
  readonly ruleset_version: string | null;
  readonly attempts: number;
  readonly batch: string;
  readonly line: number;
  readonly first_attempt_at: string | null;
  readonly last_attempt_at: string | null;
  readonly error: string | null;
  /** The invoice's trace (docs/operations.md, "Traces"); null when it was not traced. */
  readonly trace_id: string | null;
  readonly response_body?: string | null;
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export function exportRow(record: ResultRecord, withBody: boolean): ExportRow {
  const row: ExportRow = {
    idempotency_key: record.key,
    external_id: record.external_id,
    status: record.status,
    http_status: record.http_status ?? null,
    correlation_id: record.correlation_id ?? null,
    ruleset_version: record.ruleset_version ?? null,
    attempts: record.attempts,
    batch: record.batch,
    line: record.line,
    first_attempt_at: iso(record.first_attempt_at),
    last_attempt_at: iso(record.last_attempt_at),
    // the ledger blanks the error on success; a retrying key keeps its last attempt's error
    error: record.status === "succeeded" || record.error === "" ? null : (record.error ?? null),
    trace_id: record.trace_id ?? null,
  };
  return withBody ? { ...row, response_body: record.response_body ?? null } : row;
}

export function exportCsvHeader(withBody: boolean): string {
  return `${[...EXPORT_HEADER, ...(withBody ? [BODY_COLUMN] : [])].join(",")}\r\n`;
}

export function exportCsvLine(row: ExportRow, withBody: boolean): string {
  const names: readonly (keyof ExportRow)[] = withBody ? [...EXPORT_HEADER, BODY_COLUMN] : EXPORT_HEADER;
  return `${names.map((name) => csvCell(row[name] ?? "")).join(",")}\r\n`;
}
