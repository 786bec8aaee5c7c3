import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerNames } from "../../src/ledger/names.js";
import { outboxBacklog } from "../../src/ledger/outbox-backlog.js";
import { silentLogger } from "../../src/log/logger.js";
import { EXPORT_GROUP, OutboxExporter } from "../../src/records/exporter.js";
import { migrate } from "../../src/records/migrations.js";
import { openPool, type Pool } from "../../src/records/pool.js";
import { freshDatabase, type TestDatabase } from "../support/postgres.js";
import { testPrefix, testRedis } from "../support/redis.js";

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});
const opened: { db: TestDatabase; pool: Pool }[] = [];
afterEach(async () => {
  for (const { db, pool } of opened.splice(0)) {
    await pool.end();
    await db.drop();
  }
});

async function fixture() {
  const db = await freshDatabase();
  const pool = await openPool(db.url);
  opened.push({ db, pool });
  await migrate(pool, { logger: silentLogger() });
  const prefix = testPrefix();
  const outbox = new LedgerNames(prefix).outbox;
  const exporter = (consumer = "c1", claimIdleMs = 30_000) =>
    new OutboxExporter({
      redis,
      prefix,
      pool,
      url: db.url,
      logger: silentLogger(),
      consumer,
      claimIdleMs,
      blockMs: 10,
    });
  const add = (event: object) => redis.xadd(outbox, "*", "e", JSON.stringify(event)) as Promise<string>;
  /** Exports until a round finds nothing. */
  const drain = async (e: OutboxExporter) => {
    await e.ensureGroup();
    while ((await e.exportOnce()) > 0);
  };
  const rows = async (sql: string) => (await pool.query<Record<string, unknown>>(sql)).rows;
  return { prefix, outbox, exporter, add, drain, rows, pool, url: db.url };
}

const key = () => randomUUID();
const record = (k: string, over: object = {}) => ({
  t: "record",
  key: k,
  eid: "INV-1",
  status: "succeeded",
  http: 201,
  cid: "corr-1",
  ruleset: "2026.1",
  attempts: 2,
  first: 1_800_000_000_000,
  last: 1_800_000_001_000,
  error: null,
  by: null,
  body: '{"id":"doc-1"}',
  ...over,
});
const attempt = (k: string, n: number, http: number | null) => ({
  t: "attempt",
  key: k,
  n,
  at: 1_800_000_000_000 + n,
  ms: 12,
  http,
  net: http === null ? "socket hang up" : null,
  cid: null,
  ra: http === 503 ? 1000 : null,
});
const batch = (id: string, over: object = {}) => ({
  t: "batch",
  batch: id,
  file: "invoices.csv",
  format: "csv",
  state: "reported",
  created: 1_800_000_000_000,
  size: 120,
  sha256: "a".repeat(64),
  rows: 2,
  valid: 1,
  counts: { succeeded: 1, rejected: 1 },
  report_csv: "/r/invoices.csv",
  summary_json: "/r/invoices.json",
  profile: null,
  file_error: null,
  reported: 1_800_000_002_000,
  replaced_by: null,
  ...over,
});

