import { z } from "zod";
import type { PastRecord } from "../ledger/past-record.js";
import { isConnectionFailure, unreachable } from "./pool.js";

/** What the look-up needs of a connection pool: one query (pg.Pool has it). */
export interface Queryable {
  query(text: string, values: readonly unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * One query for a chunk: the keys that succeeded, and every final version of the chunk's external_ids
 * (the primary key and results_external_id answer it). Superseded versions are left out: a newer one of
 * theirs is what decides. Times as ms since the epoch, in text: bigint as the driver gives it, exactly.
 */
const PAST = `
  SELECT idempotency_key::text AS key, external_id, status, http_status, correlation_id, ruleset_version,
         attempts, error,
         (extract(epoch FROM first_attempt_at) * 1000)::bigint::text AS first_ms,
         (extract(epoch FROM last_attempt_at) * 1000)::bigint::text AS last_ms,
         coalesce(response_body::text, response_excerpt) AS body
    FROM results
   WHERE (idempotency_key = ANY($1::uuid[]) AND status = 'succeeded')
      OR (external_id = ANY($2::text[]) AND status IN ('succeeded', 'failed'))`;

const rowSchema = z.object({
  key: z.uuid(),
  external_id: z.string(),
  status: z.enum(["succeeded", "failed"]),
  http_status: z.number().int().nullable(),
  correlation_id: z.string().nullable(),
  ruleset_version: z.string().nullable(),
  attempts: z.number().int(),
  error: z.string().nullable(),
  first_ms: z.string().regex(/^\d+$/).nullable(),
  last_ms: z.string().regex(/^\d+$/).nullable(),
  body: z.string().nullable(),
});

const orUndefined = <T>(value: T | null): T | undefined => value ?? undefined;

/**
 * The results of record asked, in one query, which of these idempotency keys succeeded and which final
 * versions of these external_ids they hold, with their answers as the exporter stored them. A database
 * that cannot answer now throws DatabaseUnreachableError (its URL without the password); one that refuses
 * the query, the driver's error.
 */
export async function pastResults(
  db: Queryable,
  url: string,
  asked: { readonly keys: readonly string[]; readonly externalIds: readonly string[] },
): Promise<PastRecord[]> {
  if (asked.keys.length === 0 && asked.externalIds.length === 0) return [];
  let rows: unknown[];
  try {
    ({ rows } = await db.query(PAST, [asked.keys, asked.externalIds]));
  } catch (error) {
    throw isConnectionFailure(error) ? unreachable(url, error) : error;
  }
  return rows.map((raw) => {
    const row = rowSchema.parse(raw);
    return {
      key: row.key,
      externalId: row.external_id,
      status: row.status,
      httpStatus: orUndefined(row.http_status),
      correlationId: orUndefined(row.correlation_id),
      rulesetVersion: orUndefined(row.ruleset_version),
      attempts: row.attempts,
      firstAttemptAt: row.first_ms === null ? undefined : Number(row.first_ms),
      lastAttemptAt: row.last_ms === null ? undefined : Number(row.last_ms),
      error: orUndefined(row.error),
      responseBody: orUndefined(row.body),
    };
  });
}
