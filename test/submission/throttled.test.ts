import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { enqueueBatch, testConfig } from "../support/engine.js";
import { testInvoice } from "../support/invoices.js";
import { submissionFixture } from "../support/submission-fixture.js";

const API_KEY = "irs_live_test_key_0123456789";
const { simulator, worker, storeOf } = submissionFixture(API_KEY);

describe("a service that answers 429", () => {
  it("when it refuses an invoice for capacity more times than MAX_ATTEMPTS, then the invoice is never failed and succeeds once accepted", async () => {
    const sim = await simulator({ throttleRate: 1, retryAfterSeconds: 0 });
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY, env: { MAX_ATTEMPTS: "2" } });
    const inv = testInvoice(1, `throttled-often-${randomUUID()}`);
    const outcomes: string[] = [];
    let seen = 0;
    sim.events.on("attempt", () => {
      if (++seen === 4) sim.setFaults({ throttleRate: 0 });
    });
    await enqueueBatch(config, "b1", [inv]);
    const w = await worker(config, { onOutcome: (_key, outcome) => outcomes.push(outcome.kind) });
    await w.untilFinal(1);

    expect(sim.attempts(inv.key).map((a) => a.status)).toEqual([429, 429, 429, 429, 201]);
    expect(outcomes).not.toContain("failed");
    expect(await storeOf(config).get(inv.key)).toMatchObject({ status: "succeeded", attempts: 5 });
  });
});
