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
  sim = await startSimulator({ apiKey: API_KEY, seed: 13, latencyMs: { min: 2, max: 10 } });
});
afterAll(async () => {
  await sim.close();
  await redis.dispose();
});

describe("run killed mid-file", () => {
  it("when run is killed with SIGKILL mid-file and run again, then it exits 0, every row succeeded once and processing/ is empty", async () => {
    const drop = await tempDropDir();
    try {
      const rows = Array.from({ length: 3000 }, (_, i) => `C-${i},EUR,DE,eu-10y`);
      await writeFile(
        join(drop.dir, "crash.csv"),
        ["external_id,currency,destination_country,archive_policy", ...rows].join("\n"),
      );
      const env = cliEnv(
        { redisUrl: redis.url, apiUrl: sim.url, apiKey: API_KEY, name: "crash", dropDir: drop.dir },
        { LOCK_DURATION_MS: "2000" },
      );
      const first = spawnNode("workers/cli.js", ["run"], env);
      await until(() => Promise.resolve(sim.stats().effects.total >= 500), 30_000, "500 effects");
      first.child.kill("SIGKILL");
      await first.exited;
      // killed mid-pass: its file is still claimed, whatever number of invoices went out before
      expect(await readdir(join(drop.dir, "processing"))).toHaveLength(1);

      const second = spawnNode("workers/cli.js", ["run"], env);
      const { code } = await second.exited;
      expect(code, second.output()).toBe(0);
      const report = [...(await readReports(drop.dir)).values()][0];
      expect(report?.rows).toHaveLength(3000);
      expect(report?.rows.filter((r) => r.status !== "succeeded")).toEqual([]);
      expect(sim.stats().effects).toMatchObject({ total: 3000, keysWithMultipleEffects: 0 });
      expect(await readdir(join(drop.dir, "processing"))).toEqual([]);
    } finally {
      await drop.cleanup();
    }
  });
});
