import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { testPrefix, testRedis } from "../support/redis.js";

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});

function store(): RedisLedger {
  return new RedisLedger(redis, testPrefix());
}

/** Whether the batch waits for its report (every key final, ingest finished). */
async function isComplete(s: RedisLedger, batchId: string): Promise<boolean> {
  return (await redis.zscore(s.names.completed, batchId)) !== null;
}

const row = (line: number, key = randomUUID(), externalId = `INV-${line}`) => ({
  line,
  key,
  externalId,
});

describe("ledger", () => {
  it("when a batch registers new rows, then each is new, queued and the batch waits for all of them", async () => {
    const s = store();
    const rows = [row(2), row(3)];
    expect(await s.registerRows("b1", rows)).toEqual([{ kind: "new" }, { kind: "new" }]);
    await s.finishIngest("b1");
    expect(await s.statusOf(rows[0]?.key ?? "")).toBe("queued");
    expect(await isComplete(s, "b1")).toBe(false);
    await s.recordSucceeded(rows[0]?.key ?? "", { httpStatus: 201, correlationId: "c1" });
    expect(await isComplete(s, "b1")).toBe(false);
    await s.recordFailed(rows[1]?.key ?? "", { httpStatus: 422, error: "bad" });
    expect(await isComplete(s, "b1")).toBe(true);
    expect(await s.counts()).toEqual({ queued: 0, retrying: 0, succeeded: 1, failed: 1, superseded: 0 });
  });

  it("when ingest of a batch is re-run after a crash, then decisions repeat and nothing is counted twice", async () => {
    const s = store();
    const rows = [row(2), row(3)];
    await s.registerRows("b1", rows);
    expect(await s.registerRows("b1", rows)).toEqual([{ kind: "queued" }, { kind: "queued" }]);
    expect(await redis.hget(s.names.pending, "b1")).toBe("2");
    expect((await s.counts()).queued).toBe(2);
  });

  it("when a succeeded key is dropped again in a new batch, then it is a duplicate and the batch completes", async () => {
    const s = store();
    const r = row(2);
    await s.registerRows("b1", [r]);
    await s.recordSucceeded(r.key, { httpStatus: 201, correlationId: "c1" });
    expect(await s.registerRows("b2", [r])).toEqual([{ kind: "duplicate" }]);
    await s.finishIngest("b2");
    expect(await isComplete(s, "b2")).toBe(true);
  });

  it("when a key is still in flight and another batch has it, then that batch joins and completes with it", async () => {
    const s = store();
    const r = row(2);
    await s.registerRows("b1", [r]);
    await s.finishIngest("b1");
    expect(await s.registerRows("b2", [r])).toEqual([{ kind: "join" }]);
    await s.finishIngest("b2");
    await s.recordSucceeded(r.key, { httpStatus: 201 });
    expect((await redis.zrange(s.names.completed, 0, -1)).sort()).toEqual(["b1", "b2"]);
  });

  it("when the same external_id comes with other content while the first is live, then it is a conflict naming the first key", async () => {
    const s = store();
    const first = row(2, randomUUID(), "INV-X");
    const second = row(5, randomUUID(), "INV-X");
    await s.registerRows("b1", [first]);
    expect(await s.registerRows("b2", [second])).toEqual([{ kind: "conflict", earlierKey: first.key }]);
    await s.recordSucceeded(first.key, {});
    expect(await s.registerRows("b3", [second])).toEqual([{ kind: "conflict", earlierKey: first.key }]);
  });

  it("when the earlier version failed, then the corrected one is accepted as new", async () => {
    const s = store();
    const first = row(2, randomUUID(), "INV-Y");
    const corrected = row(2, randomUUID(), "INV-Y");
    await s.registerRows("b1", [first]);
    await s.recordFailed(first.key, { httpStatus: 422, error: "bad currency" });
    expect(await s.registerRows("b2", [corrected])).toEqual([{ kind: "new" }]);
  });

  it("when a corrected version is registered, then the failed one is superseded: final, never requeued, and its complete batch is reported again", async () => {
    const s = store();
    const first = row(2, randomUUID(), "INV-S");
    const corrected = row(5, randomUUID(), "INV-S");
    await s.registerRows("b1", [first]);
    await s.finishIngest("b1");
    await s.recordFailed(first.key, { httpStatus: 422, error: "bad" });
    await redis.zrem(s.names.completed, "b1"); // b1's report was written
    await s.registerRows("b2", [corrected]);
    expect(await s.get(first.key)).toMatchObject({ status: "superseded", superseded_by: corrected.key });
    expect(await s.failedKeys()).toEqual([]);
    expect(await s.counts()).toMatchObject({ queued: 1, failed: 0, superseded: 1 });
    expect(await isComplete(s, "b1")).toBe(true);
    expect(await s.requeueFailed(first.key)).toBe("not-failed");
    // a late answer of the outdated version does not turn it back into failed, nor retrying
    expect(await s.recordFailed(first.key, { httpStatus: 500, error: "late" })).toBe("already");
    expect(await s.recordRetrying(first.key, { error: "late" })).toBe("superseded");
  });

  it("when retry finds a failed key whose external_id has moved to another key, then it supersedes it instead of requeueing", async () => {
    const s = store();
    const first = row(2, randomUUID(), "INV-T");
    const corrected = row(3, randomUUID(), "INV-T");
    await s.registerRows("b1", [first]);
    await s.registerRows("b2", [corrected]); // a conflict while the first is queued
    await s.recordFailed(first.key, { httpStatus: 422, error: "bad" });
    // the state an earlier version of invoice-relay could leave: the index on the newer key, the old one failed
    await redis.hset(s.names.externalIds, "INV-T", corrected.key);
    await s.registerRows("b3", [{ ...corrected, line: 2 }]); // the newer key gets its record
    expect(await s.requeueFailed(first.key)).toBe("superseded");
    expect(await s.get(first.key)).toMatchObject({ status: "superseded", superseded_by: corrected.key });
  });

  it("when an answer arrives for a key with no record (Redis lost it), then no half record is created", async () => {
    const s = store();
    const key = randomUUID();
    expect(await s.recordSucceeded(key, { httpStatus: 201, correlationId: "c1" })).toBe("unknown");
    expect(await s.recordFailed(key, { httpStatus: 422, error: "bad" })).toBe("unknown");
    expect(await s.recordRetrying(key, { httpStatus: 503, error: "HTTP 503" })).toBe("unknown");
    expect(await s.get(key)).toBeUndefined();
    expect(await s.counts()).toEqual({ queued: 0, retrying: 0, succeeded: 0, failed: 0, superseded: 0 });
  });

  it("when a late failure arrives after success, then succeeded stays succeeded", async () => {
    const s = store();
    const r = row(2);
    await s.registerRows("b1", [r]);
    expect(await s.recordSucceeded(r.key, { httpStatus: 201, correlationId: "c1" })).toBe("ok");
    expect(await s.recordFailed(r.key, { httpStatus: 500, error: "late" })).toBe("already-succeeded");
    expect(await s.recordRetrying(r.key, { error: "late" })).toBe("succeeded");
    expect(await s.get(r.key)).toMatchObject({
      status: "succeeded",
      correlation_id: "c1",
      http_status: 201,
      attempts: 1,
    });
  });

  it("when a failed key is requeued, then its batches wait for it again and complete when it succeeds", async () => {
    const s = store();
    const r = row(2);
    await s.registerRows("b1", [r]);
    await s.finishIngest("b1");
    await s.recordFailed(r.key, { error: "gave up" });
    await redis.zrem(s.names.completed, "b1");
    expect(await s.failedKeys()).toEqual([r.key]);
    expect(await s.requeueFailed(r.key)).toBe("requeued");
    expect(await s.requeueFailed(r.key)).toBe("not-failed");
    expect(await s.failedKeys()).toEqual([]);
    expect(await redis.hget(s.names.pending, "b1")).toBe("1");
    await s.recordSucceeded(r.key, { httpStatus: 201 });
    expect(await isComplete(s, "b1")).toBe(true);
    expect(await s.get(r.key)).toMatchObject({ status: "succeeded", attempts: 2 });
  });

  it("when retries happen, then attempts and the last error are recorded", async () => {
    const s = store();
    const r = row(2);
    await s.registerRows("b1", [r]);
    await s.recordRetrying(r.key, { httpStatus: 503, error: "HTTP 503" });
    await s.recordRetrying(r.key, { httpStatus: 429, error: "HTTP 429" });
    expect(await s.get(r.key)).toMatchObject({
      status: "retrying",
      attempts: 2,
      http_status: 429,
      error: "HTTP 429",
    });
    expect((await s.counts()).retrying).toBe(1);
  });

  it("when a key fails, then its record keeps the document sent; registered and succeeded keys keep none", async () => {
    const s = store();
    const [ok, bad] = [row(2), row(3)];
    await s.registerRows("b1", [ok, bad]);
    expect((await s.get(bad.key))?.document).toBeUndefined();
    await s.recordSucceeded(ok.key, { httpStatus: 201 });
    await s.recordFailed(bad.key, { httpStatus: 422, error: "bad", document: '{"external_id":"INV-3"}' });
    expect((await s.get(ok.key))?.document).toBeUndefined();
    expect(await s.get(bad.key)).toMatchObject({ status: "failed", document: '{"external_id":"INV-3"}' });
  });

  it("when attempts are recorded, then they are counted and the first and last attempt times kept", async () => {
    let now = 1_000;
    const s = new RedisLedger(redis, testPrefix(), () => now);
    const r = row(2);
    await s.registerRows("b1", [r]);
    now = 2_000;
    await s.recordRetrying(r.key, { httpStatus: 503, error: "HTTP 503" });
    now = 3_000;
    await s.recordSucceeded(r.key, { httpStatus: 201 });
    expect(await s.get(r.key)).toMatchObject({
      attempts: 2,
      first_attempt_at: 2_000,
      last_attempt_at: 3_000,
    });
    const single = row(3);
    await s.registerRows("b1", [single]);
    await s.recordFailed(single.key, { httpStatus: 422, error: "bad" });
    expect(await s.get(single.key)).toMatchObject({
      attempts: 1,
      first_attempt_at: 3_000,
      last_attempt_at: 3_000,
    });
    expect(await s.failedKeys()).toEqual([single.key]);
  });
});

