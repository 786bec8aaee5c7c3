import { z } from "zod";
import { KEY_STATUSES } from "../ledger/statuses.js";

/** One row of recordsQuery (src/records/results-query.ts): a result record as the database holds it. */
export const recordRow = z.object({
  idempotency_key: z.string(),
  external_id: z.string(),
  status: z.enum(KEY_STATUSES),
  http_status: z.number().int().nullable(),
  correlation_id: z.string().nullable(),
  ruleset_version: z.string().nullable(),
  attempts: z.number().int(),
  batch: z.string().nullable(),
  line: z.number().int().nullable(),
  first_attempt_at: z.date().nullable(),
  last_attempt_at: z.date().nullable(),
  error: z.string().nullable(),
  trace_id: z.string().nullable(),
  response_body: z.string().nullable().optional(),
});
export type RecordRow = z.infer<typeof recordRow>;

/** One row of batchRowsQuery: a line of the batch's report; absent values are null. */
export const batchRow = z.object({
  line: z.number().int(),
  external_id: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  status: z.string(),
  http_status: z.number().int().nullable(),
  correlation_id: z.string().nullable(),
  ruleset_version: z.string().nullable(),
  attempts: z.number().int().nullable(),
  error: z.string(),
});
export type BatchRow = z.infer<typeof batchRow>;

/** One row of batchHeadQuery. */
export const batchHead = z.object({
  batch_id: z.string(),
  file: z.string(),
  state: z.string(),
  file_error: z.string().nullable(),
});
export type BatchHead = z.infer<typeof batchHead>;
