import { randomUUID } from "node:crypto";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { tempDropDir } from "../support/drop.js";
import { spawnNode, until } from "../support/processes.js";
import { testRedis } from "../support/redis.js";
import { cliEnv } from "../support/cli-env.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const ROWS = 200_000;
let sim: SimulatorHandle;

beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 29 });
});
afterAll(async () => {
  await sim.close();
});

describe("run stopped while it ingests a large file", () => {
  it("when SIGTERM arrives during ingest, then run stops between chunks, exits 1 saying the next run resumes the file, and leaves it in processing/", async () => {
    const drop = await tempDropDir();
    const redis = testRedis();
    try {
      const rows = Array.from({ length: ROWS }, (_, i) => `T-${i},EUR,DE,eu-10y`);
      await writeFile(
        join(drop.dir, "large.csv"),
        ["external_id,currency,destination_country,archive_policy", ...rows].join("\n"),
      );
      const prefix = `sigterm-${randomUUID()}`;
      const batches = new BatchStore(redis, prefix);
      const run = spawnNode(
        "workers/cli.js",
        ["run"],
        cliEnv({ apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: drop.dir }),
      );
      const registered = async () => {
        const [id] = await batches.list();
        if (id === undefined) return 0;
        return Number((await redis.hget(batches.names.batch(id), "registered_line")) ?? 0);
      };
      await until(async () => (await registered()) > 0, 30_000, "the first rows registered");
      run.child.kill("SIGTERM");

      const { code } = await run.exited;
      expect(code, run.output()).toBe(1);
      expect(run.output()).toMatch(/interrupted while ingesting large\.csv: it stays in processing\//);
      expect(await registered()).toBeLessThan(ROWS + 1);
      const [id] = await batches.list();
      expect((await batches.require(id ?? "")).state).toBe("ingesting");
      expect(await readdir(join(drop.dir, "processing"))).toEqual([`${id ?? ""}--large.csv`]);
    } finally {
      redis.disconnect();
      await drop.cleanup();
    }
  });
});