describe("ledger, answers recorded in the same turn", () => {
  it("when many keys are answered at once, then each gets its own transition and the counts and batch are exact", async () => {
    const s = store();
    const rows = Array.from({ length: 40 }, (_, i) => row(i + 2));
    await s.registerRows("b1", rows);
    await s.finishIngest("b1");
    const [late, ...rest] = rows;
    if (late === undefined) throw new Error("no rows");
    await s.recordSucceeded(late.key, { httpStatus: 201, correlationId: "first" });

    const answers = await Promise.all([
      s.recordFailed(late.key, { httpStatus: 500, error: "late" }),
      ...rest.map((r, i) =>
        i % 4 === 0
          ? s.recordFailed(r.key, { httpStatus: 422, error: `bad ${r.line}` })
          : s.recordSucceeded(r.key, { httpStatus: 201, correlationId: `c-${r.line}` }),
      ),
    ]);
    expect(answers[0]).toBe("already-succeeded");
    expect(answers.slice(1)).toEqual(rest.map(() => "ok"));
    const failed = rest.filter((_, i) => i % 4 === 0);
    expect(await s.counts()).toEqual({
      queued: 0,
      retrying: 0,
      succeeded: rows.length - failed.length,
      failed: failed.length,
      superseded: 0,
    });
    expect((await s.failedKeys()).sort()).toEqual(failed.map((r) => r.key).sort());
    expect(await redis.hget(s.names.pending, "b1")).toBe("0");
    expect(await isComplete(s, "b1")).toBe(true);
    const sample = rest[1];
    expect(await s.get(sample?.key ?? "")).toMatchObject({ status: "succeeded", correlation_id: "c-4" });
    expect(await s.get(late.key)).toMatchObject({
      status: "succeeded",
      correlation_id: "first",
      attempts: 1,
    });
  });

  it("when a retry and then a success of one key land in the same turn, then they apply in order", async () => {
    const s = store();
    const r = row(2);
    await s.registerRows("b1", [r]);
    await s.finishIngest("b1");
    const [retrying, succeeded] = await Promise.all([
      s.recordRetrying(r.key, { httpStatus: 503, error: "HTTP 503" }),
      s.recordSucceeded(r.key, { httpStatus: 201, correlationId: "c1" }),
    ]);
    expect([retrying, succeeded]).toEqual(["retrying", "ok"]);
    expect(await s.get(r.key)).toMatchObject({ status: "succeeded", attempts: 2 });
    expect((await s.get(r.key))?.error).toBeUndefined();
    expect(await s.counts()).toEqual({ queued: 0, retrying: 0, succeeded: 1, failed: 0, superseded: 0 });
    expect(await isComplete(s, "b1")).toBe(true);
  });

  it("when keys of two batches are answered at once, then each batch completes when its last key does", async () => {
    const s = store();
    const [a, b, shared] = [row(2), row(3), row(4)];
    await s.registerRows("b1", [a, shared]);
    await s.registerRows("b2", [b, shared]);
    await Promise.all([s.finishIngest("b1"), s.finishIngest("b2")]);
    await Promise.all([s.recordSucceeded(a.key, {}), s.recordSucceeded(shared.key, {})]);
    expect(await redis.zrange(s.names.completed, 0, -1)).toEqual(["b1"]);
    expect(await redis.hget(s.names.pending, "b2")).toBe("1");
    const statuses = await Promise.all([a, b, shared].map((x) => s.statusOf(x.key)));
    expect(statuses).toEqual(["succeeded", "queued", "succeeded"]);
    expect(await s.statusOf(randomUUID())).toBeUndefined();
  });
});
