import { randomUUID } from "node:crypto";
import fc from "fast-check";
import type { Redis } from "ioredis";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BatchStore } from "../../src/ledger/batch-store.js";
import type { OutboxRow } from "../../src/ledger/outbox.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { silentLogger } from "../../src/log/logger.js";
import { exportEvents, type IdentifiedEvent } from "../../src/records/export-batch.js";
import { migrate } from "../../src/records/migrations.js";
import { readEntry } from "../../src/records/outbox-events.js";
import { openPool, type Pool } from "../../src/records/pool.js";
import { freshDatabase, type TestDatabase } from "../support/postgres.js";
import { testPrefix, testRedis } from "../support/redis.js";

const NOW = 1_800_000_000_000;
const TABLES = ["batches", "results", "attempts", "batch_rows"] as const;

let redis: Redis;
let db: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  redis = testRedis();
  db = await freshDatabase();
  pool = await openPool(db.url);
  await migrate(pool, { logger: silentLogger() });
});
afterAll(async () => {
  await redis.quit();
  await pool.end();
  await db.drop();
});

const attempt = (number: number, more: object = {}) => ({
  number,
  startedAt: NOW + number,
  durationMs: 20,
  ...more,
});
/** `n` rejected lines from `from` on, as a report's rows. */
const rejected = (from: number, n: number): OutboxRow[] =>
  Array.from({ length: n }, (_, i) => [from + i, null, "rejected", null, `bad line ${from + i}`, null]);

/**
 * Two nights of one file, as the ledger writes them to the outbox: answers (retrying, succeeded, failed),
 * a report of 1,503 lines in two `rows` events, `retry` of the failed key, its success, then a second
 * report of the same batch with FEWER lines (1,103), and a second batch. Every event kind, every table.
 */
async function recordedNights(): Promise<{ entries: IdentifiedEvent[]; keys: string[]; batch: string }> {
  const prefix = testPrefix();
  const ledger = new RedisLedger(redis, prefix, () => NOW);
  const batches = new BatchStore(redis, prefix, () => NOW);
  await ledger.enableOutbox();
  const open = (id: string) =>
    batches.open({
      id,
      file: `${id}.csv`,
      format: "csv",
      path: `/${id}`,
      host: "h",
      size: 10,
      sha256: "a".repeat(64),
    });
  const [a, b, c] = [2, 3, 4].map((line) => ({ line, key: randomUUID(), externalId: `INV-${line}` }));
  if (a === undefined || b === undefined || c === undefined) throw new Error("three rows");
  await open("b1");
  await ledger.registerRows("b1", [a, b, c]);
  await ledger.finishIngest("b1");
  await batches.update("b1", { state: "ingested", rows: 1503, valid_rows: 3 });
  await ledger.recordRetrying(a.key, {
    httpStatus: 503,
    error: "HTTP 503",
    attempt: attempt(1, { httpStatus: 503 }),
  });
  await ledger.recordSucceeded(a.key, {
    httpStatus: 201,
    correlationId: "ca",
    rulesetVersion: "r1",
    responseBody: '{"ok":1}',
    attempt: attempt(2, { httpStatus: 201, correlationId: "ca" }),
  });
  await ledger.recordFailed(b.key, {
    httpStatus: 503,
    error: "gave up: HTTP 503",
    document: "{}",
    attempt: attempt(1, { httpStatus: 503 }),
  });
  await ledger.recordFailed(c.key, {
    httpStatus: 422,
    error: "invalid",
    responseBody: "no",
    document: "{}",
    attempt: attempt(1, { httpStatus: 422 }),
  });
  const first: OutboxRow[] = [
    [2, a.key, "succeeded", a.externalId, null, null],
    [3, b.key, "failed", b.externalId, "gave up: HTTP 503", null],
    [4, c.key, "failed", c.externalId, "invalid", null],
    ...rejected(5, 1500),
  ];
  const report = await batches.addReportRows("b1", first.slice(0, 1000));
  await batches.addReportRows("b1", first.slice(1000), report);
  await batches.markReported("b1", {
    report_csv: "r1.csv",
    summary_json: "s1.json",
    counts: '{"failed":2}',
    path: "p",
  });

  expect(await ledger.requeueFailed(b.key)).toBe("requeued");
  await ledger.recordSucceeded(b.key, {
    httpStatus: 201,
    correlationId: "cb",
    rulesetVersion: "r1",
    responseBody: '{"ok":2}',
    attempt: attempt(2, { httpStatus: 201, correlationId: "cb" }),
  });
  const second: OutboxRow[] = [
    [2, a.key, "succeeded", a.externalId, null, null],
    [3, b.key, "succeeded", b.externalId, null, null],
    [4, c.key, "failed", c.externalId, "invalid", null],
    ...rejected(5, 1100),
  ];
  await batches.addReportRows(
    "b1",
    second.slice(1000),
    await batches.addReportRows("b1", second.slice(0, 1000)),
  );
  await batches.markReported("b1", {
    report_csv: "r1.csv",
    summary_json: "s1.json",
    counts: '{"succeeded":2,"failed":1}',
    path: "p",
  });

  const d = { line: 2, key: randomUUID(), externalId: "INV-D" };
  await open("b2");
  await ledger.registerRows("b2", [d]);
  await ledger.finishIngest("b2");
  await ledger.recordSucceeded(d.key, {
    httpStatus: 201,
    correlationId: "cd",
    attempt: attempt(1, { httpStatus: 201 }),
  });
  await batches.addReportRows("b2", [[2, d.key, "succeeded", d.externalId, null, null]]);
  await batches.markReported("b2", {
    report_csv: "r2.csv",
    summary_json: "s2.json",
    counts: '{"succeeded":1}',
    path: "q",
  });

  const raw = await redis.xrange(ledger.names.outbox, "-", "+");
  // one event each (an answer's entry holds two: they are shuffled apart too, a harder order than any read)
  const entries: IdentifiedEvent[] = raw.flatMap(([id, fields]) => {
    const entry = readEntry(id, fields);
    if (!("events" in entry)) throw new Error(`${id}: ${entry.problem}`);
    return entry.events.map((event) => ({ id, event }));
  });
  return { entries, keys: [a.key, b.key, c.key, d.key], batch: "b1" };
}

