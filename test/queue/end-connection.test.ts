import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisCluster } from "../../src/dev/redis-cluster.js";
import { RedisServer } from "../../src/dev/redis-server.js";
import type { RedisClient } from "../../src/ledger/redis-client.js";
import { createRedis, endConnection } from "../../src/queue/connection.js";
import { until } from "../support/processes.js";

/*
 * A worker's connection rides out an outage (it queues commands until Redis is back); closing one in
 * the middle of an outage must still end it and fail what it holds, or a command never settles and
 * whatever waits for it (a worker's close, the process's exit) waits for ever.
 */

/** What a pending command came to, or "pending" if it had not settled within `ms`. */
async function settledWithin(command: Promise<unknown>, ms: number): Promise<string> {
  const outcome = command.then(
    () => "answered",
    (error: unknown) => `failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  const late = new Promise<string>((resolve) => {
    setTimeout(() => {
      resolve("pending");
    }, ms).unref();
  });
  return Promise.race([outcome, late]);
}

async function betweenAttempts(client: RedisClient): Promise<void> {
  await until(
    () => Promise.resolve(client.status === "reconnecting"),
    20_000,
    "the client to wait for its next attempt",
  );
}

describe("ending a connection", () => {
  let redis: RedisServer;
  const opened: RedisClient[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    for (const client of opened) client.disconnect();
    await redis.dispose();
  });

  function workerClient(url: string): RedisClient {
    const client = createRedis(url, "worker");
    client.on("error", () => undefined);
    opened.push(client);
    return client;
  }

  it("when Redis is answering, then the connection ends and a later command fails at once", async () => {
    const client = workerClient(redis.url);
    await client.ping();
    endConnection(client);
    await until(() => Promise.resolve(client.status === "end"), 5_000, "the connection to end");
    expect(await settledWithin(client.get("any"), 1_000)).toMatch(/^failed: Connection is closed/);
  });

  it("when Redis is away between two reconnect attempts, then the connection ends and the commands it queued fail", async () => {
    const client = workerClient(redis.url);
    await client.ping();
    await redis.stop();
    try {
      await betweenAttempts(client);
      const queued = client.get("queued while away");
      endConnection(client);
      expect(await settledWithin(queued, 5_000)).toMatch(/^failed: /);
      await until(() => Promise.resolve(client.status === "end"), 5_000, "the connection to end");
    } finally {
      await redis.restart();
    }
  });

  it("when Redis comes back as the connection is ended, then the connection still ends", async () => {
    const client = workerClient(redis.url);
    await client.ping();
    await redis.stop();
    await betweenAttempts(client);
    const queued = client.get("queued while away");
    // Up again before the last attempt is made: that attempt is answered, and the client ends all the same.
    await redis.restart();
    endConnection(client);
    expect(await settledWithin(queued, 5_000)).not.toBe("pending");
    await until(() => Promise.resolve(client.status === "end"), 5_000, "the connection to end");
  });
});

describe("ending a cluster connection", () => {
  let cluster: RedisCluster;

  beforeAll(async () => {
    cluster = await RedisCluster.start();
  });
  afterAll(async () => {
    await cluster.dispose();
  });

  it("when every node is away, then the connection ends and the commands it queued fail", async () => {
    const client = createRedis(
      { kind: "cluster", nodes: cluster.seedNodes(), username: undefined, password: undefined, tls: false },
      "worker",
    );
    client.on("error", () => undefined);
    try {
      await client.ping();
      await Promise.all([0, 1, 2].map((node) => cluster.kill(node)));
      await new Promise((r) => setTimeout(r, 1000));
      const queued = client.get("queued while away");
      endConnection(client);
      expect(await settledWithin(queued, 5_000)).toMatch(/^failed: /);
      await until(() => Promise.resolve(client.status === "end"), 5_000, "the connection to end");
    } finally {
      client.disconnect();
    }
  });
});
