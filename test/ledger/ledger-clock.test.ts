import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { LedgerNames } from "../../src/ledger/names.js";
import { outboxBacklog, redisTimeMs } from "../../src/ledger/outbox-backlog.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { Retention } from "../../src/ledger/retention.js";
import { StuckBatches } from "../../src/ledger/stuck-batches.js";
import { silentLogger } from "../../src/log/logger.js";
import type { Notice } from "../../src/ops/notify/notice.js";
import { Notifier } from "../../src/ops/notify/notifier.js";
import { startStuckWatch } from "../../src/ops/notify/stuck-watch.js";
import { testPrefix, testRedis } from "../support/redis.js";

// Each process of a deployment runs on its own machine's clock; the ledger's times must not. These tests
// give the process (this one) a clock hours off Redis's, as a machine without NTP would have, and check
// that retention and the stuck-batch alert go by Redis's clock all the same.
const HOUR = 3_600_000;
const SKEW = 5 * HOUR;

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** From now on, this process's clock reads `offsetMs` away from the real time. */
function skewProcessClock(offsetMs: number): void {
  const real = Date.now.bind(Date);
  vi.spyOn(Date, "now").mockImplementation(() => real() + offsetMs);
}

/** A batch of two keys, registered, answered and reported through the ledger's verbs on the default clock. */
async function reportBatch(prefix: string, id: string): Promise<string[]> {
  const ledger = new RedisLedger(redis, prefix);
  const batches = new BatchStore(redis, prefix);
  const rows = [2, 3].map((line) => ({ line, key: randomUUID(), externalId: `INV-${randomUUID()}` }));
  await batches.open({ id, file: `${id}.csv`, format: "csv", path: `/p/${id}.csv`, host: "h" });
  await ledger.registerRows(id, rows);
  await ledger.finishIngest(id);
  for (const r of rows) await ledger.recordSucceeded(r.key, { httpStatus: 201, responseBody: "{}" });
  await batches.markReported(id, {
    report_csv: "r",
    summary_json: "s",
    counts: '{"succeeded":2}',
    path: "p",
  });
  return rows.map((r) => r.key);
}

describe("the ledger's clock when a process's clock is hours off", () => {
  it("when the process that reports a batch runs hours behind Redis and the batch's events are not exported yet, then a sweep keeps it", async () => {
    const prefix = testPrefix();
    await redis.set(new LedgerNames(prefix).outboxOn, "1");
    skewProcessClock(-SKEW);
    const keys = await reportBatch(prefix, "behind");
    vi.restoreAllMocks();
    expect((await outboxBacklog(redis, prefix)).entries).toBeGreaterThan(0);

    const retention = new Retention(redis, prefix, new BatchStore(redis, prefix), HOUR);
    expect(await retention.sweep()).toMatchObject({ batches: 0, records: 0 });
    const records = await new RedisLedger(redis, prefix).getMany(keys);
    expect(records.map((r) => r?.status)).toEqual(["succeeded", "succeeded"]);
    expect(await new BatchStore(redis, prefix).get("behind")).toMatchObject({ state: "reported" });
  });

  it("when the process that sweeps runs hours ahead of Redis, then a batch reported just now is not swept", async () => {
    const prefix = testPrefix();
    const keys = await reportBatch(prefix, "fresh");
    skewProcessClock(SKEW);
    const retention = new Retention(redis, prefix, new BatchStore(redis, prefix), HOUR);
    expect(await retention.sweep()).toMatchObject({ batches: 0, records: 0 });
    const records = await new RedisLedger(redis, prefix).getMany(keys);
    expect(records.map((r) => r?.status)).toEqual(["succeeded", "succeeded"]);
  });

  it("when a batch is written by a process hours ahead, then its times are Redis's own", async () => {
    const prefix = testPrefix();
    skewProcessClock(SKEW);
    await reportBatch(prefix, "stamped");
    vi.restoreAllMocks();
    const now = await redisTimeMs(redis);
    const meta = await new BatchStore(redis, prefix).require("stamped");
    for (const at of [meta.created_at, meta.ingested_at, meta.completed_at, meta.reported_at]) {
      expect(at).toBeLessThanOrEqual(now);
      expect(at).toBeGreaterThan(now - HOUR);
    }
  });

  it("when the process watching for stuck batches runs hours ahead, or the one that dropped the batch hours behind, then no alert fires for a fresh batch", async () => {
    const prefix = testPrefix();
    skewProcessClock(-SKEW);
    const batches = new BatchStore(redis, prefix);
    await batches.open({ id: "dropped", file: "d.csv", format: "csv", path: "/p/d.csv", host: "h" });
    await new RedisLedger(redis, prefix).registerRows("dropped", [
      { line: 2, key: randomUUID(), externalId: `INV-${randomUUID()}` },
    ]);
    vi.restoreAllMocks();
    skewProcessClock(SKEW);
    const sent: Notice[] = [];
    const notifier = new Notifier({
      send: (notice) => {
        sent.push(notice);
        return Promise.resolve();
      },
    });
    const watch = startStuckWatch({
      stuck: new StuckBatches(redis, prefix),
      batches: new BatchStore(redis, prefix),
      notifier,
      logger: silentLogger(),
      stuckAfterMs: HOUR,
      context: () => ({ queuePrefix: prefix, consoleUrl: undefined, now: new Date() }),
    });
    await watch.stop();
    expect(await watch.check()).toBe(0);
    expect(sent).toEqual([]);
  });
});
