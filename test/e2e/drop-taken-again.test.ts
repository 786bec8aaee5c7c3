import { open, readdir, readFile, utimes } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startSimulator } from "../../src/simulator/index.js";
import { finish, runCli } from "../support/cli-run.js";
import { tempDropDir } from "../support/drop.js";
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

const summary = z.object({
  batch_id: z.string(),
  counts: z.record(z.string(), z.number()),
  replaced_by: z.object({ batch_id: z.string(), summary_json: z.string() }).optional(),
});

async function summaries(dir: string) {
  const names = (await readdir(join(dir, "reports"))).filter((n) => n.endsWith(".summary.json")).sort();
  return Promise.all(
    names.map(async (n) => summary.parse(JSON.parse(await readFile(join(dir, "reports", n), "utf8")))),
  );
}

async function setup() {
  const sim = await startSimulator({ apiKey: API_KEY, seed: 29 });
  const gate = await startGate(sim.url);
  const drop = await tempDropDir();
  cleanups.push(
    () => sim.close(),
    () => gate.close(),
    drop.cleanup,
  );
  const env = cliEnv(
    { apiUrl: gate.url, apiKey: API_KEY, name: "again", dropDir: drop.dir },
    {
      SETTLE_MS: "1000",
    },
  );
  return { sim, gate, dir: drop.dir, env };
}

describe("a claimed file that grows or changes is taken again by itself", () => {
  it("when a writer appends to a file after its pass reported and archived it, then the next run takes the whole file again as a new batch: only the 50 missing rows are sent, once each, and the first batch is reported as replaced by it", async () => {
    const { sim, gate, dir, env } = await setup();
    gate.open();
    const path = join(dir, "slow.csv");
    const writer = await open(path, "w");
    await writer.write(HEADER + rows(0, 50));
    await utimes(path, tenSecondsAgo(), tenSecondsAgo()); // the writer paused longer than SETTLE_MS

    const first = await runCli(["run"], env);
    expect(first.code, first.output).toBe(0);
    const [archived] = await readdir(join(dir, "archive"));
    expect(archived).toMatch(/--slow\.csv$/);
    // The report is written and the file archived: only now does the writer go on, through its handle.
    await writer.write(rows(50, 100));
    await writer.close();
    expect(await readFile(join(dir, "archive", archived ?? ""), "utf8")).toBe(HEADER + rows(0, 100));
    await utimes(join(dir, "archive", archived ?? ""), tenSecondsAgo(), tenSecondsAgo()); // settled

    const second = await runCli(["run"], env);
    expect(second.code, second.output).toBe(0);
    expect(sim.stats().effects).toMatchObject({ total: 100, distinctKeys: 100, keysWithMultipleEffects: 0 });
    const [old, renewed] = await summaries(dir);
    expect(old?.counts).toMatchObject({ succeeded: 50 });
    expect(renewed?.counts).toMatchObject({ duplicate: 50, succeeded: 50 });
    expect(old?.replaced_by?.batch_id).toBe(renewed?.batch_id);
    expect(old?.replaced_by?.summary_json).toContain(`slow.csv.${renewed?.batch_id}.summary.json`);

    const status = await runCli(["status"], env);
    expect(status.output).toContain(`replaced by ${renewed?.batch_id ?? "?"}`);
    const third = await runCli(["run"], env);
    expect(third.code, third.output).toBe(0);
    expect(sim.stats().effects.total).toBe(100);
  }, 180_000);

  it("when a claimed file's rows are rewritten in place while its pass runs, then the batch is `changed` and named, and once the file has settled it is taken again whole as a new batch by itself: the rewritten row comes out conflict, the others duplicate, nothing is sent twice", async () => {
    const { sim, gate, dir, env } = await setup();
    const path = join(dir, "rewritten.csv");
    const writer = await open(path, "w");
    await writer.write(HEADER + rows(0, 50));
    await utimes(path, tenSecondsAgo(), tenSecondsAgo());

    const proc = spawnNode("workers/cli.js", ["run"], env);
    await gate.firstRequest; // claimed and ingested
    await writer.write("USD", HEADER.length + "W-0,".length); // W-0's currency, rewritten in place
    await writer.close();
    gate.open();
    const pass = await finish(proc);

    expect(pass.output).toMatch(/rewritten\.csv changed after it was claimed/);
    expect(pass.code, pass.output).toBe(2); // the rewritten row is in conflict with the one sent
    expect(sim.stats().effects).toMatchObject({ total: 50, keysWithMultipleEffects: 0 });
    expect(await readdir(join(dir, "processing"))).toEqual([]);
    const [renewed] = await summaries(dir);
    expect(renewed?.counts).toMatchObject({ duplicate: 49, conflict: 1 });

    const status = await runCli(["status"], env);
    expect(status.output).toMatch(/rewritten\.csv changed after it was claimed/);
    expect(status.output).toContain(`replaced by ${renewed?.batch_id ?? "?"}`);
    const again = await runCli(["run"], env);
    expect(again.code, again.output).toBe(0);
    expect(again.output).toMatch(/nothing to do/);
    expect(sim.stats().effects.total).toBe(50);
  }, 180_000);
});
