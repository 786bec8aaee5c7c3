import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { spawnNode, until } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";

const API_KEY = "irs_live_e2e_key_0123456789";
let redis: RedisServer;
let sim: SimulatorHandle;

beforeAll(async () => {
  redis = await RedisServer.start({ aof: true });
  sim = await startSimulator({ apiKey: API_KEY, seed: 17, latencyMs: { min: 20, max: 40 } });
});
afterAll(async () => {
  await sim.close();
  await redis.dispose();
});

describe("run while Redis restarts", () => {
  it("when Redis is down for 2 s while run waits for its invoices, then run waits it out, exits 0 and every row took effect once", async () => {
    const drop = await tempDropDir();
    try {
      const rows = Array.from({ length: 1500 }, (_, i) => `R-${i},EUR,DE,eu-10y`);
      await writeFile(
        join(drop.dir, "outage.csv"),
        ["external_id,currency,destination_country,archive_policy", ...rows].join("\n"),
      );
      const run = spawnNode(
        "workers/cli.js",
        ["run", "--deadline", "2m"],
        cliEnv(
          { redisUrl: redis.url, apiUrl: sim.url, apiKey: API_KEY, name: "outage", dropDir: drop.dir },
          { LOCK_DURATION_MS: "2000", SUBMIT_CONCURRENCY: "8" },
        ),
      );
      await until(() => Promise.resolve(sim.stats().effects.total >= 300), 30_000, "300 effects");
      // SIGTERM keeps the AOF whole; the 2 s down is what a real restart or failover takes.
      await redis.restart({ downMs: 2000 });

      const { code } = await run.exited;
      expect(code, run.output()).toBe(0);
      expect(run.output()).toContain("Redis is unreachable; waiting for it to come back");
      const report = [...(await readReports(drop.dir)).values()][0];
      expect(report?.rows).toHaveLength(1500);
      expect(report?.rows.filter((r) => r.status !== "succeeded")).toEqual([]);
      expect(sim.stats().effects).toMatchObject({ total: 1500, keysWithMultipleEffects: 0 });
      expect(await readdir(join(drop.dir, "processing"))).toEqual([]);
    } finally {
      await drop.cleanup();
    }
  });
});
