import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { RedisServer } from "../../src/dev/redis-server.js";
import { createLogger } from "../../src/log/logger.js";
import { startOpsServer } from "../../src/ops/ops-server.js";
import { clearApiKeyRefusal, recordApiKeyRefused } from "../../src/queue/api-key-refusal.js";
import { createRedis } from "../../src/queue/connection.js";
import { createInvoiceQueue } from "../../src/queue/invoice-queue.js";
import { until } from "../support/processes.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const silent = createLogger({ level: "silent" });
let redis: RedisServer;
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await redis.dispose();
});

const cleanups = cleanupsAfterEach();

interface Answer {
  readonly status: number;
  readonly body: string;
}

async function get(url: string): Promise<Answer> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text() };
}

/** Health probes on a free loopback port, against the private Redis, with a stop of the test's own. */
async function probes(): Promise<{ url: string; prefix: string; stop: AbortController }> {
  const prefix = `probes-${randomUUID()}`;
  const config = loadConfig({ REDIS_URL: redis.url, QUEUE_PREFIX: prefix });
  const stop = new AbortController();
  const started = await startOpsServer(config, { host: "127.0.0.1", port: 0 }, stop.signal, silent);
  cleanups.push(() => started.close());
  const url = started.url ?? "";
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  return { url, prefix, stop };
}

const readyBody = (failed: string[], checks: Record<string, string>) => ({
  status: failed.length === 0 ? "ready" : "not ready",
  failed,
  checks,
});
const ALL_OK = { redis: "ok", apiKey: "ok", shutdown: "ok" };

describe("the health probes", () => {
  it("when Redis answers and nothing is refused, then /healthz says ok and /readyz is 200 with every check ok", async () => {
    const { url } = await probes();
    expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: "ok" });
    const ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual(readyBody([], ALL_OK));
  });

  it("when Redis is stopped, then /readyz is 503 naming redis while /healthz stays 200, and both are 200 once it is back", async () => {
    const { url } = await probes();
    expect((await get(`${url}/readyz`)).status).toBe(200);
    await redis.restart({
      whileDown: async () => {
        const ready = await get(`${url}/readyz`);
        expect(ready.status).toBe(503);
        expect(JSON.parse(ready.body)).toEqual(
          readyBody(["redis", "apiKey"], { redis: "no answer", apiKey: "unknown", shutdown: "ok" }),
        );
        expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: "ok" });
      },
    });
    await until(async () => (await get(`${url}/readyz`)).status === 200, 20_000, "/readyz to be 200 again");
    expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: "ok" });
  });

  it("when the service refuses the API key, then /readyz is 503 naming apiKey without the key or the service's words, and 200 once the refusal is cleared", async () => {
    const { url, prefix } = await probes();
    const client = createRedis(redis.url, "producer");
    const queue = createInvoiceQueue(client, prefix, 3);
    cleanups.push(async () => {
      await queue.close();
      client.disconnect();
    });
    const detail = "key irs_live_secret_words_0123 revoked";
    await recordApiKeyRefused(client, queue, prefix, { httpStatus: 401, detail, at: Date.now() });

    const refused = await get(`${url}/readyz`);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toEqual(
      readyBody(["apiKey"], { redis: "ok", apiKey: "refused", shutdown: "ok" }),
    );
    expect(refused.body).not.toContain("irs_live");
    expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: "ok" });

    expect(await clearApiKeyRefusal(client, queue, prefix)).toBe(true);
    const cleared = await get(`${url}/readyz`);
    expect(cleared.status).toBe(200);
    expect(JSON.parse(cleared.body)).toEqual(readyBody([], ALL_OK));
  });

  it("when the process is shutting down, then /readyz is 503 naming shutdown while /healthz stays 200", async () => {
    const { url, stop } = await probes();
    stop.abort("SIGTERM");
    const ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toEqual(
      readyBody(["shutdown"], { redis: "ok", apiKey: "ok", shutdown: "shutting down" }),
    );
    expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: "ok" });
  });

  it("when the probes are closed, then nothing listens on their port any more", async () => {
    const prefix = `probes-${randomUUID()}`;
    const started = await startOpsServer(
      loadConfig({ REDIS_URL: redis.url, QUEUE_PREFIX: prefix }),
      { host: "127.0.0.1", port: 0 },
      new AbortController().signal,
      silent,
    );
    const url = started.url ?? "";
    expect((await get(`${url}/healthz`)).status).toBe(200);
    await started.close();
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
