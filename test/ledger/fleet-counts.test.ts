import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import {
  attemptCounts,
  readFleetTotals,
  SERIES_HOUR_MS,
  type AnswerClass,
  type RetryCause,
} from "../../src/ledger/fleet-counts.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { readSendSeries, recordRateSample } from "../../src/ledger/send-series.js";
import { testPrefix, testRedis } from "../support/redis.js";

const redis = testRedis();
afterAll(() => {
  redis.disconnect();
});

/** An hour's start. */
const HOUR = 1_800_000_000_000 - (1_800_000_000_000 % SERIES_HOUR_MS);

/** An attempt's facts as the worker gives them, answered at `at`. */
function facts(at: number, answerClass: AnswerClass, retry?: RetryCause, number = 1) {
  return { number, startedAt: at - 5, durationMs: 5, counted: { answerClass, retry } };
}

describe("attemptCounts (how requests are counted)", () => {
  it("when requests are answered across an hour's end, then the totals come first and each hour's seconds go to its own series", () => {
    const end = HOUR + SERIES_HOUR_MS;
    expect(
      attemptCounts([
        { answerClass: "2xx", retry: undefined, answeredAt: end - 1000 },
        { answerClass: "4xx", retry: "throttled", answeredAt: end - 1 },
        { answerClass: "5xx", retry: "server_error", answeredAt: end },
        { answerClass: "network", retry: "timeout", answeredAt: end + 999 },
      ]),
    ).toEqual([
      {
        hour: undefined,
        pairs: [
          ["attempts:2xx", 1],
          ["attempts:4xx", 1],
          ["retries:throttled", 1],
          ["attempts:5xx", 1],
          ["retries:server_error", 1],
          ["attempts:network", 1],
          ["retries:timeout", 1],
        ],
      },
      {
        hour: HOUR,
        pairs: [
          ["a3599", 1],
          ["r3599", 1],
        ],
      },
      { hour: end, pairs: [["o0", 2]] },
    ]);
    expect(attemptCounts([])).toEqual([{ hour: undefined, pairs: [] }]);
  });
});

describe("the fleet's counts in Redis", () => {
  it("when two processes record answers, then the totals and the series hold their sums, kept RESULTS_RETENTION after the hour", async () => {
    const prefix = testPrefix();
    const retentionMs = 7 * 86_400_000;
    const [one, two] = [0, 1].map(() => new RedisLedger(redis, prefix, undefined, retentionMs));
    const [a, b] = [randomUUID(), randomUUID()];
    await one?.registerRows("night", [
      { line: 2, key: a, externalId: "A" },
      { line: 3, key: b, externalId: "B" },
    ]);
    const at = HOUR + 5200;
    await Promise.all([
      one?.recordSucceeded(a, { httpStatus: 201, attempt: facts(at, "2xx") }),
      two?.recordRetrying(b, { httpStatus: 429, attempt: facts(at, "4xx", "throttled") }),
    ]);
    await two?.recordSucceeded(b, { httpStatus: 201, attempt: facts(at, "2xx", undefined, 2) });
    // An answer for a key the ledger does not know is counted all the same (the service saw it)…
    expect(await one?.recordRetrying(randomUUID(), { attempt: facts(at, "5xx", "server_error") })).toBe(
      "unknown",
    );
    // …and a late answer once, though it changes nothing.
    expect(await two?.recordFailed(a, { httpStatus: 500, attempt: facts(at, "5xx") })).toBe(
      "already-succeeded",
    );

    const totals = await readFleetTotals(redis, prefix);
    expect(totals.attempts).toMatchObject({ "2xx": 2, "4xx": 1, "5xx": 2 });
    expect(totals.retries).toMatchObject({ throttled: 1, server_error: 1 });
    expect(totals.final).toEqual({ succeeded: 2, failed: 0 });
    expect(totals.final.succeeded).toBe((await one?.counts())?.succeeded);
    await recordRateSample(redis, prefix, HOUR + 5200, { learned: 12.34, sent: 9 }, retentionMs);
    expect(await readSendSeries(redis, prefix, HOUR, HOUR + 10_000)).toEqual([
      { second: HOUR / 1000 + 5, accepted: 2, refused: 1, other: 2, learned: 12.3, sent: 9 },
    ]);
    expect(await readSendSeries(redis, prefix, HOUR + 6000, HOUR + 10_000)).toEqual([]);
    const expireAt = await redis.pexpiretime(one?.names.sendSeries(HOUR) ?? "");
    expect(expireAt).toBe(HOUR + SERIES_HOUR_MS + retentionMs);
  });

  it("when the totals hash holds fields outside the vocabulary or values that are no counts, then they are ignored", async () => {
    const prefix = testPrefix();
    const name = new RedisLedger(redis, prefix).names.fleetTotals;
    await redis.hset(
      name,
      "attempts:2xx",
      "7",
      "attempts:9xx",
      "5",
      "final:failed",
      "-3",
      "retries:timeout",
      "x",
    );
    const totals = await readFleetTotals(redis, prefix);
    expect(totals.attempts["2xx"]).toBe(7);
    expect(totals.final.failed).toBe(0);
    expect(totals.retries.timeout).toBe(0);
    expect(Object.keys(totals.attempts)).not.toContain("9xx");
  });
});
