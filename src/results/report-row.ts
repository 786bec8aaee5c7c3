import { csvCell } from "./csv-cell.js";
import type { RowStatus } from "../ledger/statuses.js";

/** Row statuses of a report, as docs/vendor-files.md names them ("Batches and reports"). */
export { ROW_STATUSES, type RowStatus } from "../ledger/statuses.js";

/** One line of `reports/<file>.<batch>.results.csv`. */
export interface ReportRow {
  readonly line: number;
  readonly external_id: string;
  readonly idempotency_key: string;
  readonly status: RowStatus;
  readonly http_status: string;
  readonly correlation_id: string;
  readonly ruleset_version: string;
  readonly attempts: string;
  readonly error: string;
  /** For a conflict: the key of the other version that stood in its way (not a column of the report). */
  readonly conflict_with?: string;
  /** For a record that could not be split: the lines it holds, when more than one (not a column; rowLines). */
  readonly lines?: number;
}

export const REPORT_HEADER = [
  "line",
  "external_id",
  "idempotency_key",
  "status",
  "http_status",
  "correlation_id",
  "ruleset_version",
  "attempts",
  "error",
] as const;

export function csvLine(row: ReportRow): string {
  return `${REPORT_HEADER.map((name) => csvCell(row[name])).join(",")}\r\n`;
}

export type StatusCounts = Record<RowStatus, number>;

export function emptyCounts(): StatusCounts {
  return { succeeded: 0, duplicate: 0, rejected: 0, failed: 0, conflict: 0, superseded: 0, pending: 0 };
}
