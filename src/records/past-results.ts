import { z } from "zod";
import type { PastRecord } from "../ledger/past-record.js";
import { unreachable } from "./pool.js";

/** What the look-up needs of a connection pool: one query (pg.Pool has it). */
export interface Queryable {
  query(text: string, values: readonly unknown[]): Promise<{ rows: unknown[] }>;
}

/** Times as ms since the epoch, in text: bigint as the driver gives it, exactly. */
const SUCCEEDED = `
  SELECT idempotency_key::text AS key, http_status, correlation_id, ruleset_version, attempts,
         (extract(epoch FROM first_attempt_at) * 1000)::bigint::text AS first_ms,
         (extract(epoch FROM last_attempt_at) * 1000)::bigint::text AS last_ms,
         coalesce(response_body::text, response_excerpt) AS body
    FROM results
   WHERE idempotency_key = ANY($1::uuid[]) AND status = 'succeeded'`;

const rowSchema = z.object({
  key: z.uuid(),
  http_status: z.number().int().nullable(),
  correlation_id: z.string().nullable(),
  ruleset_version: z.string().nullable(),
  attempts: z.number().int(),
  first_ms: z.string().regex(/^\d+$/).nullable(),
  last_ms: z.string().regex(/^\d+$/).nullable(),
  body: z.string().nullable(),
});

const orUndefined = <T>(value: T | null): T | undefined => value ?? undefined;

/**
 * The results of record asked, in one query, which of these idempotency keys succeeded, with their
 * answer as the exporter stored it. A database that cannot answer throws DatabaseUnreachableError
 * (its URL without the password).
 */
export async function succeededResults(
  db: Queryable,
  url: string,
  keys: readonly string[],
): Promise<PastRecord[]> {
  if (keys.length === 0) return [];
  let rows: unknown[];
  try {
    ({ rows } = await db.query(SUCCEEDED, [keys]));
  } catch (error) {
    throw unreachable(url, error);
  }
  return rows.map((raw) => {
    const row = rowSchema.parse(raw);
    return {
      key: row.key,
      httpStatus: orUndefined(row.http_status),
      correlationId: orUndefined(row.correlation_id),
      rulesetVersion: orUndefined(row.ruleset_version),
      attempts: row.attempts,
      firstAttemptAt: row.first_ms === null ? undefined : Number(row.first_ms),
      lastAttemptAt: row.last_ms === null ? undefined : Number(row.last_ms),
      responseBody: orUndefined(row.body),
    };
  });
}
