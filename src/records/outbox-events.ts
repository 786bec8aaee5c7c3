import { z } from "zod";
import { BATCH_STATES, FILE_FORMATS, KEY_STATUSES, ROW_DECISIONS } from "../ledger/statuses.js";
import { traceIdSchema } from "../tracing/trace-context.js";

/**
 * The events the ledger notes in its outbox (the stream `{prefix}:relay:outbox`, a field `e` of JSON per
 * event, one or more per entry), as the exporter reads them. Enumerations match the schema's CHECKs, so an event that
 * passes here is one the database takes.
 */
const ms = z.number().int().nonnegative();
const text = z.string();
const key = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);

export const attemptEvent = z.object({
  t: z.literal("attempt"),
  key,
  n: z.number().int().positive(),
  at: ms,
  ms: z.number().int(),
  http: z.number().int().min(100).max(599).nullable(),
  net: text.nullable(),
  cid: text.nullable(),
  ra: z.number().int().nullable(),
});

export const recordEvent = z.object({
  t: z.literal("record"),
  key,
  eid: text,
  status: z.enum(KEY_STATUSES),
  http: z.number().int().min(100).max(599).nullable(),
  cid: text.nullable(),
  ruleset: text.nullable(),
  attempts: z.number().int().nonnegative(),
  first: ms.nullable(),
  last: ms.nullable(),
  error: text.nullable(),
  by: key.nullable(),
  body: text.nullable(),
  /** The invoice's trace id; only in events of records written while tracing was on. */
  tr: traceIdSchema.optional(),
});

export const batchEvent = z.object({
  t: z.literal("batch"),
  batch: text.min(1),
  file: text,
  format: z.enum(FILE_FORMATS),
  state: z.enum(BATCH_STATES),
  created: ms,
  size: z.number().int().nonnegative().nullable(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  rows: z.number().int().nonnegative().nullable(),
  valid: z.number().int().nonnegative().nullable(),
  counts: z.record(z.string(), z.number().int()).nullable(),
  report_csv: text.nullable(),
  summary_json: text.nullable(),
  profile: text.nullable(),
  file_error: text.nullable(),
  reported: ms.nullable(),
  /** Absent from events written before batches could be replaced. */
  replaced_by: text.nullable().default(null),
});

const decision = z.enum(ROW_DECISIONS);

/** `[line, key|null, decision, externalId|null, error|null, conflictWith|null]`; a key only when not rejected. */
export const batchRow = z
  .tuple([
    z.number().int().positive(),
    key.nullable(),
    decision,
    text.nullable(),
    text.nullable(),
    key.nullable(),
  ])
  .refine(([, k, d]) => (d === "rejected") === (k === null), "a rejected row has no key, a kept row has one");

/** A stream entry id (`ms-seq`), as Redis gives them. */
const streamId = z.string().regex(/^[0-9]+-[0-9]+$/);

export const rowsEvent = z.object({
  t: z.literal("rows"),
  /**
   * The report generation the rows belong to: a stream id taken when the report was written, the same
   * for all of its events and greater than any older report's.
   */
  report: streamId,
  batch: text.min(1),
  rows: z.array(batchRow).max(1000),
});

export const outboxEvent = z.discriminatedUnion("t", [attemptEvent, recordEvent, batchEvent, rowsEvent]);

export type AttemptEvent = z.infer<typeof attemptEvent>;
export type RecordEvent = z.infer<typeof recordEvent>;
export type BatchEvent = z.infer<typeof batchEvent>;
export type RowsEvent = z.infer<typeof rowsEvent>;
export type OutboxEvent = z.infer<typeof outboxEvent>;

/**
 * One stream entry: its id and its events (one or more, in order: an answer's attempt and record travel
 * in one entry), or why it could not be read.
 */
export type OutboxEntry =
  | { readonly id: string; readonly events: readonly OutboxEvent[] }
  | { readonly id: string; readonly problem: string };

/** Reads an entry's fields (`[name, value, …]` as Redis gives them): every field `e` holds one event. */
export function readEntry(id: string, fields: readonly string[]): OutboxEntry {
  const events: OutboxEvent[] = [];
  for (let at = 0; at + 1 < fields.length; at += 2) {
    if (fields[at] !== "e") continue;
    const event = readEvent(fields[at + 1] ?? "");
    if (typeof event === "string") return { id, problem: event };
    events.push(event);
  }
  if (events.length === 0) return { id, problem: "no field e" };
  return { id, events };
}

/** One event from its JSON, or why it is not one. */
function readEvent(raw: string): OutboxEvent | string {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return "field e is not JSON";
  }
  const parsed = outboxEvent.safeParse(json);
  if (!parsed.success) return z.prettifyError(parsed.error).replace(/\s+/g, " ");
  return parsed.data;
}
