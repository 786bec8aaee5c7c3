import { randomUUID } from "node:crypto";
import { open, readdir, readFile, rename, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { finish, runCli } from "../support/cli-run.js";
import { readReports, summarySchema, tempDropDir } from "../support/drop.js";
import { startGate } from "../support/gate.js";
import { spawnNode } from "../support/processes.js";
import { testRedisUrl } from "../support/redis.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const HEADER = "external_id,currency,destination_country,archive_policy\n";
const rows = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `W-${from + i},EUR,DE,eu-10y\n`).join("");
const tenSecondsAgo = () => new Date(Date.now() - 10_000);

async function setup(extraEnv: Record<string, string> = {}) {
  const sim = await startSimulator({ apiKey: API_KEY, seed: 11 });
  const gate = await startGate(sim.url);
  const drop = await tempDropDir();
  cleanups.push(
    () => sim.close(),
    () => gate.close(),
    drop.cleanup,
  );
  const env = {
    REDIS_URL: testRedisUrl(),
    INVOICE_API_URL: gate.url,
    INVOICE_API_KEY: API_KEY,
    QUEUE_PREFIX: `written-${randomUUID()}`,
    DROP_DIR: drop.dir,
    SETTLE_MS: "2000",
    LOG_LEVEL: "warn",
    ...extraEnv,
  };
  return { sim, gate, dir: drop.dir, env };
}

describe("a drop file still being written", () => {
  it("when a writer pauses longer than SETTLE_MS, run claims the file and the writer then writes the rest, then run exits 1 naming the file and the bytes, reports nothing as complete and keeps the whole file in processing/; dropped again whole, every row is sent once", async () => {
    const { sim, gate, dir, env } = await setup();
    const path = join(dir, "growing.csv");
    const writer = await open(path, "w");
    await writer.write(HEADER + rows(0, 50));
    const claimedBytes = (await writer.stat()).size;
    await utimes(path, tenSecondsAgo(), tenSecondsAgo()); // the writer paused longer than SETTLE_MS

    const proc = spawnNode("workers/cli.js", ["run"], env);
    await gate.firstRequest; // claimed and ingested: its first invoice is on its way
    await writer.write(rows(50, 100));
    await writer.close();
    gate.open();
    const pass = await finish(proc);

    expect(pass.code, pass.output).toBe(1);
    expect(pass.output).toMatch(/growing\.csv changed after it was claimed/);
    expect(pass.output).toContain(`claimed ${claimedBytes} bytes`);
    expect(pass.output).toContain(`now ${claimedBytes + rows(50, 100).length} bytes`);
    expect(await readdir(join(dir, "reports"))).toEqual([]);
    expect(await readdir(join(dir, "archive"))).toEqual([]);
    const kept = await readdir(join(dir, "processing"));
    expect(kept).toHaveLength(1);
    expect(await readFile(join(dir, "processing", kept[0] ?? ""), "utf8")).toBe(HEADER + rows(0, 100));
    expect(sim.stats().effects).toMatchObject({ total: 50, keysWithMultipleEffects: 0 });

    // Until someone acts, every run says so again.
    const again = await runCli(["run"], env);
    expect(again.code, again.output).toBe(1);
    expect(again.output).toMatch(/growing\.csv changed after it was claimed/);

    // What the message says to do: the complete file back into the drop folder.
    await rename(join(dir, "processing", kept[0] ?? ""), path);
    await utimes(path, tenSecondsAgo(), tenSecondsAgo());
    const whole = await runCli(["run"], env);
    expect(whole.code, whole.output).toBe(0);
    const report = [...(await readReports(dir)).values()];
    expect(report).toHaveLength(1);
    expect(summarySchema.parse(report[0]?.summary).counts).toMatchObject({ duplicate: 50, succeeded: 50 });
    expect(sim.stats().effects).toMatchObject({ total: 100, keysWithMultipleEffects: 0 });
  });
});

describe("DONE_MARKER_SUFFIX", () => {
  it("when DONE_MARKER_SUFFIX is set, then run picks up only files whose marker is newer than the file, removes the marker on claim, and leaves settled files without one alone", async () => {
    const { sim, gate, dir, env } = await setup({ DONE_MARKER_SUFFIX: ".done", SETTLE_MS: "0" });
    gate.open();
    const csv = (prefix: string) => `${HEADER}${prefix}-1,EUR,DE,eu-10y\n${prefix}-2,EUR,FR,eu-10y\n`;
    await writeFile(join(dir, "unmarked.csv"), csv("U"));
    await writeFile(join(dir, "marked.csv"), csv("M"));
    await writeFile(join(dir, "marked.csv.done"), "");
    // A marker older than its file marks an earlier upload, not this one.
    await writeFile(join(dir, "stale.csv.done"), "");
    await utimes(join(dir, "stale.csv.done"), tenSecondsAgo(), tenSecondsAgo());
    await writeFile(join(dir, "stale.csv"), csv("S"));

    const first = await runCli(["run"], env);
    expect(first.code, first.output).toBe(0);
    expect([...(await readReports(dir)).keys()]).toEqual(["marked.csv"]);
    expect((await readdir(dir)).sort()).toEqual(
      ["archive", "processing", "rejected", "reports", "stale.csv", "stale.csv.done", "unmarked.csv"].sort(),
    );

    await writeFile(join(dir, "unmarked.csv.done"), "");
    await writeFile(join(dir, "stale.csv.done"), ""); // the upload's own marker, written after it
    const second = await runCli(["run"], env);
    expect(second.code, second.output).toBe(0);
    expect([...(await readReports(dir)).keys()].sort()).toEqual(["marked.csv", "stale.csv", "unmarked.csv"]);
    expect((await readdir(dir)).sort()).toEqual(["archive", "processing", "rejected", "reports"]);
    expect(sim.stats().effects).toMatchObject({ total: 6, keysWithMultipleEffects: 0 });
  });
});
