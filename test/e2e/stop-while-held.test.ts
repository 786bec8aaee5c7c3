import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { createRedis } from "../../src/queue/connection.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { cliEnv } from "../support/cli-env.js";
import { finish } from "../support/cli-run.js";
import { tempDropDir } from "../support/drop.js";
import { spawnNode, START_UP_MS, until } from "../support/processes.js";
import { testPrefix, testRedisUrl } from "../support/redis.js";

const API_KEY = "irs_live_test_key_0123456789";
const INVOICES = 120;
/**
 * Far more than any start and stop takes: a process that has not ended by then never would have
 * (it is killed, and the test says so).
 */
const NEVER_MS = 40_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function csv(dir: string): Promise<void> {
  const rows = Array.from({ length: INVOICES }, (_, i) => `HELD-${i},EUR,DE,eu-10y\r\n`);
  await writeFile(
    join(dir, "night.csv"),
    `external_id,currency,destination_country,archive_policy\r\n${rows.join("")}`,
  );
}

async function simulator(): Promise<SimulatorHandle> {
  const sim = await startSimulator({ apiKey: API_KEY, latencyMs: { min: 1, max: 3 } });
  cleanups.push(() => sim.close());
  return sim;
}

async function drop(): Promise<string> {
  const folder = await tempDropDir();
  cleanups.push(folder.cleanup);
  await csv(folder.dir);
  return folder.dir;
}

// The fleet's rate held at 1/s (SUBMIT_RATE_PER_SEC as its ceiling): most invoices wait for a send time
// far beyond SHUTDOWN_GRACE_MS, as they do under a long Retry-After.
const HELD = { SUBMIT_RATE_PER_SEC: "1", SUBMIT_RATE_START: "1", SHUTDOWN_GRACE_MS: "1000" };

describe("stopping while the fleet's rate holds invoices back", () => {
  it("when run's deadline passes and a worker is sent SIGTERM while invoices wait for their send time, then both end (run with exit 1), and the invoices not sent are still queued, none failed", async () => {
    const sim = await simulator();
    const prefix = testPrefix();
    const env = cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: await drop() },
      HELD,
    );
    const worker = spawnNode("workers/cli.js", ["worker"], env);
    cleanups.push(async () => {
      worker.child.kill("SIGKILL");
      await worker.exited;
    });

    const run = await finish(
      spawnNode("workers/cli.js", ["run", "--deadline", `${START_UP_MS + 3000}ms`], env),
      NEVER_MS,
    );
    expect(run.signal, run.output).toBeNull();
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/deadline passed with \d+ invoice\(s\) not final yet/);
    expect(run.output).not.toContain("Connection is closed");

    await until(() => Promise.resolve(sim.stats().effects.total > 0), NEVER_MS, "the worker to send");
    worker.child.kill("SIGTERM");
    const stopped = await finish(worker, NEVER_MS);
    expect(stopped.signal, stopped.output).toBeNull();
    expect(stopped.output).not.toContain("Connection is closed");

    const redis = createRedis(testRedisUrl(), "producer");
    cleanups.push(() => {
      redis.disconnect();
      return Promise.resolve();
    });
    const counts = await new RedisLedger(redis, prefix).counts();
    expect(counts.failed ?? 0).toBe(0);
    expect(counts.succeeded ?? 0).toBeLessThan(INVOICES);
    expect(sim.stats().effects.keysWithMultipleEffects).toBe(0);
  });

  it("when Redis goes away while invoices wait for their send time, then a worker sent SIGTERM still ends within its grace, without retrying the budget for ever", async () => {
    const redis = await RedisServer.start();
    cleanups.push(() => redis.dispose());
    const sim = await simulator();
    const env = cliEnv(
      { redisUrl: redis.url, apiUrl: sim.url, apiKey: API_KEY, name: "held", dropDir: await drop() },
      HELD,
    );
    const run = spawnNode("workers/cli.js", ["run", "--deadline", "60s"], env);
    const worker = spawnNode("workers/cli.js", ["worker"], env);
    cleanups.push(async () => {
      for (const p of [run, worker]) p.child.kill("SIGKILL");
      await Promise.all([run.exited, worker.exited]);
    });
    await until(() => Promise.resolve(sim.stats().effects.total >= 3), NEVER_MS, "the fleet to send");
    await redis.kill();
    await new Promise((r) => setTimeout(r, 1500));
    worker.child.kill("SIGTERM");
    const stopped = await finish(worker, NEVER_MS);
    expect(stopped.signal, stopped.output).toBeNull();
    // the budget's errors are said once per ten seconds at most, and none after the close
    expect(stopped.output.split("send budget in Redis did not answer").length - 1).toBeLessThanOrEqual(1);
  });
});
