import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { Passes } from "../../src/ledger/passes.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { recordRateSample } from "../../src/ledger/send-series.js";
import { createLogger } from "../../src/log/logger.js";
import { PassWatch } from "../../src/use-cases/pass-watch.js";
import { testPrefix, testRedis } from "../support/redis.js";

const redis = testRedis();
afterAll(() => {
  redis.disconnect();
});
const DAY = 86_400_000;

describe("a pass's busiest second", () => {
  it("when a burst's quarter second times four exceeds any whole second's answers, then the pass records the answers of its busiest whole second", async () => {
    const prefix = testPrefix();
    const start = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    const ledger = new RedisLedger(redis, prefix, undefined, DAY);
    // 30 answers spread over one second, then 100 in the first 200 ms of the next: 400/s over a quarter
    // second, 100 in its whole second; the rate sampler noted the quarter-second figure.
    const answeredAt = [
      ...Array.from({ length: 30 }, (_, i) => start + 10_000 + i * 33),
      ...Array.from({ length: 100 }, (_, i) => start + 11_000 + i * 2),
    ];
    for (const at of answeredAt) {
      const counted = { answerClass: "2xx" as const, retry: undefined };
      await ledger.recordRetrying(randomUUID(), {
        attempt: { number: 1, startedAt: at, durationMs: 0, counted },
      });
    }
    await recordRateSample(redis, prefix, start + 11_250, { learned: 120, sent: 400 }, DAY);

    const logger = createLogger({ level: "silent" });
    const pass = PassWatch.starting({ redis, prefix, retentionMs: DAY, logger }, "run", new Date(start));
    await pass.open();
    await pass.end([], 0, start + 20_000);
    const [record] = await new Passes(redis, prefix).newest(1);
    expect(record).toMatchObject({ busiestSecond: 100, refused: 0, learnedRate: 120, exitCode: 0 });
  });
});
