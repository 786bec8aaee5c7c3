import { randomUUID } from "node:crypto";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { runCli } from "../support/cli-run.js";
import { tempDropDir } from "../support/drop.js";
import { testRedis } from "../support/redis.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const CSV = "external_id,currency,destination_country,archive_policy\nLAY-1,EUR,DE,eu-10y\n";
let redis: Redis;
let sim: SimulatorHandle;
const cleanups = cleanupsAfterEach();

beforeAll(async () => {
  redis = testRedis();
  sim = await startSimulator({ apiKey: API_KEY, seed: 5 });
});
afterAll(async () => {
  await redis.quit();
  await sim.close();
});

async function setup() {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  await writeFile(join(drop.dir, "night.csv"), CSV);
  const prefix = `layout-${randomUUID()}`;
  const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: drop.dir });
  return { dir: drop.dir, prefix, env };
}

describe("a ledger written in the earlier three-key layout", () => {
  it("when the prefix holds results in the earlier layout, then run, ingest, worker and retry exit 1 saying how to upgrade, and status only warns", async () => {
    const s = await setup();
    // what the earlier layout leaves: a batch whose hash holds its pending count, a result record as a hash
    await redis.zadd(`${s.prefix}:relay:batches`, Date.now(), "20261101T020000Z-0a1b2c");
    await redis.hset(
      `${s.prefix}:relay:batch:20261101T020000Z-0a1b2c`,
      "id",
      "20261101T020000Z-0a1b2c",
      ...["file", "old.csv", "format", "csv", "path", "/drop/archive/old.csv", "state", "reported"],
      ...["created_at", String(Date.now()), "pending", "0"],
    );
    await redis.hset(`${s.prefix}:relay:counts`, "succeeded", "1");
    await redis.hset(`${s.prefix}:relay:r:${randomUUID()}`, "status", "succeeded", "external_id", "OLD-1");
    for (const args of [["run"], ["ingest"], ["worker"], ["retry"]]) {
      const result = await runCli(args, s.env, 15_000);
      expect(result.code, `${args.join(" ")}: ${result.output}`).toBe(1);
      expect(result.output).toContain("holds results written in the earlier ledger layout");
      expect(result.output).toContain("Upgrading from the three-key layout");
    }
    expect(await readdir(s.dir)).toContain("night.csv");
    expect(await redis.keys(`${s.prefix}:invoices:*`)).toEqual([]);
    const status = await runCli(["status"], s.env, 15_000);
    expect(status.code, status.output).toBe(0);
    expect(status.output).toContain("holds results in the earlier ledger layout");
  });

  it("when the prefix holds this version's ledger, then run goes ahead, again and again", async () => {
    const s = await setup();
    const result = await runCli(["run"], s.env, 60_000);
    expect(result.code, result.output).toBe(0);
    await writeFile(join(s.dir, "night2.csv"), CSV.replace("LAY-1", "LAY-2"));
    const again = await runCli(["run"], s.env, 60_000);
    expect(again.code, again.output).toBe(0);
    expect(again.output).not.toContain("earlier ledger layout");
  });
});
