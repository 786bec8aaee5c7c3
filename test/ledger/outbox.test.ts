import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BatchStore } from "../../src/ledger/batch-store.js";
import type { OutboxRow } from "../../src/ledger/outbox.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { readOutbox, readOutboxEntries } from "../support/outbox-events.js";
import { testPrefix, testRedis } from "../support/redis.js";

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});

const NOW = 1_800_000_000_000;
const row = (line: number, externalId = `INV-${randomUUID()}`) => ({ line, key: randomUUID(), externalId });
const attempt = (number: number, more: object = {}) => ({
  number,
  startedAt: NOW - 100,
  durationMs: 42,
  ...more,
});

function setup() {
  const prefix = testPrefix();
  const ledger = new RedisLedger(redis, prefix, () => NOW);
  const batches = new BatchStore(redis, prefix, () => NOW);
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
  return { prefix, ledger, batches, open };
}

/** Every path that writes events: register, answers, a refused attempt, retry, supersede, batches, rows. */
async function driveEverything(s: ReturnType<typeof setup>) {
  const { ledger, batches, open } = s;
  const [a, b, c] = [row(2), row(3), row(4)];
  await open("b1");
  await ledger.registerRows("b1", [a, b, c]);
  await ledger.finishIngest("b1");
  await batches.update("b1", { state: "ingested", rows: 3, valid_rows: 3 });
  await ledger.recordRetrying(a.key, {
    httpStatus: 503,
    error: "HTTP 503",
    attempt: attempt(1, { httpStatus: 503, correlationId: "c503", retryAfterMs: 1000 }),
  });
  await ledger.recordRefusedAttempt(a.key, attempt(2, { httpStatus: 401 }));
  await ledger.recordSucceeded(a.key, {
    httpStatus: 201,
    correlationId: "c1",
    rulesetVersion: "r1",
    responseBody: '{"ok":true}',
    attempt: attempt(2, { httpStatus: 201, correlationId: "c1" }),
  });
  await ledger.recordFailed(a.key, {
    httpStatus: 500,
    error: "late",
    attempt: attempt(3, { networkError: "timeout: x" }),
  });
  await ledger.recordFailed(b.key, {
    httpStatus: 422,
    error: "bad",
    responseBody: "no",
    document: "{}",
    attempt: attempt(1, { httpStatus: 422 }),
  });
  await ledger.recordFailed(c.key, {
    httpStatus: 422,
    error: "bad",
    document: "{}",
    attempt: attempt(1, { httpStatus: 422 }),
  });
  const rows: OutboxRow[] = Array.from({ length: 1001 }, (_, i) => [
    i + 2,
    null,
    "rejected",
    null,
    "x",
    null,
  ]);
  await batches.addReportRows("b1", rows);
  await batches.markReported("b1", {
    report_csv: "r.csv",
    summary_json: "s.json",
    counts: '{"succeeded":1,"failed":2}',
    path: "p",
  });
  expect(await ledger.requeueFailed(b.key)).toBe("requeued");
  await open("b2");
  const corrected = row(2, c.externalId);
  await ledger.registerRows("b2", [corrected]);
  await batches.markChanged("b2", "grew");
  return { a, b, c, corrected };
}

