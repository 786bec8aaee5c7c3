import { randomUUID } from "node:crypto";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../src/dev/free-port.js";
import { RedisServer } from "../../src/dev/redis-server.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { CSV_HEADER, csvRow, jsonRecord, sentAs } from "../support/bad-inputs.js";
import { finish, runCli, type CliResult } from "../support/cli-run.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { spawnNode, until } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";

const API_KEY = "irs_live_outage_e2e_key_0123456789";
const OUTAGE_MS = 12_000;
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
  return cliEnv(
    { redisUrl, apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: dir },
    {
      SUBMIT_CONCURRENCY: "4",
      LOCK_DURATION_MS: "2000",
      SHUTDOWN_GRACE_MS: "2000",
      BACKOFF_BASE_MS: "50",
      BACKOFF_CAP_MS: "500",
    },
  );
}

/** Whether some row of the file tagged `tag` (the first few of its keys) has reached the service. */
function submitting(tag: string): boolean {
  return Array.from({ length: 20 }, (_, i) => sentAs(jsonRecord(`${tag}-${i + 1}`)).key).some(
    (key) => sim.attempts(key).length > 0,
  );
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

/*
 * The three cases share one outage, to keep the file short: a run against a Redis that is not there,
 * and two runs submitting 1,500 invoices each (one without a deadline, one with --deadline 5s) while
 * Redis is stopped as an operator would stop it (SIGTERM: AOF flushed) and started again OUTAGE_MS later
 * on the same port and data. The deadline leaves a run started on a busy machine time to begin
 * submitting, and still passes well inside the outage: a run notices it only between Redis's reconnect
 * attempts (a few seconds) and then gives its worker the grace period.
 */
describe("Redis outages", () => {
  const downUrl = freePort().then((port) => `redis://127.0.0.1:${port}`);
  let down: CliResult;
  let downDir: string;
  let through: CliResult;
  let throughDir: string;
  let late: CliResult;
  let lateDir: string;
  let lateEnv: Record<string, string>;
  let lateExitedAt = 0;
  let redisBackAt = 0;

  beforeAll(async () => {
    downDir = await dropWithRows("down", 3);
    throughDir = await dropWithRows("mid", ROWS);
    lateDir = await dropWithRows("late", ROWS);
    lateEnv = envFor(lateDir, `outage-${randomUUID()}`);
    const downRun = runCli(["run"], envFor(downDir, `outage-${randomUUID()}`, await downUrl));
    const throughRun = finish(
      spawnNode("workers/cli.js", ["run"], envFor(throughDir, `outage-${randomUUID()}`)),
      50_000,
    );
    const lateRun = finish(spawnNode("workers/cli.js", ["run", "--deadline", "5s"], lateEnv), 50_000).then(
      (result) => {
        lateExitedAt = Date.now();
        return result;
      },
    );
    await until(
      () => Promise.resolve(submitting("mid") && submitting("late") && sim.stats().effects.total >= 300),
      30_000,
      "both runs submitting",
    );
    const outage = redis.restart({ downMs: OUTAGE_MS }).then(() => {
      redisBackAt = Date.now();
    });
    [down, through, late] = await Promise.all([downRun, throughRun, lateRun]);
    await outage;
  }, 60_000);

  it("when Redis is down at start, then run exits 1 within seconds naming the Redis URL and what to do, with no stack trace and nothing claimed", async () => {
    expect(down.code, down.output).toBe(1);
    expect(down.ms).toBeLessThan(15_000);
    expect(down.output).toContain(`invoice-relay: Redis at ${await downUrl} is unreachable`);
    expect(down.output).toContain("Check REDIS_URL");
    expect(down.output).not.toMatch(/\n\s+at |Unhandled/);
    // the relay's own subfolders may be made before Redis is asked; the file stays where it was, unclaimed
    expect((await readdir(downDir)).filter((name) => name.endsWith(".csv"))).toEqual(["down.csv"]);
    expect(await readdir(join(downDir, "processing")).catch(() => [])).toEqual([]);
  });

  it("when Redis goes away for 12 s while run is submitting, then run reconnects by itself and exits 0 with every row succeeded once", async () => {
    expect(through.code, through.output.slice(-3000)).toBe(0);
    expect(through.ms).toBeGreaterThan(OUTAGE_MS);
    expect(through.output).toMatch(/Redis[^\n]*unreachable/);
    expect(through.output).not.toMatch(/Unhandled error event|triggerUncaughtException/);
    await expectAllSucceededOnce(throughDir);
  });

  it("when the deadline passes while Redis is away, then run exits 1, and once Redis is back the next run finishes every row once", async () => {
    expect(late.code, late.output.slice(-3000)).toBe(1);
    expect(lateExitedAt).toBeLessThan(redisBackAt);
    expect(late.output).toMatch(/deadline passed[^\n]*the next run continues them/);
    expect(late.output).not.toMatch(/Unhandled error event|triggerUncaughtException/);
    expect(await readdir(join(lateDir, "processing"))).toHaveLength(1);

    const next = await runCli(["run"], lateEnv, 30_000);
    expect(next.code, next.output.slice(-3000)).toBe(0);
    await expectAllSucceededOnce(lateDir);
  });
});
