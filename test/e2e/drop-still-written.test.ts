import { open, readdir, readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { finish, runCli } from "../support/cli-run.js";
import { readReports, summarySchema, tempDropDir } from "../support/drop.js";
import { startGate } from "../support/gate.js";
import { spawnNode } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const cleanups = cleanupsAfterEach();

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
  const env = cliEnv(
    { apiUrl: gate.url, apiKey: API_KEY, name: "written", dropDir: drop.dir },
    {
      SETTLE_MS: "2000",
      ...extraEnv,
    },
  );
  return { sim, gate, dir: drop.dir, env };
}

describe("a drop file still being written", () => {
  it("when a writer pauses longer than SETTLE_MS, run claims the file and the writer then writes the rest, then run reports the claimed rows, takes the whole file again once it has settled and sends only the rest in the same pass: exit 0, every row sent once, the first batch replaced", async () => {
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
    const pass = await finish(proc, 120_000);

    expect(pass.code, pass.output).toBe(0);
    expect(pass.output).toMatch(
      /growing\.csv: batch \S+ is replaced by batch \S+, the whole file taken again/,
    );
    expect(await readdir(join(dir, "processing"))).toEqual([]);
    const reports = [...(await readReports(dir)).values()].map((r) => summarySchema.parse(r.summary));
    expect(reports.map((r) => r.counts)).toEqual([
      expect.objectContaining({ succeeded: 50 }),
      expect.objectContaining({ duplicate: 50, succeeded: 50 }),
    ]);
    expect(sim.stats().effects).toMatchObject({ total: 100, keysWithMultipleEffects: 0 });
    // The first batch's file keeps its claimed bytes under its own name; the new one is the whole file.
    const archived = (await readdir(join(dir, "archive"))).sort();
    expect(archived).toHaveLength(2);
    for (const name of archived)
      expect(await readFile(join(dir, "archive", name), "utf8")).toBe(HEADER + rows(0, 100));
    expect(claimedBytes).toBeLessThan((HEADER + rows(0, 100)).length);

    const again = await runCli(["run"], env);
    expect(again.code, again.output).toBe(0);
    expect(again.output).toMatch(/nothing to do/);
  }, 180_000);
});

describe("DONE_MARKER_SUFFIX", () => {
  it("when DONE_MARKER_SUFFIX is set, then run picks up only files whose marker is newer than the file, removes the marker on claim, and leaves settled files without one where they are, named, exit 2", async () => {
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
    // Files left for want of a marker are named, and the pass does not exit 0.
    expect(first.code, first.output).toBe(2);
    expect(first.output).toMatch(
      /unmarked\.csv left in the drop folder: it waits for its done-marker unmarked\.csv\.done/,
    );
    expect(first.output).toMatch(
      /stale\.csv left in the drop folder: it waits for its done-marker stale\.csv\.done/,
    );
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
