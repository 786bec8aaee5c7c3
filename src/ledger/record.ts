import { z } from "zod";

/**
 * Where an idempotency key stands. queued/retrying are in flight; succeeded, failed and superseded are
 * final. `superseded`: the key failed, and a newer version of the same external_id was sent since under
 * another key (`superseded_by`); `retry` never sends it again.
 */
export const KEY_STATUSES = ["queued", "retrying", "succeeded", "failed", "superseded"] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];

export const isFinal = (status: KeyStatus | undefined): boolean =>
  status === "succeeded" || status === "failed" || status === "superseded";

const optionalText = z.string().optional();
const optionalInt = z.coerce.number().int().optional();

/** One key's record as stored in its Redis hash (all values are strings there). */
export const resultRecordSchema = z.object({
  status: z.enum(KEY_STATUSES),
  external_id: z.string(),
  batch: z.string(),
  line: z.coerce.number().int(),
  attempts: z.coerce.number().int().default(0),
  http_status: optionalInt,
  correlation_id: optionalText,
  ruleset_version: optionalText,
  error: optionalText,
  /** The newer key of the same external_id that made this one `superseded`. */
  superseded_by: optionalText,
  response_body: optionalText,
  /**
   * Canonical JSON of the invoice as sent, kept once the key is failed: what `retry` sends again after
   * the job is gone. Keys in flight have it in their job, and succeeded keys need it no more.
   */
  document: optionalText,
  created_at: optionalInt,
  first_attempt_at: optionalInt,
  last_attempt_at: optionalInt,
});

export type ResultRecord = z.infer<typeof resultRecordSchema> & { readonly key: string };

/** What an attempt's outcome writes into the record. */
export interface AttemptFields {
  readonly httpStatus?: number | undefined;
  readonly correlationId?: string | undefined;
  readonly rulesetVersion?: string | undefined;
  readonly error?: string | undefined;
  readonly responseBody?: string | undefined;
  /** The canonical JSON sent; written with a failure only (see `document` above). */
  readonly document?: string | undefined;
}

/** Flattens attempt fields into HSET pairs, skipping what is absent. */
export function attemptPairs(fields: AttemptFields): string[] {
  const pairs: string[] = [];
  const put = (name: string, value: string | number | undefined) => {
    if (value !== undefined) pairs.push(name, String(value));
  };
  put("http_status", fields.httpStatus);
  put("correlation_id", fields.correlationId);
  put("ruleset_version", fields.rulesetVersion);
  put("error", fields.error);
  put("response_body", fields.responseBody);
  put("document", fields.document);
  return pairs;
}
