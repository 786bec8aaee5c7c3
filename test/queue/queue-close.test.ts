import { afterEach, describe, expect, it } from "vitest";
import { createInvoiceQueue } from "../../src/queue/invoice-queue.js";
import { createRedis, endConnection } from "../../src/queue/connection.js";
import { testPrefix, testRedisUrl } from "../support/redis.js";

/*
 * A queue starts by asking Redis its version on the connection it is given. A command that opens a
 * queue and closes it at once (the console's first check) then ends the connection while that question
 * is still out: the answer "Connection is closed" must not end the process as an unheard error.
 */
describe("closing a queue at once", () => {
  const heard: unknown[] = [];
  const hear = (error: unknown) => heard.push(error);
  afterEach(() => {
    process.off("uncaughtException", hear);
    process.off("unhandledRejection", hear);
  });

  it("when the connection ends while the queue still starts, then no error is left unheard", async () => {
    process.on("uncaughtException", hear);
    process.on("unhandledRejection", hear);
    const redis = createRedis(testRedisUrl(), "producer");
    redis.on("error", () => undefined);
    await redis.ping();
    // Redis answers a connection's commands in order: the queue's question waits behind this one.
    const held = redis.blpop(`${testPrefix()}:nothing`, 5).catch(() => undefined);
    const queue = createInvoiceQueue(redis, testPrefix(), 3);
    await queue.close();
    endConnection(redis);
    await held;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(heard).toEqual([]);
  });
});
