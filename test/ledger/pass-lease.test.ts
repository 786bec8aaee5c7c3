import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { PASS_LEASE_MS } from "../../src/ledger/pass-lease.js";
import { seriesHour } from "../../src/ledger/fleet-counts.js";
import { Passes, passSeriesEnd } from "../../src/ledger/passes.js";
import { testPrefix, testRedis } from "../support/redis.js";

const redis = testRedis();
afterAll(() => {
  redis.disconnect();
});
const DAY = 86_400_000;

async function redisNow(): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** A run started a minute ago by `holder`, its lease last renewed `ago` ms before Redis's now. */
async function runHeldBy(holder: string, ago: number) {
  const passes = new Passes(redis, testPrefix());
  const now = await redisNow();
  const pass = { id: "20261121T020000Z-0a0b0c", kind: "run" as const, batches: ["b1"], invoices: {} };
  await passes.write({ ...pass, startedAt: now - 60_000 }, DAY, now, holder);
  await redis.hset(passes.names.passLeases, pass.id, `${now - ago} ${holder}`);
  // A renewal, as the run's process writes it every PASS_RENEW_MS.
  const renew = () => passes.write({ ...pass, startedAt: now - 60_000 }, DAY, now, holder);
  return { passes, id: pass.id, seen: now - ago, renew };
}

describe("a run's lease", () => {
  it("when a run on another machine has not renewed its lease for PASS_LEASE_MS, then the next read ends it with exit 1, ended without a word, at its last sign of life", async () => {
    const { passes, id, seen } = await runHeldBy("elsewhere.example:4242", PASS_LEASE_MS + 1000);
    const [read] = await passes.newest(1);
    expect(read).toMatchObject({ id, endedAt: seen, exitCode: 1, endedWithoutWord: true, batches: ["b1"] });
    expect(await passes.open()).toEqual([]);
    expect(await passes.lastOutcome()).toMatchObject({ id, exitCode: 1 });
  });

  it("when a run on another machine renews its lease, then it reads as running however long ago the lease was taken", async () => {
    const { passes, id, renew } = await runHeldBy("elsewhere.example:4242", PASS_LEASE_MS + 1000);
    await renew();
    const [read] = await passes.newest(1);
    expect(read?.endedAt).toBeUndefined();
    expect(await passes.open()).toMatchObject([{ id }]);
  });

  it("when the process of a run on this machine is gone, then its pass reads as ended without a word at once", async () => {
    const gone = spawnSync(process.execPath, ["-e", ""]).pid;
    const { passes, id } = await runHeldBy(`${hostname()}:${gone}`, 0);
    expect(await passes.newest(1)).toMatchObject([{ id, exitCode: 1, endedWithoutWord: true }]);
  });

  it("when a run is killed after answers its last renewal did not see, then its pass's figures count them, its end the last sign of life and its answers read until it was found gone", async () => {
    const gone = spawnSync(process.execPath, ["-e", ""]).pid;
    const { passes, id, seen } = await runHeldBy(`${hostname()}:${gone}`, 4000);
    // The fleet's answers per second (src/ledger/fleet-counts.ts): some before its last renewal, more after.
    const answered = async (at: number, field: string, n: number) => {
      const second = Math.floor(at / 1000);
      const hour = seriesHour(second * 1000);
      await redis.hincrby(passes.names.sendSeries(hour), `${field}${second - hour / 1000}`, n);
    };
    await answered(seen - 30_000, "a", 3);
    await answered(seen + 2000, "a", 7);
    await answered(seen + 2000, "r", 2);
    const [read] = await passes.newest(1);
    expect(read).toMatchObject({ id, endedAt: seen, endedWithoutWord: true, refused: 2, busiestSecond: 9 });
    // Its chart runs to when it was found gone: the answers after its last renewal are on it.
    expect(read === undefined ? undefined : passSeriesEnd(read)).toBeGreaterThanOrEqual(seen + 2000);
  });
});

describe("the last pass's outcome", () => {
  it("when scheduled scans took no file after a failed run, then the run stays the last outcome until a pass takes files", async () => {
    const passes = new Passes(redis, testPrefix());
    const at = Date.now() - 3_600_000;
    const ended = (
      id: string,
      startedAt: number,
      kind: "run" | "scan",
      batches: string[],
      exitCode: number,
    ) =>
      passes.write({ id, kind, startedAt, endedAt: startedAt + 1000, batches, invoices: {}, exitCode }, DAY);
    await ended("failed-run", at, "run", ["b1"], 1);
    await ended("empty-1", at + 10_000, "scan", [], 0);
    await ended("empty-2", at + 20_000, "scan", [], 0);
    expect(await passes.lastOutcome()).toMatchObject({ id: "failed-run", exitCode: 1 });
    expect((await passes.newest(5)).map((p) => p.id)).toEqual(["empty-2", "empty-1", "failed-run"]);
    await ended("scan-with-files", at + 30_000, "scan", ["b2"], 0);
    expect(await passes.lastOutcome()).toMatchObject({ id: "scan-with-files", exitCode: 0 });
  });
});
