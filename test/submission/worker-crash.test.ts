import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { createRedis } from "../../src/queue/connection.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { enqueueBatch, testConfig } from "../support/engine.js";
import { testInvoices } from "../support/invoices.js";
import { spawnNode, until } from "../support/processes.js";

const API_KEY = "irs_live_test_key_0123456789";
let redis: RedisServer;
let sim: SimulatorHandle;
let client: Redis;

beforeAll(async () => {
  redis = await RedisServer.start({ aof: true });
  sim = await startSimulator({ apiKey: API_KEY, seed: 11, latencyMs: { min: 2, max: 15 } });
  client = createRedis(redis.url, "producer");
});
afterAll(async () => {
  client.disconnect();
  await sim.close();
  await redis.dispose();
});

describe("a worker killed mid-batch", () => {
  it("when a worker is killed with SIGKILL and a new one started, then every invoice succeeds with one effect each", async () => {
    const prefix = `crash-${randomUUID()}`;
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY, redisUrl: redis.url, prefix });
    const invoices = testInvoices(1500, prefix);
    await enqueueBatch(config, "b1", invoices);
    const env = {
      REDIS_URL: redis.url,
      INVOICE_API_URL: sim.url,
      INVOICE_API_KEY: API_KEY,
      QUEUE_PREFIX: prefix,
      LOCK_DURATION_MS: "2000",
      BACKOFF_BASE_MS: "50",
      BACKOFF_CAP_MS: "500",
      LOG_LEVEL: "warn",
    };
    const store = new RedisLedger(client, prefix);

    const first = spawnNode("workers/submit-worker.js", [], env);
    await until(() => Promise.resolve(sim.stats().effects.total >= 300), 30_000, "300 effects");
    first.child.kill("SIGKILL");
    expect((await first.exited).signal).toBe("SIGKILL");
    const doneBeforeRestart = (await store.counts()).succeeded;
    expect(doneBeforeRestart).toBeLessThan(1500);

    const second = spawnNode("workers/submit-worker.js", [], env);
    try {
      await until(async () => (await store.counts()).succeeded === 1500, 60_000, "all invoices succeeded");
    } finally {
      second.child.kill("SIGTERM");
      await second.exited;
    }
    const stats = sim.stats();
    expect(stats.effects.distinctKeys).toBe(1500);
    expect(stats.effects.keysWithMultipleEffects).toBe(0);
    expect((await store.counts()).failed).toBe(0);
  });

  it("when a worker gets SIGTERM mid-batch, then it exits 0 and a restart finishes the batch with no double effects", async () => {
    const prefix = `term-${randomUUID()}`;
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY, redisUrl: redis.url, prefix });
    const invoices = testInvoices(800, prefix);
    await enqueueBatch(config, "b1", invoices);
    const env = {
      REDIS_URL: redis.url,
      INVOICE_API_URL: sim.url,
      INVOICE_API_KEY: API_KEY,
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: "warn",
    };
    const store = new RedisLedger(client, prefix);
    const before = sim.stats().effects.total;

    const first = spawnNode("workers/submit-worker.js", [], { ...env, SHUTDOWN_GRACE_MS: "5000" });
    await until(async () => (await store.counts()).succeeded >= 100, 30_000, "100 succeeded");
    first.child.kill("SIGTERM");
    expect((await first.exited).code).toBe(0);
    expect((await store.counts()).succeeded).toBeLessThan(800);

    const second = spawnNode("workers/submit-worker.js", [], env);
    try {
      await until(async () => (await store.counts()).succeeded === 800, 60_000, "all invoices succeeded");
    } finally {
      second.child.kill("SIGTERM");
      await second.exited;
    }
    const stats = sim.stats();
    expect(stats.effects.total - before).toBe(800);
    expect(stats.effects.keysWithMultipleEffects).toBe(0);
  });
});
