import type { ResultsFilter } from "./results-filter.js";

/** A statement and its parameters: values travel only as `$n`, never inside the text. */
export interface SqlQuery {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** Collects parameters and hands out their placeholders. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** Conditions on the last attempt shared by both queries (`at` is the column's SQL). */
function timeBounds(filter: ResultsFilter, at: string, params: Params): string[] {
  return [
    ...(filter.since === undefined ? [] : [`${at} >= ${params.add(filter.since)}`]),
    ...(filter.until === undefined ? [] : [`${at} < ${params.add(filter.until)}`]),
  ];
}

const where = (conditions: readonly string[]): string =>
  conditions.length === 0 ? "" : `WHERE ${conditions.join("\n    AND ")}`;

/**
 * Every result record matching the filter, one row per idempotency key, in the columns of `results`
 * without --batch (src/results/export-records.ts), oldest last attempt first. `batch` and `line` are
 * where the key was first dropped. The (status, last_attempt_at) index serves `--status … --since …`.
 */
export function recordsQuery(filter: ResultsFilter): SqlQuery {
  const params = new Params();
  const conditions = [
    ...(filter.statuses.length === 0 ? [] : [`r.status = ANY(${params.add(filter.statuses)}::text[])`]),
    ...(filter.externalId === undefined ? [] : [`r.external_id = ${params.add(filter.externalId)}`]),
    ...timeBounds(filter, "r.last_attempt_at", params),
  ];
  const body = filter.withBody
    ? ",\n       COALESCE(r.response_body::text, r.response_excerpt) AS response_body"
    : "";
  const text = `SELECT r.idempotency_key::text AS idempotency_key, r.external_id, r.status, r.http_status,
       r.correlation_id, r.ruleset_version, r.attempts, first_drop.batch_id AS batch, first_drop.line,
       r.first_attempt_at, r.last_attempt_at,
       CASE WHEN r.status = 'succeeded' OR r.error = '' THEN NULL ELSE r.error END AS error,
       r.trace_id${body}
  FROM results r
  LEFT JOIN LATERAL (
    SELECT br.batch_id, br.line
      FROM batch_rows br JOIN batches b ON b.batch_id = br.batch_id
     WHERE br.idempotency_key = r.idempotency_key
     ORDER BY b.created_at, br.batch_id, br.line
     LIMIT 1
  ) first_drop ON true
  ${where(conditions)}
  ORDER BY r.last_attempt_at, r.idempotency_key`;
  return { text, values: params.values };
}

/**
 * The status a row of a batch's report shows, from what ingest decided for the row and where its key
 * stands now: the same rules as the report read from Redis (src/results/batch-rows.ts).
 */
const ROW_STATUS = `CASE
      WHEN br.decision IN ('rejected', 'conflict', 'duplicate') THEN br.decision
      WHEN r.status IN ('succeeded', 'failed', 'superseded') THEN r.status
      ELSE 'pending'
    END`;

/** The error column of a report row: what ingest noted for the row, else what its key's record says. */
const ROW_ERROR = `CASE
      WHEN br.decision = 'rejected' THEN COALESCE(br.error, '')
      WHEN br.decision = 'conflict' THEN COALESCE(br.error,
        'external_id already sent or in flight with other content under key ' || br.conflict_with::text || '; not sent', '')
      WHEN br.decision = 'duplicate' THEN COALESCE(br.error, 'already succeeded earlier; not sent again')
      WHEN r.status = 'superseded' THEN COALESCE(br.error,
        'failed, then a newer version of this invoice was sent under key ' || COALESCE(r.superseded_by::text, '?') || '; not sent again')
      WHEN r.status = 'succeeded' THEN COALESCE(br.error, '')
      ELSE COALESCE(br.error, r.error, '')
    END`;

/**
 * A batch's rows matching the filter, in line order, in the columns of its report CSV. A rejected or
 * conflicting row shows no answer of the service: it was not sent.
 */
export function batchRowsQuery(filter: ResultsFilter & { readonly batch: string }): SqlQuery {
  const params = new Params();
  const inner = [`br.batch_id = ${params.add(filter.batch)}`];
  if (filter.externalId !== undefined) inner.push(`br.external_id = ${params.add(filter.externalId)}`);
  inner.push(...timeBounds(filter, "r.last_attempt_at", params));
  const outer =
    filter.statuses.length === 0 ? [] : [`row.status = ANY(${params.add(filter.statuses)}::text[])`];
  const text = `SELECT row.line, row.external_id, row.idempotency_key, row.status, row.http_status,
       row.correlation_id, row.ruleset_version, row.attempts, row.error
  FROM (
    SELECT br.line, COALESCE(br.external_id, r.external_id) AS external_id,
           br.idempotency_key::text AS idempotency_key, ${ROW_STATUS} AS status,
           CASE WHEN sent.yes THEN r.http_status END AS http_status,
           CASE WHEN sent.yes THEN r.correlation_id END AS correlation_id,
           CASE WHEN sent.yes THEN r.ruleset_version END AS ruleset_version,
           CASE WHEN sent.yes THEN r.attempts END AS attempts,
           ${ROW_ERROR} AS error
      FROM batch_rows br
      LEFT JOIN results r ON r.idempotency_key = br.idempotency_key
      CROSS JOIN LATERAL (SELECT br.decision NOT IN ('rejected', 'conflict') AND r.idempotency_key IS NOT NULL AS yes) sent
     ${where(inner)}
  ) row
  ${where(outer)}
  ORDER BY row.line`;
  return { text, values: params.values };
}

/** The batch's head, to tell an unknown batch from an empty result and a file rejected as a whole. */
export function batchHeadQuery(batch: string): SqlQuery {
  return {
    text: "SELECT batch_id, file, state, file_error FROM batches WHERE batch_id = $1",
    values: [batch],
  };
}
