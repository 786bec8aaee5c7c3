import { readdir, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { spawnNode, until } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const HEADER = "external_id,currency,destination_country,archive_policy";
let redis: RedisServer;
let sim: SimulatorHandle;

beforeAll(async () => {
  redis = await RedisServer.start({ aof: true });
  sim = await startSimulator({ apiKey: API_KEY, seed: 17, latencyMs: { min: 1, max: 5 } });
});
afterAll(async () => {
  await sim.close();
  await redis.dispose();
});

/** One file per invoice, as an ERP exports them, the n-th last changed n seconds after the first. */
async function dropOnePerFile(dir: string, rows: readonly string[]): Promise<void> {
  const first = Date.now() / 1000 - rows.length - 60;
  for (const [i, row] of rows.entries()) {
    const path = join(dir, `inv-${String(i).padStart(4, "0")}.csv`);
    await writeFile(path, `${HEADER}\n${row}\n`);
    await utimes(path, first + i, first + i);
  }
}

async function csvNames(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith(".csv"));
}

describe("run of many one-invoice files", () => {
  it("when 400 one-invoice files are dropped, then one run reports and archives each, sends each invoice once, and files that repeat or change an invoice come out as if taken one at a time, oldest first", async () => {
    sim.reset();
    const drop = await tempDropDir();
    try {
      const rows = Array.from({ length: 400 }, (_, i) => `M-${i},EUR,DE,eu-10y`);
      // Files 250-299 repeat the invoices of files 0-49; files 300-399 come in pairs, side by side in the
      // pass, of one external_id in two versions: the older file's version is sent, the newer conflicts.
      for (let k = 0; k < 50; k++) {
        rows[250 + k] = `M-${k},EUR,DE,eu-10y`;
        rows[300 + 2 * k] = `P-${k},EUR,DE,eu-10y`;
        rows[301 + 2 * k] = `P-${k},USD,DE,eu-10y`;
      }
      // The last pair's older file holds 1,000 more invoices before its P row: the newer file, read in
      // a moment, still waits for it.
      rows[398] = [...Array.from({ length: 1000 }, (_, n) => `B-${n},EUR,DE,eu-10y`), rows[398]].join("\n");
      await dropOnePerFile(drop.dir, rows);
      const env = cliEnv({
        redisUrl: redis.url,
        apiUrl: sim.url,
        apiKey: API_KEY,
        name: "many",
        dropDir: drop.dir,
      });
      const run = spawnNode("workers/cli.js", ["run"], env);
      const { code } = await run.exited;
      expect(code, run.output()).toBe(2); // the 50 conflicts

      const reports = await readReports(drop.dir);
      expect(reports.size).toBe(400);
      const statusOf = (i: number) =>
        reports
          .get(`inv-${String(i).padStart(4, "0")}.csv`)
          ?.rows.map((r) => r.status)
          .join(",");
      for (let i = 0; i < 250; i++) expect(statusOf(i), `file ${i}`).toBe("succeeded");
      for (let i = 250; i < 300; i++) expect(statusOf(i), `file ${i}`).toMatch(/^(succeeded|duplicate)$/);
      for (let i = 300; i < 400; i++)
        expect(statusOf(i)?.split(",").pop(), `file ${i}`).toBe(i % 2 === 0 ? "succeeded" : "conflict");
      expect(await csvNames(join(drop.dir, "archive"))).toHaveLength(400);
      expect(await csvNames(drop.dir)).toEqual([]);
      expect(await readdir(join(drop.dir, "processing"))).toEqual([]);
      expect(sim.stats().effects).toMatchObject({
        total: 1300,
        distinctKeys: 1300,
        keysWithMultipleEffects: 0,
      });
    } finally {
      await drop.cleanup();
    }
  }, 180_000);

  it("when a run is killed with SIGKILL part-way through 600 one-invoice files and run again, then every file has one report and no invoice is sent twice", async () => {
    sim.reset();
    const drop = await tempDropDir();
    try {
      await dropOnePerFile(
        drop.dir,
        Array.from({ length: 600 }, (_, i) => `K-${i},EUR,FR,eu-10y`),
      );
      const env = cliEnv(
        { redisUrl: redis.url, apiUrl: sim.url, apiKey: API_KEY, name: "many-killed", dropDir: drop.dir },
        { LOCK_DURATION_MS: "2000" },
      );
      const first = spawnNode("workers/cli.js", ["run"], env);
      await until(() => Promise.resolve(sim.stats().effects.total >= 100), 60_000, "100 effects");
      first.child.kill("SIGKILL");
      await first.exited;
      expect(sim.stats().effects.total).toBeLessThan(600);

      const second = spawnNode("workers/cli.js", ["run"], env);
      const { code } = await second.exited;
      expect(code, second.output()).toBe(0);
      const reports = await readReports(drop.dir);
      expect([...reports.keys()].filter((name) => name.includes("#"))).toEqual([]); // no file reported twice
      expect(reports.size).toBe(600);
      for (const [name, report] of reports)
        expect(
          report.rows.map((r) => r.status),
          name,
        ).toEqual(["succeeded"]);
      expect(await csvNames(join(drop.dir, "archive"))).toHaveLength(600);
      expect(await readdir(join(drop.dir, "processing"))).toEqual([]);
      expect(sim.stats().effects).toMatchObject({
        total: 600,
        distinctKeys: 600,
        keysWithMultipleEffects: 0,
      });
    } finally {
      await drop.cleanup();
    }
  }, 240_000);
});
