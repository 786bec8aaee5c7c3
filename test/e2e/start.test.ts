import { open, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startSimulator } from "../../src/simulator/index.js";
import { finish } from "../support/cli-run.js";
import { readReports, summarySchema, tempDropDir } from "../support/drop.js";
import { spawnNode, until, type Spawned } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const cleanups = cleanupsAfterEach();

async function setup(simOptions: Parameters<typeof startSimulator>[0] = {}) {
  const sim = await startSimulator({ apiKey: API_KEY, seed: 9, ...simOptions });
  const drop = await tempDropDir();
  cleanups.push(() => sim.close(), drop.cleanup);
  const env = cliEnv(
    { apiUrl: sim.url, apiKey: API_KEY, name: "start", dropDir: drop.dir },
    {
      SETTLE_MS: "200",
      // Any free port for the health probes: two starts, or two test files, never contend for 9464.
      HTTP_ADDR: "127.0.0.1:0",
    },
  );
  return { sim, dir: drop.dir, env };
}

function start(env: Record<string, string>, args: string[]): Spawned {
  const proc = spawnNode("workers/cli.js", ["start", ...args], env);
  cleanups.push(async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
    await proc.exited;
  });
  return proc;
}

const csv = (prefix: string, n: number) =>
  [
    "external_id,currency,destination_country,archive_policy",
    ...Array.from({ length: n }, (_, i) => `${prefix}-${i},EUR,DE,eu-10y`),
  ].join("\n");

const reportCount = async (dir: string) =>
  (await readdir(join(dir, "reports")).catch(() => [])).filter((n) => n.endsWith(".summary.json")).length;

