import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryBudget, type StoredState } from "../../src/dev/fleet-model/memory-budget.js";
import { VirtualTime } from "../../src/dev/fleet-model/virtual-time.js";
import { luaSource } from "../../src/ledger/lua-script.js";
import { LedgerNames } from "../../src/ledger/names.js";
import { LATELY_MS, SendBudget, type BudgetCall, type BudgetReply } from "../../src/ledger/send-budget.js";
import { testPrefix, testRedis } from "../support/redis.js";

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});

describe("the fleet's send budget (send-budget.lua)", () => {
  it("when requests are booked, then they are spaced at the interval, none beyond the time ahead, and the hold delays them all", async () => {
    const budget = new SendBudget(redis, testPrefix());
    const first = await budget.call({ wanted: 10, intervalMs: 10, aheadMs: 25 });
    expect(first).toMatchObject({ booked: 3, waitMs: 0, seen: 0 });
    const next = await budget.call({ wanted: 10, intervalMs: 10, aheadMs: 25 });
    expect(next.booked).toBeLessThanOrEqual(3);
    expect(next.seen).toBe(first.now);
    const held = await budget.call({ holdMs: 5000 });
    expect(held.hold).toBe(held.now + 5000);
    const waiting = await budget.call({ wanted: 1, intervalMs: 10, aheadMs: 25 });
    expect(waiting.booked).toBe(0);
    expect(waiting.waitMs).toBeGreaterThan(4900);
  });

  it("when requests already sent are charged, then they take the schedule's last while, so a fleet under its rate keeps room, and one past it does not", async () => {
    const budget = new SendBudget(redis, testPrefix());
    await budget.call({ owed: 5, spanMs: 100, intervalMs: 10 });
    expect((await budget.call({ wanted: 1, intervalMs: 10, aheadMs: 0 })).booked).toBe(1);
    await budget.call({ owed: 50, spanMs: 100, intervalMs: 10 });
    const full = await budget.call({ wanted: 1, intervalMs: 10, aheadMs: 0 });
    expect(full.booked).toBe(0);
    expect(full.waitMs).toBeGreaterThan(300);
  });

  it("when a state is written, then only over the version it was computed from (compare-and-set)", async () => {
    const budget = new SendBudget(redis, testPrefix());
    expect(await budget.read()).toMatchObject({ v: "0", state: "" });
    expect((await budget.call({ write: { from: "0", state: "a", version: "1" } })).state).toBe("a");
    expect((await budget.call({ write: { from: "0", state: "b", version: "2" } })).state).toBe("a");
    expect(await budget.call({ write: { from: "1", state: "c", version: "2" } })).toMatchObject({
      v: "2",
      state: "c",
    });
  });

  it("when answers are counted, then the rates lately and the counts in all say them, and a read counts nothing", async () => {
    const budget = new SendBudget(redis, testPrefix());
    await budget.call({ accepted: 30, refused: 3 });
    const reply = await budget.read();
    expect(reply).toMatchObject({ accepted: 30, refused: 3 });
    // within the last quarter or the one before: at most all of them in LATELY_MS
    expect(reply.acceptedPerSec).toBeLessThanOrEqual((30 * 1000) / LATELY_MS);
    expect(reply.acceptedPerSec).toBeGreaterThan(0);
    const empty = testPrefix();
    await new SendBudget(redis, empty).read();
    expect(await redis.exists(new LedgerNames(empty).sendBudget)).toBe(0);
  });

  it("when the script and the fleet model's budget are given the same calls, then they reply alike", async () => {
    const budget = new SendBudget(redis, testPrefix());
    const start = (await budget.read()).now;
    const time = new VirtualTime(start);
    const model = memoryBudget(time, 0, undefined, { v: "0", state: "" } satisfies StoredState);
    const calls: BudgetCall[] = [
      { wanted: 3, intervalMs: 10, aheadMs: 25 },
      { accepted: 4, refused: 1, write: { from: "0", state: "s", version: "1" } },
      { wanted: 5, intervalMs: 10, aheadMs: 25, owed: 2, spanMs: 10 },
      { holdMs: 50, capped: true },
    ];
    const shape = (r: BudgetReply) => ({
      booked: r.booked,
      v: r.v,
      state: r.state,
      accepted: r.accepted,
      refused: r.refused,
    });
    for (const call of calls) {
      const real = await budget.call(call);
      time.now = real.now;
      const modelled = await new Promise<BudgetReply>((resolve) => {
        void model.call(call).then(resolve);
        void time.run(() => false, 1);
      });
      expect(shape(modelled)).toEqual(shape(real));
      expect(modelled.hold > 0).toBe(real.hold > 0);
    }
  });

  it("when the script's window for the rates lately changes, then LATELY_MS says the same", () => {
    expect(luaSource("send-budget")).toContain(`local QUARTER_MS = ${LATELY_MS}`);
  });
});
