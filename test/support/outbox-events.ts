import type { Redis } from "ioredis";
import { z } from "zod";
import { LedgerNames } from "../../src/ledger/names.js";

/** The outbox's event format as the contract states it, field for field (strict: no other fields). */
const text = z.string().nullable();
const int = z.number().int().nullable();
export const outboxEventSchema = z.discriminatedUnion("t", [
  z.strictObject({
    t: z.literal("attempt"),
    key: z.string(),
    n: z.number().int().min(1),
    at: z.number().int(),
    ms: z.number().int().min(0),
    http: int,
    net: text,
    cid: text,
    ra: int,
  }),
  z.strictObject({
    t: z.literal("record"),
    key: z.string(),
    eid: z.string(),
    status: z.enum(["queued", "retrying", "succeeded", "failed", "superseded"]),
    http: int,
    cid: text,
    ruleset: text,
    attempts: z.number().int().min(0),
    first: int,
    last: int,
    error: text,
    by: text,
    body: text,
    /** The invoice's trace id, only while tracing is on (docs/operations.md, "Traces"). */
    tr: z
      .string()
      .regex(/^[0-9a-f]{32}$/)
      .optional(),
  }),
  z.strictObject({
    t: z.literal("batch"),
    batch: z.string(),
    file: z.string(),
    format: z.enum(["csv", "json", "ndjson"]),
    state: z.enum(["ingesting", "ingested", "rejected", "reported", "changed"]),
    created: z.number().int(),
    size: int,
    sha256: text,
    rows: int,
    valid: int,
    counts: z.record(z.string(), z.number().int()).nullable(),
    report_csv: text,
    summary_json: text,
    profile: text,
    file_error: text,
    reported: int,
    replaced_by: text,
  }),
  z.strictObject({
    t: z.literal("rows"),
    report: z.string().regex(/^[0-9]+-[0-9]+$/),
    batch: z.string(),
    rows: z.array(z.tuple([z.number().int(), text, z.string(), text, text, text])).max(1000),
  }),
]);
export type OutboxEvent = z.infer<typeof outboxEventSchema>;

/** Every event of the prefix's outbox, oldest first (every field of every entry must be an `e`). */
export async function readOutbox(redis: Redis, prefix: string): Promise<OutboxEvent[]> {
  return (await readOutboxEntries(redis, prefix)).flat();
}

/** The prefix's outbox entries, oldest first, each as its events in order. */
export async function readOutboxEntries(redis: Redis, prefix: string): Promise<OutboxEvent[][]> {
  const entries = await redis.xrange(new LedgerNames(prefix).outbox, "-", "+");
  return entries.map(([, fields]) => {
    if (fields.length === 0 || fields.some((f, i) => i % 2 === 0 && f !== "e"))
      throw new Error(`an entry with fields ${fields.join(",")}`);
    return fields.filter((_, i) => i % 2 === 1).map((e) => outboxEventSchema.parse(JSON.parse(e)));
  });
}
