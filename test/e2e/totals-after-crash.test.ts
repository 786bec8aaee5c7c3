import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { readFleetTotals } from "../../src/ledger/fleet-counts.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { cliEnv } from "../support/cli-env.js";
import { tempDropDir } from "../support/drop.js";
import { startGate } from "../support/gate.js";
import { spawnNode } from "../support/processes.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const ROWS = 400;
/** Answered before the kill: many answers within the last second, the span a process once kept counts in memory. */
const ANSWERED_BEFORE_KILL = 150;
/** Answered before the kill; then the service slows down, and the kill comes with IN_FLIGHT requests unanswered. */
const SUCCEEDED_BEFORE_KILL = 40;
/** SUBMIT_CONCURRENCY, all of it in use at LATENCY: with this many in flight, none goes until one is answered. */
const IN_FLIGHT = 6;
const LATENCY = { min: 250, max: 350 };
/** The service's latency once slowed: far longer than the kill takes, so none is answered or sent meanwhile. */
const SLOW_MS = 5_000;
let redis: RedisServer;
let sim: SimulatorHandle;
let slow: SimulatorHandle;

beforeAll(async () => {
  redis = await RedisServer.start({ aof: true });
  sim = await startSimulator({ apiKey: API_KEY, seed: 7 });
  slow = await startSimulator({ apiKey: API_KEY, seed: 11, latencyMs: LATENCY });
});
afterAll(async () => {
  await slow.close();
  await sim.close();
  await redis.dispose();
});

/** A file of `rows` invoices in the drop folder. */
async function dropRows(dir: string, rows: number): Promise<void> {
  const lines = Array.from({ length: rows }, (_, i) => `T-${i},EUR,DE,eu-10y`);
  await writeFile(
    join(dir, "totals.csv"),
    ["external_id,currency,destination_country,archive_policy", ...lines].join("\n"),
  );
}

/** Polls `check` every few milliseconds: the kill must follow the last recorded answer closely. */
async function soon(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("the fleet's totals after a crash", () => {
  it("when run is killed with SIGKILL right after answers are recorded and run again, then the totals equal the ledger's counts and the requests the service saw", async () => {
    const drop = await tempDropDir();
    const gate = await startGate(sim.url, { passFirst: ANSWERED_BEFORE_KILL });
    const client = new Redis(redis.url);
    try {
      await dropRows(drop.dir, ROWS);
      const env = cliEnv(
        { redisUrl: redis.url, apiUrl: gate.url, apiKey: API_KEY, name: "totals", dropDir: drop.dir },
        { LOCK_DURATION_MS: "2000" },
      );
      const prefix = env["QUEUE_PREFIX"] ?? "";
      const ledger = new RedisLedger(client, prefix);
      const first = spawnNode("workers/cli.js", ["run"], env);
      // Every answer the service gave is recorded; the requests after them are held, never sent on.
      await soon(
        async () => (await ledger.counts()).succeeded >= ANSWERED_BEFORE_KILL,
        `${ANSWERED_BEFORE_KILL} answers recorded`,
      );
      first.child.kill("SIGKILL");
      await first.exited;
      await soon(() => Promise.resolve(gate.held() === 0), "the killed process's requests dropped");
      expect(sim.stats().requests.total).toBe(ANSWERED_BEFORE_KILL);
      gate.open();

      const second = spawnNode("workers/cli.js", ["run"], env);
      expect((await second.exited).code, second.output()).toBe(0);
      const totals = await readFleetTotals(client, prefix);
      const counts = await ledger.counts();
      const stats = sim.stats();
      expect(counts.succeeded).toBe(ROWS);
      expect(stats.effects).toMatchObject({ total: ROWS, keysWithMultipleEffects: 0 });
      expect(totals.final).toEqual({ succeeded: counts.succeeded, failed: counts.failed });
      const requestsCounted = Object.values(totals.attempts).reduce((a, b) => a + b, 0);
      expect(requestsCounted).toBe(stats.requests.total);
      expect(totals.attempts["2xx"]).toBe(stats.requests.byStatus["201"] ?? 0);
    } finally {
      client.disconnect();
      await gate.close();
      await drop.cleanup();
    }
  });

  it("when run is killed with SIGKILL while requests are in flight, then the requests counted equal those the service received, and stay so after the next run", async () => {
    const drop = await tempDropDir();
    const client = new Redis(redis.url);
    try {
      await dropRows(drop.dir, ROWS);
      const env = cliEnv(
        { redisUrl: redis.url, apiUrl: slow.url, apiKey: API_KEY, name: "in-flight", dropDir: drop.dir },
        { LOCK_DURATION_MS: "2000", SUBMIT_CONCURRENCY: String(IN_FLIGHT) },
      );
      const prefix = env["QUEUE_PREFIX"] ?? "";
      const ledger = new RedisLedger(client, prefix);
      const first = spawnNode("workers/cli.js", ["run"], env);
      await soon(
        async () => (await ledger.counts()).succeeded >= SUCCEEDED_BEFORE_KILL,
        `${SUCCEEDED_BEFORE_KILL} answers recorded`,
      );
      slow.setFaults({ latencyMs: { min: SLOW_MS, max: SLOW_MS } });
      await soon(
        () => Promise.resolve(slow.stats().inFlight === IN_FLIGHT),
        `${IN_FLIGHT} requests in flight`,
      );
      first.child.kill("SIGKILL");
      await first.exited;
      slow.setFaults({ latencyMs: LATENCY });
      const killed = await readFleetTotals(client, prefix);
      const answered = Object.values(killed.attempts).reduce((a, b) => a + b, 0);
      expect(killed.sent - answered, "requests in flight at the kill").toBeGreaterThanOrEqual(IN_FLIGHT);
      expect(killed.sent).toBe(slow.stats().requests.total);

      const second = spawnNode("workers/cli.js", ["run"], { ...env, SUBMIT_CONCURRENCY: "64" });
      expect((await second.exited).code, second.output()).toBe(0);
      const totals = await readFleetTotals(client, prefix);
      expect((await ledger.counts()).succeeded).toBe(ROWS);
      expect(totals.sent).toBe(slow.stats().requests.total);
      expect(totals.final.succeeded).toBe(ROWS);
    } finally {
      client.disconnect();
      await drop.cleanup();
    }
  });
});
