import { randomUUID } from "node:crypto";
import { Queue, Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { createRedis, endConnection } from "../../src/queue/connection.js";
import { leaveJobsInHand } from "../../src/queue/leave-jobs.js";
import { until } from "../support/processes.js";

/*
 * A worker closing while Redis is away, with a job in hand whose end it cannot write: left to itself
 * BullMQ writes that end again and again at full speed and its close never ends. Leaving the job ends
 * the close; the job stays active and is taken again once its lock lapses.
 */
let redis: RedisServer;

beforeAll(async () => {
  // With AOF: the job in hand must still be in Redis when it comes back.
  redis = await RedisServer.start({ aof: true });
});
afterAll(async () => {
  await redis.dispose();
});

describe("leaving the jobs in hand", () => {
  it("when Redis goes away while a job is in hand and the worker closes, then leaving the job ends the close, and the job is taken again later", async () => {
    const prefix = `leave-${randomUUID()}`;
    const producer = createRedis(redis.url, "producer");
    const queue = new Queue("invoices", { connection: producer, prefix });
    await queue.add("invoice", { n: 1 }, { jobId: "key-1" });

    const connection = createRedis(redis.url, "worker");
    connection.on("error", () => undefined);
    let release: () => void = () => undefined;
    const inHand = new Promise<void>((resolve) => {
      release = resolve;
    });
    let taken = 0;
    const worker = new Worker(
      "invoices",
      async () => {
        taken++;
        await inHand;
        return "done";
      },
      { connection, prefix, lockDuration: 2_000, stalledInterval: 1_000, maxStalledCount: 1_000 },
    );
    worker.on("error", () => undefined);
    await until(() => Promise.resolve(taken === 1), 10_000, "the worker to take the job");

    await redis.stop();
    let closed = false;
    const closing = worker.close().then(() => {
      closed = true;
    });
    // The job's processing ends, but its end cannot be written.
    release();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(closed).toBe(false);

    endConnection(await worker.waitUntilReady());
    await leaveJobsInHand(worker);
    endConnection(connection);
    await until(() => Promise.resolve(closed), 5_000, "the worker's close to end");
    await closing;

    // Redis back: the job is still active, and a new worker takes it once its lock lapses.
    await redis.restart();
    const again = createRedis(redis.url, "worker");
    const next = new Worker(
      "invoices",
      () => {
        taken++;
        return Promise.resolve("done");
      },
      { connection: again, prefix, lockDuration: 2_000, stalledInterval: 1_000, maxStalledCount: 1_000 },
    );
    try {
      await until(() => Promise.resolve(taken === 2), 15_000, "the job to be taken again");
      await until(
        async () => (await queue.getJobState("key-1")) === "completed",
        5_000,
        "the job to complete",
      );
    } finally {
      await next.close();
      await queue.close();
      again.disconnect();
      producer.disconnect();
    }
  });
});
