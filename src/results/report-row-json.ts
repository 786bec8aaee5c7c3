import type { ReportRow } from "./report-row.js";

/** A report row as JSON: the CSV's field names; a field the CSV leaves empty is null; numbers are numbers. */
export interface ReportRowJson {
  readonly line: number;
  readonly external_id: string | null;
  readonly idempotency_key: string | null;
  readonly status: ReportRow["status"];
  readonly http_status: number | null;
  readonly correlation_id: string | null;
  readonly ruleset_version: string | null;
  readonly attempts: number | null;
  readonly error: string | null;
}

const text = (value: string): string | null => (value === "" ? null : value);
const int = (value: string): number | null => (value === "" ? null : Number(value));

export function reportRowJson(row: ReportRow): ReportRowJson {
  return {
    line: row.line,
    external_id: text(row.external_id),
    idempotency_key: text(row.idempotency_key),
    status: row.status,
    http_status: int(row.http_status),
    correlation_id: text(row.correlation_id),
    ruleset_version: text(row.ruleset_version),
    attempts: int(row.attempts),
    error: text(row.error),
  };
}
