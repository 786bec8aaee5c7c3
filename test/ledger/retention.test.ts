import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { Retention } from "../../src/ledger/retention.js";
import { testPrefix, testRedis } from "../support/redis.js";

const DAY = 86_400_000;
const RETENTION = 7 * DAY;

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});

/** A ledger on its own prefix with a clock the test moves. */
function fixture() {
  const prefix = testPrefix();
  const clock = { now: 1_800_000_000_000 };
  const now = () => clock.now;
  const ledger = new RedisLedger(redis, prefix, now);
  const batches = new BatchStore(redis, prefix, now);
  const retention = new Retention(redis, prefix, batches, RETENTION, now);
  return { prefix, clock, ledger, batches, retention };
}

type Fixture = ReturnType<typeof fixture>;

const row = (line: number, externalId = `INV-${randomUUID()}`) => ({ line, key: randomUUID(), externalId });

/** Opens, registers and finishes a batch, answers each key as given, and writes its report. */
async function night(
  f: Fixture,
  id: string,
  rows: readonly ReturnType<typeof row>[],
  answer: (key: string) => "succeeded" | "failed" | "none" = () => "succeeded",
): Promise<void> {
  await f.batches.open({ id, file: `${id}.csv`, format: "csv", path: `/archive/${id}.csv`, host: "h" });
  await f.ledger.registerRows(id, rows);
  await f.ledger.finishIngest(id);
  let failed = 0;
  for (const r of rows) {
    const a = answer(r.key);
    if (a === "succeeded")
      await f.ledger.recordSucceeded(r.key, { httpStatus: 201, responseBody: '{"ok":true}' });
    if (a === "failed") {
      failed++;
      await f.ledger.recordFailed(r.key, { httpStatus: 422, error: "bad", document: "{}" });
    }
  }
  if (await f.batches.isComplete(id))
    await f.batches.markReported(id, {
      report_csv: `/reports/${id}.csv`,
      summary_json: `/reports/${id}.json`,
      counts: JSON.stringify({ succeeded: rows.length - failed, failed }),
      path: `/archive/${id}.csv`,
    });
}

/** Every Redis key of the prefix, by name. */
async function keysOf(prefix: string): Promise<string[]> {
  const names: string[] = [];
  let cursor = "0";
  do {
    const [next, page] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    names.push(...page);
  } while (cursor !== "0");
  return names.map((n) => n.slice(prefix.length + 1)).sort();
}

