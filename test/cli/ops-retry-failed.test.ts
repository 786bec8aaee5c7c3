import { randomUUID } from "node:crypto";
import { Queue, Worker } from "bullmq";
import { describe, expect, it } from "vitest";
import { invoiceJson } from "../../src/invoice/key.js";
import { createRedis } from "../../src/queue/connection.js";
import { createInvoiceQueue, enqueueInvoices, INVOICE_QUEUE } from "../../src/queue/invoice-queue.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import type { RedisClient } from "../../src/ledger/redis-client.js";
import { retryFailed, type RetryDeps } from "../../src/use-cases/retry-failed.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { enqueueBatch, startTestWorker, testConfig } from "../support/engine.js";
import { testInvoice } from "../support/invoices.js";
import { API_KEY } from "./ops-support.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const cleanups = cleanupsAfterEach();

function deps(config: ReturnType<typeof testConfig>): RetryDeps & { redis: RedisClient } {
  const redis = createRedis(config.redisUrl, "producer");
  const queue = createInvoiceQueue(redis, config.queuePrefix, config.maxAttempts);
  cleanups.push(async () => {
    await queue.close();
    redis.disconnect();
  });
  return {
    redis,
    queue,
    ledger: new RedisLedger(redis, config.queuePrefix),
    batches: new BatchStore(redis, config.queuePrefix),
  };
}

/** Runs every job of the queue into BullMQ's failed set, as an unexpected error in a worker would. */
async function failJobs(config: ReturnType<typeof testConfig>, count: number): Promise<void> {
  let failed = 0;
  const connection = createRedis(config.redisUrl, "worker");
  const done = new Promise<void>((resolve) => {
    const worker = new Worker(
      INVOICE_QUEUE,
      () => Promise.reject(new Error("unexpected: the store connection dropped")),
      { connection, prefix: config.queuePrefix },
    );
    worker.on("failed", () => {
      if (++failed === count) void worker.close().then(resolve);
    });
  });
  await done;
  connection.disconnect();
}

/** A worker drains the queue: the key succeeds, and the service saw it take effect exactly once. */
async function expectSentOnce(
  config: ReturnType<typeof testConfig>,
  d: RetryDeps,
  sim: SimulatorHandle,
  key: string,
): Promise<void> {
  const w = await startTestWorker(config);
  cleanups.push(() => w.service.close(1000));
  await w.untilFinal(1);
  expect(await d.ledger.get(key)).toMatchObject({ status: "succeeded", http_status: 201 });
  expect(sim.stats().effects).toMatchObject({ total: 1, keysWithMultipleEffects: 0 });
}