describe("invoice-relay start", () => {
  it("when a file is dropped while start --watch runs, then it is picked up once settled and reported", async () => {
    const { sim, dir, env } = await setup();
    const proc = start(env, ["--watch", "--schedule", "0 2 * * *"]);
    await until(
      async () => (await readdir(dir)).includes("processing"),
      15_000,
      "start to prepare the drop folder",
    );
    await writeFile(join(dir, "watched.csv"), csv("W", 20));
    await until(async () => (await reportCount(dir)) === 1, 20_000, "the report of the watched file");
    const summary = summarySchema.parse([...(await readReports(dir)).values()][0]?.summary);
    expect(summary.counts.succeeded).toBe(20);
    expect(sim.stats().effects.total).toBe(20);
    // The scan that took the file is a pass: ended once its batch was reported, as `run` would have.
    const scanPass = async () => {
      const status = await finish(
        spawnNode("workers/cli.js", ["status", "--json"], { ...env, LOG_LEVEL: "silent" }),
      );
      const passes = z
        .object({ passes: z.array(z.looseObject({ kind: z.string(), files: z.number() })) })
        .parse(JSON.parse(status.output.slice(status.output.indexOf("{")))).passes;
      return passes.find((p) => p.kind === "scan" && p.files === 1);
    };
    await until(async () => (await scanPass())?.["exit_code"] === 0, 20_000, "the scan's pass to end");
    expect(await scanPass()).toMatchObject({ invoices: { succeeded: 20 }, refused: 0 });
    proc.child.kill("SIGTERM");
    expect((await proc.exited).code).toBe(0);
  });

  it("when a writer appends to a file after start --watch reported and archived it, then the file is taken again whole once settled: only the new rows are sent and the first batch is marked replaced", async () => {
    const { sim, dir, env } = await setup();
    const proc = start(env, ["--watch", "--schedule", "0 2 * * *"]);
    await until(
      async () => (await readdir(dir)).includes("processing"),
      15_000,
      "start to prepare the drop folder",
    );
    const writer = await open(join(dir, "slow.csv"), "w");
    await writer.write(`${csv("G", 5)}\n`);
    await until(async () => (await reportCount(dir)) === 1, 20_000, "the report of the first rows");
    // Reported and archived: the writer goes on through its open handle.
    await writer.write(["G-5", "G-6", "G-7"].map((id) => `${id},EUR,DE,eu-10y\n`).join(""));
    await writer.close();
    await until(async () => (await reportCount(dir)) === 2, 20_000, "the report of the whole file");
    expect(sim.stats().effects).toMatchObject({ total: 8, distinctKeys: 8, keysWithMultipleEffects: 0 });
    // Told apart by what they say, not by name: both batch ids may carry the same second.
    const summaries = [...(await readReports(dir)).values()].map((r) => r.summary as Record<string, unknown>);
    const first = summaries.find((s) => s["replaced_by"] !== undefined);
    const whole = summaries.find((s) => s !== first);
    expect(summarySchema.parse(whole).counts).toMatchObject({ duplicate: 5, succeeded: 3 });
    expect(first?.["replaced_by"]).toMatchObject({ batch_id: whole?.["batch_id"] });
    proc.child.kill("SIGTERM");
    expect((await proc.exited).code).toBe(0);
  });

  it("when --schedule is not a cron schedule, then start exits 1 naming the flag before it touches Redis or the drop folder", async () => {
    const { dir, env } = await setup();
    const result = await finish(start(env, ["--schedule", "61 * * * *"]));
    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain('--schedule "61 * * * *" is not a cron schedule');
    expect(await readdir(dir)).not.toContain("processing");
  });

  it("when the schedule ticks, then a file in the drop folder is picked up without --watch", async () => {
    const { dir, env } = await setup();
    const proc = start(env, ["--schedule", "*/2 * * * * *", "--tz", "UTC"]);
    await until(
      async () => (await readdir(dir)).includes("processing"),
      15_000,
      "start to prepare the drop folder",
    );
    await writeFile(join(dir, "ticked.csv"), csv("S", 5));
    await until(async () => (await reportCount(dir)) === 1, 20_000, "the report of the scheduled scan");
    expect(summarySchema.parse([...(await readReports(dir)).values()][0]?.summary).counts.succeeded).toBe(5);
    proc.child.kill("SIGTERM");
    expect((await proc.exited).code).toBe(0);
  });

  it("when start gets SIGTERM mid-batch, then it exits 0 and a restart finishes with no double effects", async () => {
    const { sim, dir, env } = await setup({ latencyMs: { min: 5, max: 20 } });
    await writeFile(join(dir, "big.csv"), csv("T", 1500));
    const first = start({ ...env, SHUTDOWN_GRACE_MS: "3000", SETTLE_MS: "0" }, ["--schedule", "0 2 * * *"]);
    await until(() => Promise.resolve(sim.stats().effects.total >= 200), 20_000, "200 effects");
    first.child.kill("SIGTERM");
    expect((await first.exited).code).toBe(0);
    expect(sim.stats().effects.total).toBeLessThan(1500);

    const second = start({ ...env, SETTLE_MS: "0", LOCK_DURATION_MS: "2000" }, ["--schedule", "0 2 * * *"]);
    await until(async () => (await reportCount(dir)) === 1, 60_000, "the report after restart");
    second.child.kill("SIGTERM");
    await second.exited;
    expect(summarySchema.parse([...(await readReports(dir)).values()][0]?.summary).counts.succeeded).toBe(
      1500,
    );
    expect(sim.stats().effects).toMatchObject({ total: 1500, keysWithMultipleEffects: 0 });
    expect(await readdir(join(dir, "processing"))).toEqual([]);
  });

  it("when two start processes share one Redis and drop folder, then every file is ingested and reported once", async () => {
    const { sim, dir, env } = await setup();
    const a = start(env, ["--watch", "--schedule", "*/2 * * * * *"]);
    const b = start(env, ["--watch", "--schedule", "*/2 * * * * *"]);
    await until(
      async () => (await readdir(dir)).includes("processing"),
      15_000,
      "start to prepare the drop folder",
    );
    for (const n of [1, 2, 3]) await writeFile(join(dir, `shared-${n}.csv`), csv(`P${n}`, 40));
    await until(async () => (await reportCount(dir)) === 3, 30_000, "three reports");
    const reports = [...(await readReports(dir)).values()];
    expect(reports.map((r) => summarySchema.parse(r.summary).counts.succeeded)).toEqual([40, 40, 40]);
    expect(sim.stats().effects).toMatchObject({ total: 120, keysWithMultipleEffects: 0 });
    expect(await readdir(join(dir, "archive"))).toHaveLength(3);
    a.child.kill("SIGTERM");
    b.child.kill("SIGTERM");
    expect([(await a.exited).code, (await b.exited).code]).toEqual([0, 0]);
  });
});
