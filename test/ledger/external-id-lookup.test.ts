import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { testPrefix, testRedis } from "../support/redis.js";

const redis = testRedis();
afterAll(async () => {
  await redis.quit();
});

describe("ledger, looking up an external_id", () => {
  it("when a row is registered, then its external_id leads to its key, and an unknown one to nothing", async () => {
    const s = new RedisLedger(redis, testPrefix());
    const key = randomUUID();
    await s.registerRows("b1", [{ line: 2, key, externalId: "INV-<1>" }]);
    expect(await s.keyOfExternalId("INV-<1>")).toBe(key);
    expect(await s.keyOfExternalId("INV-2")).toBeUndefined();
  });

  it("when a newer version of the external_id is registered after the first failed, then the lookup gives the newer key", async () => {
    const s = new RedisLedger(redis, testPrefix());
    const [first, second] = [randomUUID(), randomUUID()];
    await s.registerRows("b1", [{ line: 2, key: first, externalId: "INV-V" }]);
    await s.recordFailed(first, { httpStatus: 422, error: "bad" });
    await s.registerRows("b2", [{ line: 2, key: second, externalId: "INV-V" }]);
    expect(await s.keyOfExternalId("INV-V")).toBe(second);
  });
});