describe("retryFailed", () => {
  it("when a job sits in BullMQ's failed set after an unexpected error, then retry re-drives it and it is then submitted once", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 3 });
    cleanups.push(() => sim.close());
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY, env: { MAX_ATTEMPTS: "1" } });
    const inv = testInvoice(1, `stuck-${randomUUID()}`);
    await enqueueBatch(config, "b1", [inv]);
    const d = deps(config);
    // A job whose data no longer parses cannot be re-driven: it is named, not retried.
    const raw = new Queue<unknown>(INVOICE_QUEUE, { connection: d.redis, prefix: config.queuePrefix });
    cleanups.push(() => raw.close());
    await raw.add("invoice", { unexpected: true }, { jobId: "unreadable-job", attempts: 1 });
    await failJobs(config, 2);
    expect(await d.queue.getFailedCount()).toBe(2);
    expect(await d.ledger.statusOf(inv.key)).toBe("queued");

    const outcome = await retryFailed(d);
    expect(outcome).toMatchObject({ requeued: 0, redriven: 1 });
    expect(outcome.unreadableJobs).toEqual({ count: 1, examples: ["unreadable-job"] });

    await expectSentOnce(config, d, sim, inv.key);
  });

  it("when a failed key still has a waiting job, or no readable document, then retry leaves it failed and names it", async () => {
    const config = testConfig({ apiUrl: "http://127.0.0.1:9", apiKey: API_KEY });
    const d = deps(config);
    const busy = testInvoice(1, `busy-${randomUUID()}`);
    const bare = testInvoice(2, `bare-${randomUUID()}`);
    await d.ledger.registerRows("b1", [
      { line: 2, key: busy.key, externalId: busy.invoice.external_id },
      { line: 3, key: bare.key, externalId: bare.invoice.external_id },
    ]);
    await d.ledger.finishIngest("b1");
    const failure = { httpStatus: 422, error: "no" };
    await d.ledger.recordFailed(busy.key, { ...failure, document: invoiceJson(busy.invoice) });
    await d.ledger.recordFailed(bare.key, { ...failure, document: "{not json" });
    await enqueueInvoices(d.queue, [
      { key: busy.key, data: { invoice: busy.invoice, batch: "b1", line: 2 } },
    ]);

    const outcome = await retryFailed(d);
    expect(outcome.requeued).toBe(0);
    expect(outcome.busy).toEqual({ count: 1, examples: [busy.key] });
    expect(outcome.noDocument).toEqual({ count: 1, examples: [bare.key] });
    expect(await d.ledger.counts()).toMatchObject({ failed: 2, queued: 0 });
  });

  it("when a batch id is given, then keys of other batches are not touched, and a key shared with that batch is", async () => {
    const config = testConfig({ apiUrl: "http://127.0.0.1:9", apiKey: API_KEY });
    const d = deps(config);
    const [only1, shared, only2] = [1, 2, 3].map((i) => testInvoice(i, `scope-${randomUUID()}`));
    const row = (line: number, inv: ReturnType<typeof testInvoice> | undefined) => ({
      line,
      key: inv?.key ?? "",
      externalId: inv?.invoice.external_id ?? "",
    });
    await d.ledger.registerRows("b1", [row(2, only1), row(3, shared)]);
    await d.ledger.registerRows("b2", [row(2, shared), row(3, only2)]);
    for (const inv of [only1, shared, only2]) {
      const document = inv === undefined ? "" : invoiceJson(inv.invoice);
      await d.ledger.recordFailed(inv?.key ?? "", { httpStatus: 500, error: "gave up", document });
    }

    const outcome = await retryFailed(d, "b2");
    expect(outcome.requeued).toBe(2);
    expect([...outcome.batches].sort()).toEqual(["b1", "b2"]); // the shared key makes b1 wait too
    expect(await d.ledger.statusOf(only1?.key ?? "")).toBe("failed");
    expect(await d.ledger.statusOf(shared?.key ?? "")).toBe("queued");
    expect(await d.queue.getJobState(only2?.key ?? "")).toBe("waiting");
    expect((await d.queue.getJob(only2?.key ?? ""))?.data).toMatchObject({ batch: "b2", line: 3 });
  });

  it("when a retry stopped after requeueing a key but before adding its job, then the next retry adds the job and the key is sent once", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 4 });
    cleanups.push(() => sim.close());
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY });
    const d = deps(config);
    const inv = testInvoice(1, `orphan-${randomUUID()}`);
    await d.ledger.registerRows("b1", [{ line: 2, key: inv.key, externalId: inv.invoice.external_id }]);
    await d.ledger.finishIngest("b1");
    await d.ledger.recordFailed(inv.key, {
      httpStatus: 503,
      error: "gave up after 10 attempt(s)",
      document: invoiceJson(inv.invoice),
    });
    // The first half of a retry, then the process dies: queued in the store, no job in the queue.
    expect(await d.ledger.requeueFailed(inv.key)).toBe("requeued");
    expect(await d.queue.getJobState(inv.key)).toBe("unknown");
    expect(await d.ledger.requeuingKeys()).toEqual([inv.key]);

    const outcome = await retryFailed(d, "some-other-batch");
    expect(outcome).toMatchObject({ requeued: 0, resumed: 1 });
    expect(await d.queue.getJobState(inv.key)).toBe("waiting");
    expect(await d.ledger.requeuingKeys()).toEqual([]);
    // Run again: nothing is left to finish, and the waiting job is not touched.
    expect(await retryFailed(d)).toMatchObject({ requeued: 0, resumed: 0 });

    await expectSentOnce(config, d, sim, inv.key);
  });

  it("when a retry completes, then no key is left noted as requeuing", async () => {
    const config = testConfig({ apiUrl: "http://127.0.0.1:9", apiKey: API_KEY });
    const d = deps(config);
    const inv = testInvoice(1, `done-${randomUUID()}`);
    await d.ledger.registerRows("b1", [{ line: 2, key: inv.key, externalId: inv.invoice.external_id }]);
    await d.ledger.recordFailed(inv.key, {
      httpStatus: 500,
      error: "gave up",
      document: invoiceJson(inv.invoice),
    });
    expect(await retryFailed(d)).toMatchObject({ requeued: 1, resumed: 0 });
    expect(await d.ledger.requeuingKeys()).toEqual([]);
    expect(await d.queue.getJobState(inv.key)).toBe("waiting");
  });
});