describe("ledger outbox", () => {
  it("when outbox-on is absent, then no step writes anything to the outbox", async () => {
    const s = setup();
    await driveEverything(s);
    expect(await s.ledger.outboxEnabled()).toBe(false);
    expect(await redis.exists(s.ledger.names.outbox)).toBe(0);
    expect(await s.ledger.get(randomUUID())).toBeUndefined();
  });

  it("when an answer is recorded with the invoice's trace id, then the record keeps it and its record events carry it; without one, neither has it", async () => {
    const s = setup();
    await s.ledger.enableOutbox();
    const [traced, untraced] = [row(2), row(3)];
    await s.open("bt");
    await s.ledger.registerRows("bt", [traced, untraced]);
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    await s.ledger.recordRetrying(traced.key, {
      attempt: attempt(1),
      httpStatus: 503,
      error: "busy",
      traceId,
    });
    await s.ledger.recordSucceeded(traced.key, { attempt: attempt(2), httpStatus: 201, traceId });
    await s.ledger.recordSucceeded(untraced.key, { attempt: attempt(1), httpStatus: 201 });

    expect((await s.ledger.get(traced.key))?.trace_id).toBe(traceId);
    expect((await s.ledger.get(untraced.key))?.trace_id).toBeUndefined();
    const answers = (await readOutbox(redis, s.prefix)).filter((e) => e.t === "record" && e.attempts > 0);
    expect(answers.map((e) => (e.t === "record" ? [e.key, e.status, e.tr] : []))).toEqual([
      [traced.key, "retrying", traceId],
      [traced.key, "succeeded", traceId],
      [untraced.key, "succeeded", undefined],
    ]);
  });

  it("when outbox-on is set, then each step writes its record, attempt, batch and rows events in the contract's format", async () => {
    const s = setup();
    await s.ledger.enableOutbox();
    expect(await s.ledger.outboxEnabled()).toBe(true);
    const { a, b, c, corrected } = await driveEverything(s);
    const events = await readOutbox(redis, s.prefix);
    const summary = events.map((e) =>
      e.t === "record"
        ? ["record", e.key, e.status]
        : e.t === "attempt"
          ? ["attempt", e.key, e.n]
          : e.t === "batch"
            ? ["batch", e.batch, e.state]
            : ["rows", e.batch, e.rows.length],
    );
    expect(summary).toEqual([
      ["batch", "b1", "ingesting"], // new keys write no event: a record reaches PostgreSQL with its first answer
      ["batch", "b1", "ingested"],
      ["attempt", a.key, 1],
      ["record", a.key, "retrying"],
      ["attempt", a.key, 2], // refused: numbered by the ledger after the first
      ["attempt", a.key, 3],
      ["record", a.key, "succeeded"],
      ["attempt", a.key, 4], // a late answer after the success: an attempt, no record change
      ["attempt", b.key, 1],
      ["record", b.key, "failed"],
      ["attempt", c.key, 1],
      ["record", c.key, "failed"],
      ["rows", "b1", 1000],
      ["rows", "b1", 1],
      ["batch", "b1", "reported"],
      ["record", b.key, "queued"],
      ["batch", "b2", "ingesting"],
      ["record", c.key, "superseded"],
      ["batch", "b2", "changed"],
    ]);
    // An answer's attempt and record travel in one entry; every other step's events in entries of their own.
    expect((await readOutboxEntries(redis, s.prefix)).map((entry) => entry.map((e) => e.t))).toEqual([
      ["batch"],
      ["batch"],
      ["attempt", "record"],
      ["attempt"],
      ["attempt", "record"],
      ["attempt"],
      ["attempt", "record"],
      ["attempt", "record"],
      ["rows"],
      ["rows"],
      ["batch"],
      ["record"],
      ["batch"],
      ["record"],
      ["batch"],
    ]);
    expect(events[2]).toEqual({
      t: "attempt",
      key: a.key,
      n: 1,
      at: NOW - 100,
      ms: 42,
      http: 503,
      net: null,
      cid: "c503",
      ra: 1000,
    });
    expect(events[7]).toMatchObject({ t: "attempt", n: 4, http: null, net: "timeout: x" });
    expect(events[6]).toEqual({
      t: "record",
      key: a.key,
      eid: a.externalId,
      status: "succeeded",
      http: 201,
      cid: "c1",
      ruleset: "r1",
      attempts: 2,
      first: NOW,
      last: NOW,
      error: null,
      by: null,
      body: '{"ok":true}',
    });
    expect(events[3]).toMatchObject({ t: "record", status: "retrying", body: null, error: "HTTP 503" });
    expect(events[9]).toMatchObject({ t: "record", status: "failed", body: "no", error: "bad" });
    expect(events[15]).toMatchObject({ t: "record", status: "queued", body: null, error: null });
    expect(events[17]).toMatchObject({ t: "record", status: "superseded", by: corrected.key });
    expect(events[14]).toEqual({
      t: "batch",
      batch: "b1",
      file: "b1.csv",
      format: "csv",
      state: "reported",
      created: NOW,
      size: 10,
      sha256: "a".repeat(64),
      rows: 3,
      valid: 3,
      counts: { succeeded: 1, failed: 2 },
      report_csv: "r.csv",
      summary_json: "s.json",
      profile: null,
      file_error: null,
      reported: NOW,
      replaced_by: null,
    });
    expect(events[18]).toMatchObject({ t: "batch", state: "changed", file_error: "grew", counts: null });
    const firstRows = events[12];
    expect(firstRows?.t === "rows" ? firstRows.rows[0] : undefined).toEqual([
      2,
      null,
      "rejected",
      null,
      "x",
      null,
    ]);
    // the record itself is what the exporter is told, and keeps the last attempt number handed out
    expect(await s.ledger.get(a.key)).toMatchObject({ status: "succeeded", attempts: 2 });
  });

  it("when a report's rows are added in several calls, then every event carries the report's generation, a stream id after every event before it, and the next report of the batch takes a later one", async () => {
    const s = setup();
    expect(await s.batches.addReportRows("b1", [[2, null, "rejected", null, "x", null]])).toBe("");
    await s.ledger.enableOutbox();
    const before = String(await redis.xadd(s.ledger.names.outbox, "*", "e", "{}"));
    const rows = (from: number, n: number): OutboxRow[] =>
      Array.from({ length: n }, (_, i) => [from + i, null, "rejected", null, "x", null]);
    const first = await s.batches.addReportRows("b1", rows(2, 1000));
    expect(await s.batches.addReportRows("b1", rows(1002, 1001), first)).toBe(first);
    const second = await s.batches.addReportRows("b1", []);
    await redis.xdel(s.ledger.names.outbox, before);
    const events = await readOutbox(redis, s.prefix);
    expect(events.map((e) => (e.t === "rows" ? [e.report, e.rows.length] : e.t))).toEqual([
      [first, 1000],
      [first, 1000],
      [first, 1],
      [second, 0], // a report without rows still says which generation the batch's rows are now
    ]);
    const order = (id: string) => id.split("-").map(BigInt);
    const after = (a: string, b: string) => {
      const [[am = 0n, as = 0n], [bm = 0n, bs = 0n]] = [order(a), order(b)];
      return am > bm || (am === bm && as > bs);
    };
    expect(after(first, before) && after(second, first)).toBe(true);
    const [firstEntry] = await redis.xrange(s.ledger.names.outbox, "-", "+", "COUNT", 1);
    expect(after(firstEntry?.[0] ?? "0-0", first)).toBe(true);
  });
});