/** Every row of the four tables the exporter writes (but when it wrote them), in one order. */
async function tables(): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of TABLES)
    out[table] = (
      await pool.query<{ row: unknown }>(
        `SELECT to_jsonb(t) - 'updated_at' AS row FROM ${table} t ORDER BY to_jsonb(t) - 'updated_at'`,
      )
    ).rows.map((r) => r.row);
  return out;
}

/** Exports the reads in turn into emptied tables, each read in one transaction as the exporter does. */
async function exportReads(
  reads: readonly (readonly IdentifiedEvent[])[],
): Promise<Record<string, unknown[]>> {
  await pool.query(`TRUNCATE ${TABLES.join(", ")}`);
  const client: pg.PoolClient = await pool.connect();
  try {
    for (const read of reads) if (read.length > 0) await exportEvents(client, read);
  } finally {
    client.release();
  }
  return tables();
}

/** The entries in stream order, 500 a read: as one exporter alone drains them. */
const inOrder = (entries: readonly IdentifiedEvent[]) =>
  Array.from({ length: Math.ceil(entries.length / 500) }, (_, i) => entries.slice(i * 500, i * 500 + 500));

describe("the exporter, whatever order the outbox's events come in", () => {
  it("when an older report's rows are exported after a newer report with fewer lines, then the batch keeps the newer report's lines only", async () => {
    const { entries, keys, batch } = await recordedNights();
    const [firstReport] = entries.flatMap((e) => (e.event.t === "rows" ? [e.event.report] : []));
    const older = entries.filter((e) => e.event.t === "rows" && e.event.report === firstReport);
    expect(older).toHaveLength(2);
    const end = await exportReads([entries.filter((e) => !older.includes(e)), older]);

    const lines = await pool.query<{ line: number; key: string | null; decision: string }>(
      "SELECT line, idempotency_key::text AS key, decision FROM batch_rows WHERE batch_id = $1 ORDER BY line",
      [batch],
    );
    expect(lines.rows).toHaveLength(1103);
    expect(lines.rows.slice(0, 3)).toEqual([
      { line: 2, key: keys[0], decision: "succeeded" },
      { line: 3, key: keys[1], decision: "succeeded" },
      { line: 4, key: keys[2], decision: "failed" },
    ]);
    expect(lines.rows.at(-1)?.line).toBe(1104);
    expect(end).toEqual(await exportReads(inOrder(entries)));
  });

  it("when the recorded events are replayed shuffled, duplicated and split into reads at random, then every table ends as if they had come in order", async () => {
    const { entries } = await recordedNights();
    const reference = await exportReads(inOrder(entries));
    // the reference itself is the story's end: b1 holds the second report's 1,103 lines, b2 its one
    expect(reference["batch_rows"]).toHaveLength(1104);
    expect(reference["attempts"]).toHaveLength(6);
    expect(reference["results"]).toHaveLength(4);
    expect(reference["batches"]).toEqual([
      expect.objectContaining({ batch_id: "b1", state: "reported", counts: { succeeded: 2, failed: 1 } }),
      expect.objectContaining({ batch_id: "b2", state: "reported" }),
    ]);

    const n = entries.length;
    const indices = Array.from({ length: n }, (_, i) => i);
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(indices, { minLength: n, maxLength: n }),
        fc.array(fc.tuple(fc.nat(n - 1), fc.nat(2 * n)), { maxLength: n }),
        fc.array(fc.integer({ min: 1, max: n }), { minLength: 1, maxLength: n }),
        async (order, duplicates, sizes) => {
          const sequence = [...order];
          for (const [entry, at] of duplicates) sequence.splice(at % (sequence.length + 1), 0, entry);
          const reads: IdentifiedEvent[][] = [];
          for (let at = 0, i = 0; at < sequence.length; i++) {
            const size = i < sizes.length ? (sizes[i] ?? 1) : sequence.length;
            reads.push(sequence.slice(at, at + size).flatMap((k) => entries[k] ?? []));
            at += size;
          }
          expect(await exportReads(reads)).toEqual(reference);
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
