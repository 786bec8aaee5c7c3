import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LedgerNames } from "../../src/ledger/names.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { createRedis } from "../../src/queue/connection.js";
import { startSimulator } from "../../src/simulator/index.js";
import { parseRateState } from "../../src/capacity/index.js";
import { cliEnv } from "../support/cli-env.js";
import { finish } from "../support/cli-run.js";
import { tempDropDir } from "../support/drop.js";
import { spawnNode, until, type Spawned } from "../support/processes.js";
import { testPrefix, testRedisUrl } from "../support/redis.js";

const API_KEY = "irs_live_test_key_0123456789";
// Enough to be sending through all three replacements; few enough that a fleet slow to find the
// capacity again still routes the rest within the deadline: speed is the benchmark's to judge.
const INVOICES = 300;
const CAPACITY = 60;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the learned rate's state lost or garbled mid-night", () => {
  it("when the state is deleted and then garbled while run and a worker submit, then a process replaces it each time, and every invoice is routed once, none failed", async () => {
    const sim = await startSimulator({
      apiKey: API_KEY,
      latencyMs: { min: 5, max: 15 },
      capacity: { ratePerSec: CAPACITY, burst: 6, maxInFlight: 64, latencyAtCapacityMs: 10 },
    });
    cleanups.push(() => sim.close());
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    const rows = Array.from({ length: INVOICES }, (_, i) => `LOST-${i},EUR,DE,eu-10y\r\n`);
    await writeFile(
      join(drop.dir, "night.csv"),
      `external_id,currency,destination_country,archive_policy\r\n${rows.join("")}`,
    );
    const prefix = testPrefix();
    const env = cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: drop.dir },
      { MAX_ATTEMPTS: "2", SUBMIT_RATE_START: "20" },
    );
    const worker: Spawned = spawnNode("workers/cli.js", ["worker"], env);
    cleanups.push(async () => {
      worker.child.kill("SIGTERM");
      await worker.exited;
    });
    const redis = createRedis(testRedisUrl(), "producer");
    cleanups.push(() => {
      redis.disconnect();
      return Promise.resolve();
    });
    const budget = new LedgerNames(prefix).sendBudget;
    const trusted = async (): Promise<boolean> => {
      const [[state, hold], time] = await Promise.all([redis.hmget(budget, "state", "hold"), redis.time()]);
      const now = Number(time[0]) * 1000;
      return typeof state === "string" && parseRateState(state, now, Number(hold ?? 0)) !== undefined;
    };
    const replaced: string[] = [];
    const tamper = async (): Promise<void> => {
      const effects = () => Promise.resolve(sim.stats().effects.total);
      await until(async () => (await effects()) >= INVOICES / 4, 120_000, "a quarter routed");
      await redis.del(budget);
      await until(trusted, 10_000, "the deleted state replaced");
      replaced.push("deleted");
      await until(async () => (await effects()) >= INVOICES / 2, 120_000, "half routed");
      await redis.hset(budget, "state", JSON.stringify({ version: 1, rate: -5, at: 0, max: 0 }));
      await until(trusted, 10_000, "the out-of-range state replaced");
      replaced.push("out of range");
      await redis.hset(budget, "state", "{garbled");
      await until(trusted, 10_000, "the garbled state replaced");
      replaced.push("garbled");
    };

    const [result] = await Promise.all([
      finish(spawnNode("workers/cli.js", ["run", "--deadline", "150s"], env), 160_000),
      tamper(),
    ]);

    expect(result.code, result.output).toBe(0);
    expect(replaced).toEqual(["deleted", "out of range", "garbled"]);
    expect(sim.stats().effects).toMatchObject({
      total: INVOICES,
      distinctKeys: INVOICES,
      keysWithMultipleEffects: 0,
    });
    expect(await new RedisLedger(redis, prefix).counts()).toMatchObject({ succeeded: INVOICES, failed: 0 });
    // Ten seconds of the service's capacity, about twenty alone on this machine: room for a busy one.
  }, 200_000);
});