describe("retention", () => {
  it("when a reported batch's retention has passed, then its records, index entries, decisions and the batch itself are removed", async () => {
    const f = fixture();
    const first = row(2);
    const rows = [first, row(3), row(4)];
    await night(f, "b1", rows);
    // a duplicate row in a second file gives b2 a decision that goes with it
    await night(f, "b2", [{ ...first, line: 9 }]);
    f.clock.now += RETENTION - 1;
    expect(await f.retention.sweep()).toEqual({ batches: 0, records: 0, keptForFailed: 0 });
    expect((await f.ledger.getMany(rows.map((r) => r.key))).map((r) => r?.status)).toEqual(
      rows.map(() => "succeeded"),
    );

    f.clock.now += 2;
    expect(await f.retention.sweep()).toEqual({ batches: 2, records: 3, keptForFailed: 0 });
    expect(await f.ledger.getMany(rows.map((r) => r.key))).toEqual([undefined, undefined, undefined]);
    expect(await f.batches.get("b1")).toBeUndefined();
    // what stays is the deployment's: its counts by status and its totals since it began
    expect(await keysOf(f.prefix)).toEqual(["relay:counts", "relay:fleet-totals"]);
    expect(await f.ledger.counts()).toEqual({
      queued: 0,
      retrying: 0,
      succeeded: 0,
      failed: 0,
      superseded: 0,
    });
  });

  it("when the same file is dropped again after its retention, then its rows are new again under the same keys", async () => {
    const f = fixture();
    const rows = [row(2), row(3)];
    await night(f, "b1", rows);
    expect(await f.ledger.registerRows("b2", rows)).toEqual([{ kind: "duplicate" }, { kind: "duplicate" }]);
    await f.ledger.finishIngest("b2");
    await f.batches.markReported("b2", { report_csv: "r", summary_json: "s", counts: "{}", path: "p" });
    f.clock.now += RETENTION + 1;
    await f.retention.sweep();
    expect(await f.ledger.registerRows("b3", rows)).toEqual([{ kind: "new" }, { kind: "new" }]);
  });

  it("when a batch is not reported, or its report counted failed rows, then nothing of it is removed however old", async () => {
    const f = fixture();
    const waiting = [row(2)];
    const bad = row(2);
    const failing = [bad, row(3)];
    await night(f, "unanswered", waiting, () => "none");
    await night(f, "with-failed", failing, (key) => (key === bad.key ? "failed" : "succeeded"));
    f.clock.now += 10 * RETENTION;
    expect(await f.retention.sweep()).toEqual({ batches: 0, records: 0, keptForFailed: 1 });
    const kept = await f.ledger.getMany([...waiting, ...failing].map((r) => r.key));
    expect(kept.map((r) => r?.status)).toEqual(["queued", "failed", "succeeded"]);
    expect(await f.batches.get("unanswered")).toMatchObject({ pending: 1 });
    expect(await f.retention.oldest()).toMatchObject({
      id: "unanswered",
      expiresAt: undefined,
      why: "not reported",
    });
  });

  it("when a key is shared by a batch that expired and one that did not, then its record stays until both have expired", async () => {
    const f = fixture();
    const shared = row(2);
    await f.batches.open({ id: "b1", file: "a.csv", format: "csv", path: "/a", host: "h" });
    await f.ledger.registerRows("b1", [shared]);
    await f.ledger.finishIngest("b1");
    await f.batches.open({ id: "b2", file: "b.csv", format: "csv", path: "/b", host: "h" });
    expect(await f.ledger.registerRows("b2", [shared])).toEqual([{ kind: "join" }]);
    await f.ledger.finishIngest("b2");
    await f.ledger.recordSucceeded(shared.key, { httpStatus: 201 });
    await f.batches.markReported("b1", { report_csv: "r", summary_json: "s", counts: "{}", path: "p" });
    f.clock.now += 3 * DAY;
    await f.batches.markReported("b2", { report_csv: "r", summary_json: "s", counts: "{}", path: "p" });
    f.clock.now += RETENTION - 2 * DAY;
    expect(await f.retention.sweep()).toEqual({ batches: 1, records: 0, keptForFailed: 0 });
    expect(await f.ledger.statusOf(shared.key)).toBe("succeeded");
    f.clock.now += 3 * DAY;
    expect(await f.retention.sweep()).toEqual({ batches: 1, records: 1, keptForFailed: 0 });
    expect(await f.ledger.statusOf(shared.key)).toBeUndefined();
  });

  it("when a failed key of an old batch is retried, then the batch is reopened and kept until its new report has aged", async () => {
    const f = fixture();
    const r = row(2);
    await night(f, "b1", [r], () => "failed");
    f.clock.now += 2 * RETENTION;
    expect(await f.ledger.requeueFailed(r.key)).toBe("requeued");
    expect(await f.batches.get("b1")).toMatchObject({ state: "ingested", pending: 1 });
    expect(await f.retention.sweep()).toMatchObject({ batches: 0 });
    await f.ledger.recordSucceeded(r.key, { httpStatus: 201 });
    await f.batches.markReported("b1", {
      report_csv: "r",
      summary_json: "s",
      counts: '{"succeeded":1}',
      path: "p",
    });
    expect(await f.retention.oldest()).toMatchObject({ id: "b1", expiresAt: f.clock.now + RETENTION });
    f.clock.now += RETENTION;
    expect(await f.retention.sweep()).toEqual({ batches: 1, records: 1, keptForFailed: 0 });
  });
});
