import { randomUUID } from "node:crypto";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, RedisServer } from "../../src/dev/redis-server.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { CSV_HEADER, csvRow } from "../support/bad-inputs.js";
import { finish, runCli } from "../support/cli-run.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { spawnNode, until } from "../support/processes.js";

const API_KEY = "irs_live_outage_e2e_key_0123456789";
const OUTAGE_MS = 10_000;
const ROWS = 1500;
let redis: RedisServer;
let sim: SimulatorHandle;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  redis = await RedisServer.start({ aof: true });
  // Some latency, so that submitting the file takes a few seconds and the outage falls inside it.
  sim = await startSimulator({ apiKey: API_KEY, seed: 17, latencyMs: { min: 4, max: 8 } });
  cleanups.push(
    () => redis.dispose(),
    () => sim.close(),
  );
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function dropWithRows(tag: string, rows: number): Promise<string> {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  const lines = Array.from({ length: rows }, (_, i) => csvRow(`${tag}-${i + 1}`));
  await writeFile(join(drop.dir, `${tag}.csv`), [CSV_HEADER, ...lines, ""].join("\n"));
  return drop.dir;
}

function envFor(dir: string, prefix: string, redisUrl = redis.url): Record<string, string> {
  return {
    REDIS_URL: redisUrl,
    INVOICE_API_URL: sim.url,
    INVOICE_API_KEY: API_KEY,
    QUEUE_PREFIX: prefix,
    DROP_DIR: dir,
    SETTLE_MS: "0",
    LOG_LEVEL: "warn",
    SUBMIT_CONCURRENCY: "4",
    LOCK_DURATION_MS: "2000",
    SHUTDOWN_GRACE_MS: "2000",
    BACKOFF_BASE_MS: "50",
    BACKOFF_CAP_MS: "500",
  };
}

/**
 * Once `effects` more invoices have reached the service, Redis is stopped as an operator would (SIGTERM:
 * AOF flushed) and started again OUTAGE_MS later on the same port and data.
 */
async function outageAfter(effects: number): Promise<void> {
  const target = sim.stats().effects.total + effects;
  await until(() => Promise.resolve(sim.stats().effects.total >= target), 30_000, `${effects} effects`);
  await redis.restart({ downMs: OUTAGE_MS });
}

/** Every row of the drop folder's one report succeeded, and the service saw each of its keys take effect once. */
async function expectAllSucceededOnce(dir: string): Promise<void> {
  const report = [...(await readReports(dir)).values()][0];
  expect(report?.rows).toHaveLength(ROWS);
  expect(report?.rows.filter((r) => r.status !== "succeeded")).toEqual([]);
  for (const row of report?.rows ?? []) {
    expect(sim.attempts(row.idempotency_key).filter((a) => a.outcome === "effect")).toHaveLength(1);
  }
  expect(await readdir(join(dir, "processing"))).toEqual([]);
  expect(await readdir(join(dir, "archive"))).toHaveLength(1);
}

describe("Redis outages", () => {
  it("when Redis is down at start, then run exits 1 within seconds naming the Redis URL and what to do, with no stack trace and nothing claimed", async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const dir = await dropWithRows("down", 3);
    const result = await runCli(["run"], envFor(dir, `outage-${randomUUID()}`, url));
    expect(result.code, result.output).toBe(1);
    expect(result.ms).toBeLessThan(15_000);
    expect(result.output).toContain(`invoice-relay: Redis at ${url} is unreachable`);
    expect(result.output).toContain("Check REDIS_URL");
    expect(result.output).not.toMatch(/\n\s+at |Unhandled/);
    expect(await readdir(dir)).toEqual(["down.csv"]);
  });

  it("when Redis goes away for 10 s while run is submitting, then run reconnects by itself and exits 0 with every row succeeded once", async () => {
    const dir = await dropWithRows("mid", ROWS);
    const before = sim.stats().effects.total;
    const run = finish(spawnNode("workers/cli.js", ["run"], envFor(dir, `outage-${randomUUID()}`)), 50_000);
    await outageAfter(200);
    const result = await run;
    expect(result.code, result.output.slice(-3000)).toBe(0);
    expect(result.output).toMatch(/Redis[^\n]*unreachable/);
    expect(result.output).not.toMatch(/Unhandled error event|triggerUncaughtException/);
    await expectAllSucceededOnce(dir);
    expect(sim.stats().effects.total - before).toBe(ROWS);
  }, 60_000);

  it("when the deadline passes while Redis is away, then run exits 1, and once Redis is back the next run finishes every row once", async () => {
    const dir = await dropWithRows("late", ROWS);
    const env = envFor(dir, `outage-${randomUUID()}`);
    const before = sim.stats().effects.total;
    const late = finish(spawnNode("workers/cli.js", ["run", "--deadline", "3s"], env), 50_000);
    const outage = outageAfter(200);
    const first = await late;
    expect(first.code, first.output.slice(-3000)).toBe(1);
    expect(first.output).toMatch(/deadline passed[^\n]*the next run continues them/);
    expect(first.output).not.toMatch(/Unhandled error event|triggerUncaughtException/);
    await outage;
    expect(await readdir(join(dir, "processing"))).toHaveLength(1);

    const second = await runCli(["run"], env, 30_000);
    expect(second.code, second.output.slice(-3000)).toBe(0);
    await expectAllSucceededOnce(dir);
    expect(sim.stats().effects.total - before).toBe(ROWS);
  }, 60_000);
});
