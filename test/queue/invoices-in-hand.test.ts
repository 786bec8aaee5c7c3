import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createRedis } from "../../src/queue/connection.js";
import { enqueueBatch, testConfig } from "../support/engine.js";
import { testInvoices } from "../support/invoices.js";
import { submissionFixture } from "../support/submission-fixture.js";

const API_KEY = "irs_live_test_key_0123456789";
const { cleanups, simulator, worker } = submissionFixture(API_KEY);

describe("invoices a worker takes", () => {
  it("when the learned rate is 10/s and 400 invoices wait, then a worker holds what that rate needs in hand, not the flow-control window's 2 × SUBMIT_CONCURRENCY", async () => {
    const sim = await simulator();
    const config = testConfig({
      apiUrl: sim.url,
      apiKey: API_KEY,
      env: { SUBMIT_RATE_START: "10", SUBMIT_RATE_PER_SEC: "10", SUBMIT_CONCURRENCY: "128" },
    });
    await enqueueBatch(config, "b1", testInvoices(400, `in-hand-${randomUUID()}`));
    const redis = createRedis(config.redisUrl, "producer");
    cleanups.push(() => {
      redis.disconnect();
      return Promise.resolve();
    });
    const active = `${config.queuePrefix}:invoices:active`;

    let answered = 0;
    sim.events.on("attempt", () => answered++);
    await worker(config);
    // 10/s over K (1 s) before any invoice was handled, two invoices per request slot: 20 at most; with
    // every answer in well under a second, fewer after
    let most = 0;
    while (answered < 25) {
      most = Math.max(most, await redis.llen(active));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(20);
  });
});
