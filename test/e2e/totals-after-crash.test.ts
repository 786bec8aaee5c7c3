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
let redis: RedisServer;
let sim: SimulatorHandle;

beforeAll(async () => {
  redis = await RedisServer.start({ aof: true });
  sim = await startSimulator({ apiKey: API_KEY, seed: 7 });
});
afterAll(async () => {
  await sim.close();
  await redis.dispose();
});

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
      const rows = Array.from({ length: ROWS }, (_, i) => `T-${i},EUR,DE,eu-10y`);
      await writeFile(
        join(drop.dir, "totals.csv"),
        ["external_id,currency,destination_country,archive_policy", ...rows].join("\n"),
      );
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
});
