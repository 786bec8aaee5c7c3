import { randomUUID } from "node:crypto";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { runCli } from "../support/cli-run.js";
import { tempDropDir } from "../support/drop.js";
import { cliEnv } from "../support/cli-env.js";

// A private Redis: these tests change its maxmemory-policy, which the shared one must never see.
const API_KEY = "irs_live_e2e_key_0123456789";
const CSV = "external_id,currency,destination_country,archive_policy\nEV-1,EUR,DE,eu-10y\n";
let redis: RedisServer;
let admin: Redis;
let sim: SimulatorHandle;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  redis = await RedisServer.start();
  admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  sim = await startSimulator({ apiKey: API_KEY, seed: 3 });
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await admin.config("SET", "maxmemory-policy", "noeviction");
});
afterAll(async () => {
  admin.disconnect();
  await sim.close();
  await redis.dispose();
});

async function dropWithOneFile(policy: string) {
  await admin.config("SET", "maxmemory-policy", policy);
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  await writeFile(join(drop.dir, "evict.csv"), CSV);
  const prefix = `evict-${randomUUID()}`;
  const env = cliEnv({
    redisUrl: redis.url,
    apiUrl: sim.url,
    apiKey: API_KEY,
    queuePrefix: prefix,
    dropDir: drop.dir,
  });
  return { dir: drop.dir, prefix, env };
}

async function keysUnder(prefix: string): Promise<string[]> {
  return admin.keys(`${prefix}:*`);
}

/** What a refused command must have left: the file unclaimed at the top, nothing in Redis. */
async function expectNothingClaimed(dir: string, prefix: string): Promise<void> {
  expect(await readdir(dir)).toContain("evict.csv");
  const processing = await readdir(join(dir, "processing")).catch(() => []);
  expect(processing).toEqual([]);
  expect(await keysUnder(prefix)).toEqual([]);
}

describe("a Redis that may evict keys", () => {
  it.each([["run"], ["ingest"], ["worker"], ["retry"], ["start", "--watch"]])(
    "when maxmemory-policy is allkeys-lru, then `%s` exits 1 naming the policy and the fix, and claims nothing",
    async (...args: string[]) => {
      const { dir, prefix, env } = await dropWithOneFile("allkeys-lru");
      // A command that ignored the policy would keep running (worker, start): the limit ends it.
      const result = await runCli(args, env, 15_000);
      expect(result.code, result.output).toBe(1);
      expect(result.output).toContain("maxmemory-policy is allkeys-lru");
      expect(result.output).toContain("CONFIG SET maxmemory-policy noeviction");
      expect(result.output).toContain("ALLOW_EVICTING_REDIS");
      await expectNothingClaimed(dir, prefix);
    },
  );

  it("when maxmemory-policy is volatile-lru, then run exits 1 too and claims nothing", async () => {
    const { dir, prefix, env } = await dropWithOneFile("volatile-lru");
    const result = await runCli(["run"], env);
    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain("maxmemory-policy is volatile-lru");
    await expectNothingClaimed(dir, prefix);
  });

  it("when ALLOW_EVICTING_REDIS=true, then run goes ahead with a warning and sends the invoice", async () => {
    const { dir, env } = await dropWithOneFile("allkeys-lru");
    const before = sim.stats().effects.total;
    const result = await runCli(["run"], { ...env, ALLOW_EVICTING_REDIS: "true" });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain("maxmemory-policy is allkeys-lru");
    expect(result.output).toContain("ALLOW_EVICTING_REDIS=true");
    expect(sim.stats().effects.total - before).toBe(1);
    expect(await readdir(dir)).not.toContain("evict.csv");
  });

  it("when maxmemory-policy is allkeys-lru, then the read-only status still answers, with a warning", async () => {
    const { env } = await dropWithOneFile("allkeys-lru");
    const result = await runCli(["status", "--json"], env);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain("maxmemory-policy is allkeys-lru");
    expect(result.output).toContain("queue_prefix");
  });
});
