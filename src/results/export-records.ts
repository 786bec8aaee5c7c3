import type { Redis } from "ioredis";
import type { RelayKeys } from "../ledger/key-names.js";
import { csvCell } from "./csv-cell.js";
import { resultRecordSchema, type KeyStatus, type ResultRecord } from "../ledger/record.js";

/** Columns of `results` without --batch: one line per idempotency key of this QUEUE_PREFIX. */
const EXPORT_HEADER = [
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
] as const;

/** Appended only with --with-body: the service's answers may carry more than an operator should paste. */
const BODY_COLUMN = "response_body";

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
    // the store blanks the error on success; a retrying key keeps its last attempt's error
    error: record.status === "succeeded" || record.error === "" ? null : (record.error ?? null),
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

export interface ScanOptions {
  /** SCAN COUNT: keys looked at per round trip (a hint to Redis, not a cap). */
  readonly pageSize?: number;
  /** A key whose hash does not read as a record: reported, then skipped. */
  readonly onMalformed?: (key: string, problem: string) => void;
}

/**
 * Every result record of a prefix, a page at a time: SCAN (never KEYS, which blocks Redis) and one
 * pipelined HGETALL per page, so memory stays constant however many keys there are, and the next page
 * is only read when the consumer asks for more. SCAN may return a key twice if Redis resizes its table
 * meanwhile; deduplicating would cost memory per key, so a rare repeated line is accepted.
 */
export async function* scanRecords(
  redis: Redis,
  keys: RelayKeys,
  options: ScanOptions = {},
): AsyncGenerator<ResultRecord> {
  const recordPrefix = keys.record("");
  const match = `${escapeGlob(recordPrefix)}*`;
  let cursor = "0";
  do {
    const [next, names] = await redis.scan(cursor, "MATCH", match, "COUNT", options.pageSize ?? 1000);
    cursor = next;
    if (names.length === 0) continue;
    const pipeline = redis.pipeline();
    for (const name of names) pipeline.hgetall(name);
    const replies = (await pipeline.exec()) ?? [];
    for (const [i, name] of names.entries()) {
      const key = name.slice(recordPrefix.length);
      const [error, value] = replies[i] ?? [null, null];
      const parsed = error ? undefined : resultRecordSchema.safeParse(value);
      if (parsed?.success === true) yield { ...parsed.data, key };
      else if (!isEmptyHash(value)) {
        // deleted between SCAN and HGETALL reads as an empty hash: not a problem, just gone
        options.onMalformed?.(key, error?.message ?? parsed?.error.issues[0]?.message ?? "unreadable");
      }
    }
  } while (cursor !== "0");
}

const isEmptyHash = (value: unknown): boolean =>
  typeof value === "object" && value !== null && Object.keys(value).length === 0;

/** A prefix is matched literally: a QUEUE_PREFIX holding `*`, `?` or `[` must not widen the pattern. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
