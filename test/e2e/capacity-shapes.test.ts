import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Passes } from "../../src/ledger/passes.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { createRedis } from "../../src/queue/connection.js";
import { startSimulator, type SimulatorOptions } from "../../src/simulator/index.js";
import { cliEnv } from "../support/cli-env.js";
import { finish } from "../support/cli-run.js";
import { tempDropDir } from "../support/drop.js";
import { spawnNode, type Spawned } from "../support/processes.js";
import { testPrefix, testRedisUrl } from "../support/redis.js";

const API_KEY = "irs_live_test_key_0123456789";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * `run` and two workers send `invoices` to a simulator with `capacity`, MAX_ATTEMPTS 1 (were a refusal
 * for capacity an attempt, the invoice it refused would end failed); what the simulator, the ledger and
 * the run's pass record (its fleet-wide count of refusals) saw.
 */
async function night(invoices: number, capacity: SimulatorOptions["capacity"]) {
  const sim = await startSimulator({ apiKey: API_KEY, latencyMs: { min: 5, max: 15 }, capacity });
  cleanups.push(() => sim.close());
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  const rows = Array.from({ length: invoices }, (_, i) => `SHAPE-${i},EUR,DE,eu-10y\r\n`);
  await writeFile(
    join(drop.dir, "night.csv"),
    `external_id,currency,destination_country,archive_policy\r\n${rows.join("")}`,
  );
  const prefix = testPrefix();
  const env = cliEnv(
    { apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: drop.dir },
    { MAX_ATTEMPTS: "1", SUBMIT_RATE_START: "10" },
  );
  const workers: Spawned[] = [
    spawnNode("workers/cli.js", ["worker"], env),
    spawnNode("workers/cli.js", ["worker"], env),
  ];
  cleanups.push(async () => {
    for (const w of workers) w.child.kill("SIGTERM");
    await Promise.all(workers.map((w) => w.exited));
  });
  const result = await finish(spawnNode("workers/cli.js", ["run", "--deadline", "300s"], env), 300_000);
  const redis = createRedis(testRedisUrl(), "producer");
  cleanups.push(() => {
    redis.disconnect();
    return Promise.resolve();
  });
  const [pass] = await new Passes(redis, prefix).newest(1);
  return { result, stats: sim.stats(), counts: await new RedisLedger(redis, prefix).counts(), pass };
}

describe("a fleet against the shapes of limit real services have", () => {
  it("when the service has quota windows (10 a second and 30 in 5 s at once) with Retry-After the seconds until a slot frees, then every invoice is routed once, none fails, and the fleet holds rather than hammering each window's edge", async () => {
    const invoices = 90;
    const { result, stats, counts } = await night(invoices, {
      ratePerSec: 10_000,
      burst: 10_000,
      maxInFlight: 64,
      latencyAtCapacityMs: 0,
      windows: [
        { limit: 10, seconds: 1 },
        { limit: 30, seconds: 5 },
      ],
    });
    expect(result.code, result.output).toBe(0);
    expect(stats.effects).toMatchObject({
      total: invoices,
      distinctKeys: invoices,
      keysWithMultipleEffects: 0,
    });
    expect(counts).toMatchObject({ succeeded: invoices, failed: 0 });
    expect(stats.capacity.refused).toBeGreaterThan(0); // the windows did bite
    // a fleet that went on sending through each window's rest would be refused about once per invoice
    expect(stats.capacity.refused).toBeLessThan(invoices / 3);
  });

  it("when the service sheds load with 503 and Retry-After, then the refusals inform the rate like 429s and spend no attempt: every invoice succeeds, none fails", async () => {
    const invoices = 300;
    const { result, stats, counts, pass } = await night(invoices, {
      ratePerSec: 40,
      burst: 4,
      maxInFlight: 64,
      latencyAtCapacityMs: 10,
      refuseWith: 503,
    });
    expect(result.code, result.output).toBe(0);
    expect(stats.requests.byStatus["503"] ?? 0).toBeGreaterThan(0);
    expect(stats.effects).toMatchObject({
      total: invoices,
      distinctKeys: invoices,
      keysWithMultipleEffects: 0,
    });
    expect(counts).toMatchObject({ succeeded: invoices, failed: 0 });
    // counted fleet-wide as refusals for capacity, which is what the learned rate is cut by
    expect(pass?.refused ?? 0).toBeGreaterThan(0);
  });
});
