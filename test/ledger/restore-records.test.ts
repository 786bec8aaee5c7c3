import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BatchStore } from "../../src/ledger/batch-store.js";
import type { RestoredRecord } from "../../src/ledger/past-record.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { RedisRecordRestorer } from "../../src/ledger/restore-records.js";
import { testPrefix, testRedis } from "../support/redis.js";

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});

function fixture() {
  const prefix = testPrefix();
  const now = () => 1_800_000_000_000;
  const ledger = new RedisLedger(redis, prefix, now);
  const batches = new BatchStore(redis, prefix, now);
  const open = (id: string) =>
    batches.open({ id, file: `${id}.csv`, format: "csv", path: `/${id}`, host: "h" });
  const restorer = new RedisRecordRestorer(redis, prefix);
  return { ledger, restorer, batches, open, names: ledger.names };
}

const past = (line: number, externalId = `INV-${randomUUID()}`): RestoredRecord => ({
  key: randomUUID(),
  externalId,
  status: "succeeded",
  line,
  httpStatus: 201,
  correlationId: `cid-${line}`,
  rulesetVersion: "2026.1",
  attempts: 2,
  firstAttemptAt: 1_700_000_000_123,
  lastAttemptAt: 1_700_000_004_567,
  responseBody: '{"id":"x"}',
});

describe("restoring records of keys that succeeded beyond retention", () => {
  it("when records are restored for a batch, then each reads as the results of record had it, counted as succeeded, indexed by external_id and kept by the batch", async () => {
    const { ledger, restorer, batches, open, names } = fixture();
    await open("b1");
    const [a, b] = [past(2), past(3)];
    const plain: RestoredRecord = {
      key: randomUUID(),
      externalId: "INV-plain",
      status: "succeeded",
      line: 4,
      attempts: 1,
    };

    expect(await ledger.get(a.key)).toBeUndefined();
    expect(await restorer.restoreRecords("b1", [a, b, plain])).toBe(3);

    expect(await ledger.get(a.key)).toEqual({
      key: a.key,
      status: "succeeded",
      external_id: a.externalId,
      batch: "b1",
      line: 2,
      batches: ["b1"],
      attempts: 2,
      http_status: 201,
      correlation_id: "cid-2",
      ruleset_version: "2026.1",
      response_body: '{"id":"x"}',
      first_attempt_at: 1_700_000_000_123,
      last_attempt_at: 1_700_000_004_567,
    });
    expect(await ledger.get(plain.key)).toEqual({
      key: plain.key,
      status: "succeeded",
      external_id: "INV-plain",
      batch: "b1",
      line: 4,
      batches: ["b1"],
      attempts: 1,
    });
    expect(await ledger.counts()).toMatchObject({ succeeded: 3, queued: 0 });
    expect(await redis.hget(names.externalIds, a.externalId)).toBe(a.key);
    const kept: string[] = [];
    for await (const page of batches.keysOf("b1")) kept.push(...page);
    expect(kept).toEqual([a.key, b.key, plain.key]);
  });

  it("when the restored rows are registered, then they are duplicates with the original answer and nothing is queued", async () => {
    const { ledger, restorer, batches, open } = fixture();
    await open("b1");
    const a = past(2);
    await restorer.restoreRecords("b1", [a]);
    const fresh = { line: 3, key: randomUUID(), externalId: "INV-fresh" };
    const decisions = await ledger.registerRows("b1", [
      { line: 2, key: a.key, externalId: a.externalId },
      fresh,
    ]);
    expect(decisions).toEqual([{ kind: "duplicate" }, { kind: "new" }]);
    expect(await batches.decisions("b1", [2])).toEqual(["duplicate"]);
    expect(await ledger.counts()).toMatchObject({ succeeded: 1, queued: 1 });
    expect((await ledger.get(a.key))?.correlation_id).toBe("cid-2");
  });

  it("when a key already has a record, then restoring it writes nothing and counts nothing", async () => {
    const { ledger, restorer, open, names } = fixture();
    await open("b1");
    const row = { line: 2, key: randomUUID(), externalId: "INV-live" };
    await ledger.registerRows("b1", [row]);
    const before = await redis.get(names.record(row.key));

    const restored = { ...past(2, row.externalId), key: row.key };
    expect(await restorer.restoreRecords("b2", [restored])).toBe(0);

    expect(await redis.get(names.record(row.key))).toBe(before);
    expect(await ledger.counts()).toMatchObject({ queued: 1, succeeded: 0 });
    expect(await redis.get(names.batchKeyList("b2"))).toBeNull();
  });

  it("when another version of the external_id is in Redis, then the index keeps naming it", async () => {
    const { ledger, restorer, open, names } = fixture();
    await open("b1");
    const newer = { line: 2, key: randomUUID(), externalId: "INV-versions" };
    await ledger.registerRows("b1", [newer]);
    expect(await restorer.restoreRecords("b2", [past(5, newer.externalId)])).toBe(1);
    expect(await redis.hget(names.externalIds, newer.externalId)).toBe(newer.key);
  });

  it("when an earlier version that succeeded is restored for a changed row, then the row is a conflict naming it", async () => {
    const { ledger, restorer, batches, open } = fixture();
    await open("b1");
    const earlier = past(2, "INV-changed");
    const changed = { line: 2, key: randomUUID(), externalId: "INV-changed" };
    expect(await restorer.restoreRecords("b1", [earlier])).toBe(1);

    expect(await ledger.registerRows("b1", [changed])).toEqual([
      { kind: "conflict", earlierKey: earlier.key },
    ]);
    expect(await batches.decisions("b1", [2])).toEqual([`conflict:${earlier.key}`]);
    expect(await ledger.get(changed.key)).toBeUndefined();
    expect(await ledger.counts()).toMatchObject({ succeeded: 1, queued: 0 });
  });

  it("when an earlier version that failed is restored for a corrected row, then the row is new and the failed one superseded by it, never in the failed set", async () => {
    const { ledger, restorer, open, names } = fixture();
    await open("b1");
    const failed: RestoredRecord = { ...past(2, "INV-corrected"), status: "failed", error: "HTTP 422: bad" };
    const corrected = { line: 2, key: randomUUID(), externalId: "INV-corrected" };
    expect(await restorer.restoreRecords("b1", [failed])).toBe(1);
    expect(await ledger.counts()).toMatchObject({ failed: 1 });
    expect(await redis.sismember(names.failed, failed.key)).toBe(0);

    expect(await ledger.registerRows("b1", [corrected])).toEqual([{ kind: "new" }]);
    expect(await ledger.get(failed.key)).toMatchObject({
      status: "superseded",
      superseded_by: corrected.key,
      error: "HTTP 422: bad",
      correlation_id: "cid-2",
    });
    expect(await ledger.counts()).toMatchObject({ failed: 0, superseded: 1, queued: 1 });
    expect(await redis.hget(names.externalIds, "INV-corrected")).toBe(corrected.key);
  });
});
