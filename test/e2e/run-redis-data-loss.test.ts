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
  // No AOF, no snapshots: a restart comes back empty, as a Redis without persistence (or a failover to
  // a replica that had not caught up) does.
  redis = await RedisServer.start({ aof: false });
  sim = await startSimulator({ apiKey: API_KEY, seed: 23, latencyMs: { min: 20, max: 40 } });
});
afterAll(async () => {
  await sim.close();
  await redis.dispose();
});

describe("run while Redis loses its data", () => {
  it("when Redis restarts empty in the middle of a run, then the batch is ingested again with the same keys, run exits 0 with every row reported once, and the next run is clean", async () => {
    const drop = await tempDropDir();
    try {
      const rows = Array.from({ length: 1500 }, (_, i) => `L-${i},EUR,DE,eu-10y`);
      await writeFile(
        join(drop.dir, "loss.csv"),
        ["external_id,currency,destination_country,archive_policy", ...rows].join("\n"),
      );
      const env = cliEnv(
        { redisUrl: redis.url, apiUrl: sim.url, apiKey: API_KEY, name: "loss", dropDir: drop.dir },
        { LOCK_DURATION_MS: "2000", SUBMIT_CONCURRENCY: "8" },
      );
      const run = spawnNode("workers/cli.js", ["run", "--deadline", "2m"], env);
      await until(() => Promise.resolve(sim.stats().effects.total >= 300), 30_000, "300 effects");
      await redis.restart({ downMs: 500 });

      const { code } = await run.exited;
      expect(code, run.output()).toBe(0);
      expect(run.output()).toContain("has no batch in Redis");
      const report = [...(await readReports(drop.dir)).values()][0];
      expect(report?.rows).toHaveLength(1500);
      const notSucceeded = report?.rows.filter((r) => r.status !== "succeeded") ?? [];
      expect(notSucceeded).toEqual([]);
      expect(sim.stats().effects).toMatchObject({ total: 1500, keysWithMultipleEffects: 0 });
      expect(await readdir(join(drop.dir, "processing"))).toEqual([]);

      const next = spawnNode("workers/cli.js", ["run", "--deadline", "30s"], env);
      const after = await next.exited;
      expect(after.code, next.output()).toBe(0);
      expect(next.output()).toContain("nothing to do");
    } finally {
      await drop.cleanup();
    }
  });
});
