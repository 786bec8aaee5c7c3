import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { FleetCounts, FLUSH_MS, readFleetTotals, SERIES_HOUR_MS } from "../../src/ledger/fleet-counts.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { readSendSeries, recordRateSample } from "../../src/ledger/send-series.js";
import { testPrefix, testRedis } from "../support/redis.js";

const redis = testRedis();
afterAll(() => {
  redis.disconnect();
});

/** An hour's start, and a clock a test moves. */
const HOUR = 1_800_000_000_000 - (1_800_000_000_000 % SERIES_HOUR_MS);
function clock(start = HOUR) {
  const c = { now: start, read: () => c.now };
  return c;
}

describe("FleetCounts (what a process counts before it writes)", () => {
  it("when answers come, then the counts are taken at most once per FLUSH_MS unless forced, by second and by hour", () => {
    const c = clock(HOUR + SERIES_HOUR_MS - 1000);
    const tally = new FleetCounts(c.read);
    expect(tally.take()).toBeUndefined();
    tally.attempt("2xx", undefined);
    tally.attempt("4xx", "throttled");
    tally.final("succeeded");
    c.now += 1000; // the next second is the next hour's first
    tally.attempt("5xx", "server_error");
    tally.attempt("network", "timeout");
    const taken = tally.take();
    expect(taken).toEqual([
      {
        hour: undefined,
        pairs: [
          ["attempts:2xx", 1],
          ["attempts:4xx", 1],
          ["retries:throttled", 1],
          ["final:succeeded", 1],
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
      { hour: HOUR + SERIES_HOUR_MS, pairs: [["o0", 2]] },
    ]);
    tally.attempt("2xx", undefined);
    expect(tally.take()).toBeUndefined();
    c.now += FLUSH_MS;
    expect(tally.take()?.[0]?.pairs).toEqual([["attempts:2xx", 1]]);
    tally.final("failed");
    expect(tally.take(true)?.[0]?.pairs).toEqual([["final:failed", 1]]);
  });

  it("when a write fails, then what it carried goes with the next one", () => {
    const c = clock();
    const tally = new FleetCounts(c.read);
    tally.attempt("2xx", undefined);
    const taken = tally.take() ?? [];
    tally.attempt("2xx", undefined);
    tally.putBack(taken);
    expect(tally.take()).toEqual([
      { hour: undefined, pairs: [["attempts:2xx", 2]] },
      { hour: HOUR, pairs: [["a0", 2]] },
    ]);
  });
});

describe("the fleet's counts in Redis", () => {
  it("when two processes write their counts with their answers, then the totals and the series hold their sums, kept RESULTS_RETENTION after the hour", async () => {
    const prefix = testPrefix();
    const c = clock(HOUR + 5000);
    const retentionMs = 7 * 86_400_000;
    const [one, two] = [new FleetCounts(c.read), new FleetCounts(c.read)];
    const ledgers = [one, two].map(
      (tally) => new RedisLedger(redis, prefix, undefined, { tally, retentionMs }),
    );
    one.attempt("2xx", undefined);
    two.attempt("2xx", undefined);
    two.attempt("4xx", "throttled");
    one.final("succeeded");
    // An answer for a key the ledger does not know carries the counts all the same.
    expect(await ledgers[0]?.recordRetrying(randomUUID(), {})).toBe("unknown");
    await ledgers[1]?.flushCounts(true);

    const totals = await readFleetTotals(redis, prefix);
    expect(totals.attempts).toMatchObject({ "2xx": 2, "4xx": 1, "5xx": 0 });
    expect(totals.retries).toMatchObject({ throttled: 1, server_error: 0 });
    expect(totals.final).toEqual({ succeeded: 1, failed: 0 });
    await recordRateSample(redis, prefix, HOUR + 5200, { learned: 12.34, sent: 9 }, retentionMs);
    expect(await readSendSeries(redis, prefix, HOUR, HOUR + 10_000)).toEqual([
      { second: HOUR / 1000 + 5, accepted: 2, refused: 1, other: 0, learned: 12.3, sent: 9 },
    ]);
    expect(await readSendSeries(redis, prefix, HOUR + 6000, HOUR + 10_000)).toEqual([]);
    const expireAt = await redis.pexpiretime(ledgers[0]?.names.sendSeries(HOUR) ?? "");
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
