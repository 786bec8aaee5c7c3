import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/log/logger.js";
import { DeploymentReader } from "../../src/queue/deployment-view.js";
import { speedOf } from "../../src/queue/speed-limit.js";
import { PassWatch } from "../../src/use-cases/pass-watch.js";
import { testPrefix, testRedis } from "../support/redis.js";

const redis = testRedis();
afterAll(() => {
  redis.disconnect();
});
const DAY = 86_400_000;

describe("a run's deadline in its pass record", () => {
  it("when a run starts with a --deadline, then its record keeps it while it runs and the speed limit reads it, and not once it ended", async () => {
    const prefix = testPrefix();
    const start = Date.now();
    const deadline = start + 3_600_000;
    const logger = createLogger({ level: "silent" });
    const pass = PassWatch.starting(
      { redis, prefix, retentionMs: DAY, logger },
      "run",
      new Date(start),
      deadline,
    );
    const reader = new DeploymentReader(redis, loadConfig({ QUEUE_PREFIX: prefix }));
    try {
      await redis.ping(); // a pass records nothing on a connection not ready yet
      await pass.open();
      expect(speedOf(await reader.read()).deadline).toBe(deadline);
      await pass.end([], 0);
      expect(speedOf(await reader.read()).deadline).toBeUndefined();
    } finally {
      await reader.close();
    }
  });
});