describe("the outbox exporter", () => {
  it("when events are in the outbox, then each is written once, the outbox is emptied, and replaying them changes nothing", async () => {
    const f = await fixture();
    const k = key();
    const events = [
      batch("b1"),
      {
        t: "rows",
        report: "1-0",
        batch: "b1",
        rows: [
          [2, k, "new", "INV-1", null, null],
          [3, null, "rejected", null, "bad date", null],
        ],
      },
      attempt(k, 1, 503),
      attempt(k, 2, 201),
      record(k),
      record(key(), { status: "failed", http: 422, body: "not json <html>", error: "refused" }),
    ];
    for (const e of events) await f.add(e);
    await f.drain(f.exporter());

    expect(await outboxBacklog(redis, f.prefix)).toEqual({ entries: 0, oldest: undefined });
    const snapshot = async () => ({
      results: await f.rows(
        "SELECT idempotency_key::text AS k, status, http_status, correlation_id, ruleset_version, attempts, response_body, response_excerpt, event_id FROM results ORDER BY status",
      ),
      attempts: await f.rows("SELECT attempt, http_status, network_error FROM attempts ORDER BY attempt"),
      batches: await f.rows("SELECT batch_id, state, counts, reported_at, event_id FROM batches"),
      rows: await f.rows(
        "SELECT line, idempotency_key::text AS k, decision, error FROM batch_rows ORDER BY line",
      ),
    });
    const first = await snapshot();
    expect(first.results).toHaveLength(2);
    expect(first.results[0]).toMatchObject({
      status: "failed",
      response_body: null,
      response_excerpt: "not json <html>",
    });
    expect(first.results[1]).toMatchObject({
      k,
      status: "succeeded",
      http_status: 201,
      correlation_id: "corr-1",
      ruleset_version: "2026.1",
      attempts: 2,
      response_body: { id: "doc-1" },
      response_excerpt: null,
    });
    expect(first.attempts).toEqual([
      { attempt: 1, http_status: 503, network_error: null },
      { attempt: 2, http_status: 201, network_error: null },
    ]);
    expect(first.batches).toEqual([
      expect.objectContaining({ batch_id: "b1", state: "reported", counts: { succeeded: 1, rejected: 1 } }),
    ]);
    expect((first.batches[0]?.["reported_at"] as Date).getTime()).toBe(1_800_000_002_000);
    expect(first.rows).toEqual([
      { line: 2, k, decision: "new", error: null },
      { line: 3, k: null, decision: "rejected", error: "bad date" },
    ]);

    // the same events again (as a process that died before its acknowledgement would leave them)
    for (const e of events) await f.add(e);
    await f.drain(f.exporter());
    const again = await snapshot();
    expect(again.attempts).toEqual(first.attempts);
    expect(again.rows).toEqual(first.rows);
    // the replayed entries are newer ones in the stream: only the event id they were written from moves
    const strip = (rows: Record<string, unknown>[]) => rows.map((r) => ({ ...r, event_id: null }));
    expect(strip(again.results)).toEqual(strip(first.results));
    expect(strip(again.batches)).toEqual(strip(first.batches));
  });

  it("when texts hold quotes, backslashes, NULs, lone surrogates and non-ASCII, then each row is written with them, NUL and lone halves as U+FFFD", async () => {
    const f = await fixture();
    const [a, b, c] = [key(), key(), key()];
    const tricky = 'Ré "quoted" \\ back\\slash, tab\t, 名前 💶';
    await f.add(record(a, { eid: tricky, body: JSON.stringify({ note: tricky, n: [1, 2] }) }));
    await f.add(record(b, { eid: "INV-\u0000-\ud800-x", error: "bad\u0000byte", body: 'not json: "<html>' }));
    await f.add(record(c, { status: "failed", body: '{"a":"\\u0000"}', cid: "\udc00cid" }));
    await f.add({ ...attempt(a, 1, null), net: 'reset \u0000 "peer"', cid: tricky });
    await f.drain(f.exporter());

    const byKey = new Map(
      (
        await f.rows(
          `SELECT idempotency_key::text AS k, external_id, error, correlation_id, response_body::text AS json,
                  response_excerpt FROM results`,
        )
      ).map((r) => [r["k"], r]),
    );
    expect(byKey.get(a)).toMatchObject({ external_id: tricky, response_excerpt: null });
    expect(JSON.parse(String(byKey.get(a)?.["json"]))).toEqual({ note: tricky, n: [1, 2] });
    expect(byKey.get(b)).toMatchObject({
      external_id: "INV-\uFFFD-\uFFFD-x",
      error: "bad\uFFFDbyte",
      json: null,
      response_excerpt: 'not json: "<html>',
    });
    expect(byKey.get(c)).toMatchObject({
      correlation_id: "\uFFFDcid",
      json: null,
      response_excerpt: '{"a":"\\u0000"}',
    });
    expect(await f.rows("SELECT network_error, correlation_id FROM attempts")).toEqual([
      { network_error: 'reset \uFFFD "peer"', correlation_id: tricky },
    ]);
  });

  it("when an older record event is exported after a newer one, then the newer one stays", async () => {
    const f = await fixture();
    const k = key();
    await f.add(record(k, { status: "retrying", http: 503, body: null }));
    await f.add(record(k, { status: "succeeded" }));
    const slow = f.exporter("slow");
    await slow.ensureGroup();
    // the slow exporter holds the older event; another exports the newer one first
    await redis.xreadgroup("GROUP", EXPORT_GROUP, "slow", "COUNT", 1, "STREAMS", f.outbox, ">");
    await f.drain(f.exporter("fast"));
    expect(await f.rows("SELECT status FROM results")).toEqual([{ status: "succeeded" }]);
    await f.drain(slow);
    expect(await f.rows("SELECT status, http_status FROM results")).toEqual([
      { status: "succeeded", http_status: 201 },
    ]);
    expect(await redis.xlen(f.outbox)).toBe(0);
  });

  it("when stream ids differ in their number of digits, then they compare as (ms, seq) numbers, not as text", async () => {
    const f = await fixture();
    const k = key();
    await redis.xadd(
      f.outbox,
      "9-5",
      "e",
      JSON.stringify(record(k, { status: "retrying", http: 503, body: null })),
    );
    await redis.xadd(f.outbox, "10-9", "e", JSON.stringify(record(k, { status: "failed", cid: "ten-nine" })));
    await redis.xadd(
      f.outbox,
      "10-10",
      "e",
      JSON.stringify(record(k, { status: "succeeded", cid: "ten-ten" })),
    );
    await redis.xadd(f.outbox, "10-11", "e", "not json");
    const slow = f.exporter("slow");
    await slow.ensureGroup();
    await redis.xreadgroup("GROUP", EXPORT_GROUP, "slow", "COUNT", 1, "STREAMS", f.outbox, ">");
    const fast = f.exporter("fast", 30_000);
    await redis.xreadgroup("GROUP", EXPORT_GROUP, "fast", "COUNT", 1, "STREAMS", f.outbox, ">");
    await f.drain(f.exporter("third"));
    await f.drain(fast);
    await f.drain(slow);
    // as text, "9-5" and "10-9" would both sort after "10-10"
    expect(await f.rows("SELECT status, correlation_id, event_id FROM results")).toEqual([
      { status: "succeeded", correlation_id: "ten-ten", event_id: "10-10" },
    ]);
    expect(await redis.xlen(f.outbox)).toBe(0);
  });

  it("when the lines of a batch come before the batch's own event, then a placeholder takes them and the event fills it in", async () => {
    const f = await fixture();
    const k = key();
    await f.add({ t: "rows", report: "1-0", batch: "b2", rows: [[2, k, "new", "INV-1", null, null]] });
    await f.drain(f.exporter());
    expect(await f.rows("SELECT batch_id, event_id FROM batches")).toEqual([
      { batch_id: "b2", event_id: null },
    ]);
    await f.add(batch("b2", { file: "late.csv", format: "ndjson" }));
    await f.drain(f.exporter());
    expect(await f.rows("SELECT batch_id, file, format, state FROM batches")).toEqual([
      { batch_id: "b2", file: "late.csv", format: "ndjson", state: "reported" },
    ]);
    expect(await f.rows("SELECT line, decision FROM batch_rows")).toEqual([{ line: 2, decision: "new" }]);
  });

  it("when a batch is replaced by the batch its file was taken again as, then batches.replaced_by names it, and an event from before replacements leaves it null", async () => {
    const f = await fixture();
    await f.add(Object.fromEntries(Object.entries(batch("b4")).filter(([name]) => name !== "replaced_by")));
    await f.add(batch("b3"));
    await f.add(batch("b3", { replaced_by: "20261125T010000Z-abcdef" }));
    await f.drain(f.exporter());
    expect(await f.rows("SELECT batch_id, replaced_by FROM batches ORDER BY batch_id")).toEqual([
      { batch_id: "b3", replaced_by: "20261125T010000Z-abcdef" },
      { batch_id: "b4", replaced_by: null },
    ]);
  });

  it("when a record event carries the invoice's trace id, then results.trace_id holds it; one without leaves it null, and a later one with it fills it in", async () => {
    const f = await fixture();
    const [traced, untraced] = [key(), key()];
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    await f.add(record(untraced));
    await f.add(record(traced, { status: "retrying", attempts: 1 }));
    await f.add(record(traced, { tr: traceId }));
    await f.drain(f.exporter());
    expect(await f.rows("SELECT idempotency_key::text AS k, trace_id FROM results")).toEqual(
      expect.arrayContaining([
        { k: traced, trace_id: traceId },
        { k: untraced, trace_id: null },
      ]),
    );
    await expect(
      f.pool.query("UPDATE results SET trace_id = 'not-a-trace-id' WHERE idempotency_key = $1", [traced]),
    ).rejects.toThrow(/check constraint/);
  });

  it("when a consumer died with entries read and not acknowledged, then another takes them over once they are idle", async () => {
    const f = await fixture();
    const keys = [key(), key(), key()];
    for (const k of keys) await f.add(record(k));
    const dead = f.exporter("dead");
    await dead.ensureGroup();
    // it read them and died before writing: they are pending for it
    await redis.xreadgroup("GROUP", EXPORT_GROUP, "dead", "COUNT", 10, "STREAMS", f.outbox, ">");
    const pending = await redis.xpending(f.outbox, EXPORT_GROUP);
    expect(pending[0]).toBe(3);

    const other = f.exporter("other", 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await f.drain(other);
    expect(
      (await f.rows("SELECT idempotency_key::text AS k FROM results ORDER BY 1")).map((r) => r["k"]),
    ).toEqual([...keys].sort());
    expect((await redis.xpending(f.outbox, EXPORT_GROUP))[0]).toBe(0);
    expect(await redis.xlen(f.outbox)).toBe(0);
  });

  it("when PostgreSQL refuses the write, then nothing is acknowledged, and the next round writes the same entries", async () => {
    const f = await fixture();
    const k = key();
    await f.add(record(k));
    const e = f.exporter();
    await e.ensureGroup();
    await f.rows("ALTER TABLE results RENAME TO results_away");
    await expect(e.exportOnce()).rejects.toThrow(/results/);
    expect(await redis.xlen(f.outbox)).toBe(1);
    await f.rows("ALTER TABLE results_away RENAME TO results");
    await f.drain(e);
    expect(await f.rows("SELECT idempotency_key::text AS k FROM results")).toEqual([{ k }]);
    expect(await redis.xlen(f.outbox)).toBe(0);
  });

  it("when the database refuses one event of a read, then the others are written and that one is kept aside with its reason", async () => {
    const f = await fixture();
    const k = key();
    await f.add(attempt(k, 1, 503));
    // a duration the integer column cannot hold: refused as data, never to succeed on retry
    await f.add({ ...attempt(k, 2, 201), ms: 3_000_000_000 });
    await f.add(record(k));
    const e = f.exporter();
    await f.drain(e);
    expect(await f.rows("SELECT attempt FROM attempts")).toEqual([{ attempt: 1 }]);
    expect(await f.rows("SELECT status FROM results")).toEqual([{ status: "succeeded" }]);
    expect(e.stats).toEqual({ exported: 2, refused: 1 });
    expect(await redis.xlen(f.outbox)).toBe(0);
    const kept = await redis.xrange(f.outbox.replace(/:outbox$/, ":outbox-refused"), "-", "+");
    expect(kept).toHaveLength(1);
    const fields = Object.fromEntries(
      (kept[0]?.[1] ?? []).flatMap((v, i, all) => (i % 2 === 0 ? [[v, all[i + 1]]] : [])),
    ) as Record<string, string>;
    expect(JSON.parse(fields["e"] ?? "{}")).toMatchObject({ t: "attempt", key: k, n: 2, ms: 3_000_000_000 });
    expect(fields["problem"]).toMatch(/out of range|integer/i);
    expect(fields["id"]).toMatch(/^\d+-\d+$/);
  });

  it("when an exporter dies after writing a read, between acknowledging and deleting it, then no entry is left acknowledged in the outbox for ever", async () => {
    const f = await fixture();
    for (const k of [key(), key()]) await f.add(record(k));
    // the connection dies at the first command that removes entries, as a SIGKILL would cut it
    const dying = new Proxy(redis, {
      get(target, name, receiver) {
        if (name === "xdel") return () => Promise.reject(new Error("killed"));
        const value: unknown = Reflect.get(target, name, receiver);
        if (typeof value !== "function") return value;
        const method = value as (...args: unknown[]) => unknown;
        return method.bind(target);
      },
    });
    const doomed = new OutboxExporter({
      redis: dying,
      prefix: f.prefix,
      pool: f.pool,
      url: f.url,
      logger: silentLogger(),
      consumer: "doomed",
      claimIdleMs: 1,
      blockMs: 10,
    });
    await doomed.ensureGroup();
    await doomed.exportOnce().catch(() => undefined);
    // what is left is still pending (another exporter takes it over) or gone: never acknowledged and kept
    const left = (await redis.xlen(f.outbox)) - Number((await redis.xpending(f.outbox, EXPORT_GROUP))[0]);
    expect(left).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await f.drain(f.exporter("next", 1));
    expect(await redis.xlen(f.outbox)).toBe(0);
    expect(await f.rows("SELECT count(*)::int AS n FROM results")).toEqual([{ n: 2 }]);
  });
  it("when entries were acknowledged but never deleted (an exporter killed between the two before they were one step), then the next exporter removes them at start and the outbox drains", async () => {
    const f = await fixture();
    const first = key();
    await f.add(record(first));
    await f.exporter().ensureGroup();
    // what such an exporter did: read and acknowledged, then died before XDEL
    const read = z
      .array(z.tuple([z.string(), z.array(z.tuple([z.string(), z.unknown()]))]))
      .parse(await redis.xreadgroup("GROUP", EXPORT_GROUP, "old", "COUNT", "10", "STREAMS", f.outbox, ">"));
    const ids = read.flatMap(([, entries]) => entries.map(([id]) => id));
    expect(ids).toHaveLength(1);
    await redis.xack(f.outbox, EXPORT_GROUP, ...ids);
    // one more event, read by a consumer that died holding it: it stays pending, to be taken over
    await f.add(record(key()));
    await redis.xreadgroup("GROUP", EXPORT_GROUP, "dead", "COUNT", "10", "STREAMS", f.outbox, ">");
    expect(await redis.xlen(f.outbox)).toBe(2);

    await f.exporter("next").ensureGroup();
    expect(await redis.xlen(f.outbox)).toBe(1);
    expect(Number((await redis.xpending(f.outbox, EXPORT_GROUP))[0])).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await f.drain(f.exporter("next", 1));
    expect(await redis.xlen(f.outbox)).toBe(0);
  });
});
