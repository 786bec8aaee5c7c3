import { randomUUID } from "node:crypto";
import { Queue } from "bullmq";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { invoiceJson } from "../../src/invoice/key.js";
import { createRedis } from "../../src/queue/connection.js";
import { INVOICE_QUEUE } from "../../src/queue/invoice-queue.js";
import { enqueueBatch, startTestWorker, testConfig } from "../support/engine.js";
import { testInvoice, testInvoices } from "../support/invoices.js";
import { submissionFixture } from "../support/submission-fixture.js";

const API_KEY = "irs_live_test_key_0123456789";
const { cleanups, simulator, worker, storeOf } = submissionFixture(API_KEY);

describe("submitting invoices through the queue", () => {
  it("when 1,000 invoices are submitted without faults, then all succeed with correlation IDs and one effect per key", async () => {
    const sim = await simulator();
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY });
    const invoices = testInvoices(1000, "bulk");
    await enqueueBatch(config, "b1", invoices);
    const w = await worker(config);
    await w.untilFinal(1000);

    const records = await storeOf(config).getMany(invoices.map((i) => i.key));
    const byKey = invoices.map((inv, i) => ({ key: inv.key, record: records[i] }));
    expect(byKey.filter(({ record: r }) => !(r?.status === "succeeded" && r.http_status === 201))).toEqual(
      [],
    );
    expect(
      byKey.filter(({ record: r }) => (r?.correlation_id ?? "") === "" || (r?.ruleset_version ?? "") === ""),
    ).toEqual([]);
    const stats = sim.stats();
    expect(stats.effects.total).toBe(1000);
    expect(stats.effects.distinctKeys).toBe(1000);
    expect(stats.effects.keysWithMultipleEffects).toBe(0);
  });

  it("when the service answers 503 twice, then the invoice is sent a third time with the same key and identical body", async () => {
    const sim = await simulator({ errorRate: 1 });
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY });
    const inv = testInvoice(1, `five-oh-three-${randomUUID()}`);
    let seen = 0;
    sim.events.on("attempt", () => {
      if (++seen === 2) sim.setFaults({ errorRate: 0 });
    });
    await enqueueBatch(config, "b1", [inv]);
    const w = await worker(config);
    await w.untilFinal(1);

    const attempts = sim.attempts(inv.key);
    expect(attempts.map((a) => a.status)).toEqual([503, 503, 201]);
    expect(new Set(attempts.map((a) => a.idempotencyKey))).toEqual(new Set([inv.key]));
    const sha = (await import("node:crypto"))
      .createHash("sha256")
      .update(invoiceJson(inv.invoice))
      .digest("hex");
    expect(attempts.map((a) => a.bodySha256)).toEqual([sha, sha, sha]);
    expect(await storeOf(config).get(inv.key)).toMatchObject({ status: "succeeded", attempts: 3 });
  });

  it("when the job was enqueued with fewer attempts than the worker's setting, then the key is failed at the job's last attempt", async () => {
    const sim = await simulator({ errorRate: 1 });
    const enqueuedWith = testConfig({ apiUrl: sim.url, apiKey: API_KEY, env: { MAX_ATTEMPTS: "2" } });
    const workerConfig = testConfig({
      apiUrl: sim.url,
      apiKey: API_KEY,
      prefix: enqueuedWith.queuePrefix,
      env: { MAX_ATTEMPTS: "10" },
    });
    const inv = testInvoice(1, `two-attempts-${randomUUID()}`);
    await enqueueBatch(enqueuedWith, "b1", [inv]);
    const w = await worker(workerConfig);
    await w.untilFinal(1);

    expect(sim.attempts(inv.key).map((a) => a.status)).toEqual([503, 503]);
    expect(await storeOf(workerConfig).get(inv.key)).toMatchObject({
      status: "failed",
      attempts: 2,
      error: expect.stringContaining("gave up after 2 attempt(s)") as unknown,
    });
  });

  it("when the service answers 429 with Retry-After: 2, then the retry waits at least 2 s", async () => {
    const sim = await simulator({ throttleRate: 1, retryAfterSeconds: 2 });
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY });
    const inv = testInvoice(1, `throttled-${randomUUID()}`);
    sim.events.once("attempt", () => sim.setFaults({ throttleRate: 0 }));
    await enqueueBatch(config, "b1", [inv]);
    const w = await worker(config);
    await w.untilFinal(1);

    const [first, second] = sim.attempts(inv.key);
    expect(first?.status).toBe(429);
    expect(second?.status).toBe(201);
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(2000);
  });

  it("when a response is lost after the service committed, then the retry gets the replay and there is one effect", async () => {
    const sim = await simulator({ lostRate: 1 });
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY });
    const inv = testInvoice(1, `lost-${randomUUID()}`);
    sim.events.once("attempt", () => sim.setFaults({ lostRate: 0 }));
    await enqueueBatch(config, "b1", [inv]);
    const w = await worker(config);
    await w.untilFinal(1);

    const attempts = sim.attempts(inv.key);
    expect(attempts[0]?.lost).toBe(true);
    expect(attempts[1]?.outcome).toBe("replay");
    expect(sim.stats().effects).toMatchObject({ total: 1, keysWithMultipleEffects: 0 });
    expect(await storeOf(config).get(inv.key)).toMatchObject({ status: "succeeded", http_status: 201 });
  });

  it("when the service answers 422, then the invoice fails after exactly one request", async () => {
    const sim = await simulator();
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY });
    const inv = testInvoice(1, `reused-${randomUUID()}`);
    // The key is already used at the service with another body: the service must refuse it with 422.
    const other = testInvoice(2, "other").invoice;
    await request(`${sim.url}/api/v1/invoices`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${API_KEY}`,
        "idempotency-key": inv.key,
        "content-type": "application/json",
      },
      body: invoiceJson(other),
    }).then((r) => r.body.dump());
    await enqueueBatch(config, "b1", [inv]);
    const w = await worker(config);
    await w.untilFinal(1);

    expect(sim.attempts(inv.key).map((a) => a.status)).toEqual([201, 422]);
    expect(await storeOf(config).get(inv.key)).toMatchObject({
      status: "failed",
      http_status: 422,
      attempts: 1,
      // what `retry` sends again: the very bytes of this attempt
      document: invoiceJson(inv.invoice),
    });
  });

  it("when the key is refused with 401, then the queue pauses, nothing fails, and with the key fixed all go through", async () => {
    const sim = await simulator();
    const bad = testConfig({ apiUrl: sim.url, apiKey: "irs_live_wrong_key_000000" });
    const invoices = testInvoices(50, `refused-${randomUUID()}`);
    await enqueueBatch(bad, "b1", invoices);
    let refused: () => void = () => undefined;
    const refusal = new Promise<void>((resolve) => (refused = resolve));
    const first = await startTestWorker(bad, {
      onApiKeyRefused: () => {
        refused();
      },
    });
    await refusal;
    await first.service.close(1000);

    const queue = new Queue(INVOICE_QUEUE, {
      connection: createRedis(bad.redisUrl, "producer"),
      prefix: bad.queuePrefix,
    });
    cleanups.push(() => queue.close());
    expect(await queue.isPaused()).toBe(true);
    expect(sim.stats().requests.total).toBeLessThanOrEqual(2);
    expect(await storeOf(bad).counts()).toMatchObject({ failed: 0, succeeded: 0 });

    const good = testConfig({ apiUrl: sim.url, apiKey: API_KEY, prefix: bad.queuePrefix });
    const w = await worker(good);
    await w.untilFinal(50);
    expect(await storeOf(good).counts()).toMatchObject({ failed: 0, succeeded: 50 });
    expect(sim.stats().effects.keysWithMultipleEffects).toBe(0);
  });

  it("when the service is down (100% 503) for a while, then waiting invoices do not spend their attempts", async () => {
    const sim = await simulator({ errorRate: 1 });
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY, env: { MAX_ATTEMPTS: "6" } });
    const invoices = testInvoices(200, `outage-${randomUUID()}`);
    await enqueueBatch(config, "b1", invoices);
    const w = await worker(config, {
      flow: { outageThreshold: 3, coolDownBaseMs: 500, coolDownCapMs: 2000 },
    });
    // Let the outage last until the service has seen a dozen requests, then heal it.
    let seen = 0;
    const healed = new Promise<void>((resolve) =>
      sim.events.on("attempt", () => {
        if (++seen === 12) {
          sim.setFaults({ errorRate: 0 });
          resolve();
        }
      }),
    );
    await healed;
    await w.untilFinal(200);

    const records = await storeOf(config).getMany(invoices.map((i) => i.key));
    expect(records.filter((r) => r?.status === "failed")).toEqual([]);
    const spent = records.filter((r) => (r?.attempts ?? 0) > 1).length;
    expect(spent).toBeLessThanOrEqual(12);
    expect(sim.stats().effects).toMatchObject({ total: 200, keysWithMultipleEffects: 0 });
  });
});
