import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { LedgerNames } from "../../src/ledger/names.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { Retention } from "../../src/ledger/retention.js";
import { testPrefix, testRedis } from "../support/redis.js";

const DAY = 86_400_000;
const RETENTION = 7 * DAY;
const REPORTED = 1_800_000_000_000;

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});

/** One batch of two succeeded keys, reported at REPORTED, on a prefix of its own. */
async function reportedBatch() {
  const prefix = testPrefix();
  const clock = { now: REPORTED };
  const now = () => clock.now;
  const ledger = new RedisLedger(redis, prefix, now);
  const batches = new BatchStore(redis, prefix, now);
  const retention = new Retention(redis, prefix, batches, RETENTION, now);
  const rows = [2, 3].map((line) => ({ line, key: randomUUID(), externalId: `INV-${randomUUID()}` }));
  await batches.open({ id: "b1", file: "b1.csv", format: "csv", path: "/a/b1.csv", host: "h" });
  await ledger.registerRows("b1", rows);
  await ledger.finishIngest("b1");
  for (const r of rows) await ledger.recordSucceeded(r.key, { httpStatus: 201, responseBody: "{}" });
  await batches.markReported("b1", {
    report_csv: "r",
    summary_json: "s",
    counts: '{"succeeded":2}',
    path: "p",
  });
  clock.now += RETENTION + 1;
  const names = new LedgerNames(prefix);
  // what the ledger wrote to the outbox meanwhile (if it was on) is replaced by the entries each test adds
  const outbox = async (...ids: string[]) => {
    await redis.del(names.outbox);
    for (const id of ids) await redis.xadd(names.outbox, id, "e", "{}");
  };
  return { names, retention, ledger, rows, outbox };
}

describe("retention with the outbox to PostgreSQL on", () => {
  it("when the outbox still holds an entry from before the batch's report, then the batch is kept; once it is exported, the batch goes", async () => {
    const f = await reportedBatch();
    await redis.set(f.names.outboxOn, "1");
    await f.outbox(`${REPORTED - 5}-0`, `${REPORTED + 5}-0`);
    expect(await f.retention.sweep()).toMatchObject({ batches: 0, records: 0 });
    expect((await f.ledger.getMany(f.rows.map((r) => r.key))).map((r) => r?.status)).toEqual([
      "succeeded",
      "succeeded",
    ]);

    // the report time itself: its events may be in that entry
    await f.outbox(`${REPORTED}-0`);
    expect(await f.retention.sweep()).toMatchObject({ batches: 0 });

    await f.outbox(`${REPORTED + 5}-0`);
    expect(await f.retention.sweep()).toMatchObject({ batches: 1, records: 2 });
  });

  it("when the outbox is on and empty, then the batch goes after its retention", async () => {
    const f = await reportedBatch();
    await redis.set(f.names.outboxOn, "1");
    await f.outbox();
    expect(await f.retention.sweep()).toMatchObject({ batches: 1, records: 2 });
  });

  it("when the outbox is off, then an old entry left in it does not hold anything back", async () => {
    const f = await reportedBatch();
    await redis.del(f.names.outboxOn);
    await f.outbox(`${REPORTED - 5}-0`);
    expect(await f.retention.sweep()).toMatchObject({ batches: 1, records: 2 });
  });
});
