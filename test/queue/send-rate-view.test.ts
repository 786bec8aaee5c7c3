import { afterAll, describe, expect, it } from "vitest";
import { startState } from "../../src/capacity/index.js";
import { LedgerNames } from "../../src/ledger/names.js";
import { SendBudget } from "../../src/ledger/send-budget.js";
import { readSendRate, REFUSED_LATELY_MS } from "../../src/queue/send-rate-view.js";
import { testPrefix, testRedis } from "../support/redis.js";

const redis = testRedis();
afterAll(() => {
  redis.disconnect();
});

const settings = { ceiling: 0, startRate: 10, retryAfterCapMs: 60_000 };

/**
 * A fleet whose stored rate says the service has refused everything for 70 s, the last refusal heard
 * `lastRefusalAgoMs` ago; the learned rate's view of it.
 */
async function refusingFor70s(lastRefusalAgoMs: number) {
  const prefix = testPrefix();
  const budget = new SendBudget(redis, prefix);
  await budget.call({ owed: 1, refused: 1 });
  const { now } = await budget.read();
  const state = { ...startState(settings, now, { accepted: 0, refused: 1 }, 1), refusingSince: now - 70_000 };
  await budget.call({ write: { from: "0", state: JSON.stringify(state), version: "1" } });
  await redis.hset(new LedgerNames(prefix).sendBudget, "refusedAt", now - lastRefusalAgoMs);
  return readSendRate(redis, prefix, settings);
}

describe("the learned rate's view: whether the service refuses for capacity now", () => {
  it("when the last refusal was heard just now, after 70 s of refusing everything, then it refuses for capacity since then", async () => {
    const view = await refusingFor70s(0);
    expect(view?.refusingForCapacity).toBe(true);
    expect(view?.refusingSince).toBeDefined();
  });

  it("when the last refusal was heard 40 s ago and nothing since, then it is not said to refuse now", async () => {
    expect(40_000).toBeGreaterThan(REFUSED_LATELY_MS);
    const view = await refusingFor70s(40_000);
    expect(view?.refusingForCapacity).toBe(false);
    expect(view?.refusingSince).toBeUndefined();
  });
});

describe("the learned rate's view: the pass's cuts and the answers since the last", () => {
  it("when the stored state counts cuts and the budget has answers since the last, then the view gives both", async () => {
    const prefix = testPrefix();
    const budget = new SendBudget(redis, prefix);
    await budget.call({ owed: 60, accepted: 50, refused: 10 });
    const { now } = await budget.read();
    const fleet = { accepted: 20, refused: 4 };
    const state = { ...startState(settings, now, fleet, 1), max: 40, cuts: 30, under: 7 };
    await budget.call({ write: { from: "0", state: JSON.stringify(state), version: "1" } });
    const view = await readSendRate(redis, prefix, settings);
    expect(view).toMatchObject({ cuts: 30, cutsUnder: 7, answeredSinceCut: 36, refusedSinceCut: 6 });
  });
});
