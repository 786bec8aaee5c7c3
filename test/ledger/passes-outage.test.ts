import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { Passes } from "../../src/ledger/passes.js";
import { createLogger } from "../../src/log/logger.js";
import { PassWatch } from "../../src/use-cases/pass-watch.js";
import { testPrefix } from "../support/redis.js";

/*
 * The passes' records when Redis is away or does not answer: a private Redis this file
 * stops and pauses (never the shared one).
 */
let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  await server.dispose();
});

function logLines(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger({ level: "warn", destination: { write: (line: string) => lines.push(line) } });
  return { logger, lines };
}

describe("a pass's record while Redis is away", () => {
  it("when Redis is not connected at the pass's end, then the end is logged as not recorded and the pass goes on", async () => {
    const redis = new Redis("redis://127.0.0.1:1", { lazyConnect: true, maxRetriesPerRequest: 0 });
    redis.on("error", () => undefined);
    const { logger, lines } = logLines();
    const pass = PassWatch.starting({ redis, prefix: testPrefix(), retentionMs: 60_000, logger }, "run");
    await pass.end([], 1);
    expect(lines.join("")).toMatch(/Redis is away: the pass's record misses its end/);
    redis.disconnect();
  });

  it("when Redis does not answer at the pass's end, then the pass stops waiting for it and says so", async () => {
    const prefix = testPrefix();
    const redis = new Redis(server.url);
    const admin = new Redis(server.url);
    const { logger, lines } = logLines();
    try {
      await redis.ping();
      const pass = PassWatch.starting({ redis, prefix, retentionMs: 60_000, logger }, "run");
      await pass.open();
      expect(await new Passes(redis, prefix).open()).toMatchObject([{ id: pass.id }]);
      await admin.call("CLIENT", "PAUSE", "4000", "ALL");
      await pass.end([], 0);
      expect(lines.join("")).toMatch(/could not record its end of the pass in Redis/);
      await admin.call("CLIENT", "UNPAUSE");
      // The write it stopped waiting for still lands once Redis answers again.
      await expect
        .poll(async () => (await new Passes(redis, prefix).newest(1))[0]?.exitCode, { timeout: 10_000 })
        .toBe(0);
    } finally {
      await admin.call("CLIENT", "UNPAUSE").catch(() => undefined);
      redis.disconnect();
      admin.disconnect();
    }
  });
});
