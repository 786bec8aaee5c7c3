import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisLedger, unpackKeys } from "../../src/ledger/redis-ledger.js";
import { testPrefix, testRedis } from "../support/redis.js";

/*
 * register.lua reads a chunk's records and index entries in one call each and writes them at its end:
 * each row must still be decided on what the rows before it in the chunk wrote.
 */

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});

const row = (line: number, key: string, externalId: string) => ({ line, key, externalId });

describe("registering a chunk of rows", () => {
  it("when one chunk holds a corrected version, the failed one again and the corrected one again, then each row sees the rows before it", async () => {
    const s = new RedisLedger(redis, testPrefix());
    const [failedKey, correctedKey] = [randomUUID(), randomUUID()];
    await s.registerRows("b1", [row(2, failedKey, "INV-C")]);
    await s.finishIngest("b1");
    await s.recordFailed(failedKey, { httpStatus: 422, error: "bad" });

    const decisions = await s.registerRows("b2", [
      row(2, correctedKey, "INV-C"),
      row(3, failedKey, "INV-C"),
      row(4, correctedKey, "INV-C"),
    ]);

    expect(decisions).toEqual([
      { kind: "new" },
      { kind: "conflict", earlierKey: correctedKey },
      { kind: "join" },
    ]);
    expect(await s.get(failedKey)).toMatchObject({ status: "superseded", superseded_by: correctedKey });
    expect(await s.get(correctedKey)).toMatchObject({ status: "queued" });
    expect(await s.counts()).toEqual({ queued: 1, retrying: 0, succeeded: 0, failed: 0, superseded: 1 });
    expect(await redis.hget(s.names.externalIds, "INV-C")).toBe(correctedKey);
    expect(await redis.hget(s.names.pending, "b2")).toBe("1");
    expect(unpackKeys((await redis.getBuffer(s.names.batchKeyList("b2"))) ?? Buffer.alloc(0))).toEqual([
      correctedKey,
    ]);
  });

  it("when a chunk holds more rows than one call takes, then every row is registered once and the batch lists its keys in file order", async () => {
    const s = new RedisLedger(redis, testPrefix());
    const rows = Array.from({ length: 1500 }, (_, i) => row(i + 2, randomUUID(), `INV-${i}`));

    const decisions = await s.registerRows("b1", rows);

    expect(decisions.every((d) => d.kind === "new")).toBe(true);
    expect(decisions).toHaveLength(1500);
    expect(await s.counts()).toMatchObject({ queued: 1500 });
    expect(await redis.hlen(s.names.externalIds)).toBe(1500);
    expect(unpackKeys((await redis.getBuffer(s.names.batchKeyList("b1"))) ?? Buffer.alloc(0))).toEqual(
      rows.map((r) => r.key),
    );
    expect((await s.getMany(rows.map((r) => r.key))).every((r) => r?.status === "queued")).toBe(true);
  });
});
