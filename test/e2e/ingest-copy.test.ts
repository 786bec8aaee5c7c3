import { execFileSync } from "node:child_process";
import { lstat, open, readdir, stat, utimes } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { finish, runCli } from "../support/cli-run.js";
import { spawnNode, until } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const cleanups = cleanupsAfterEach();

// external_id last: a row cut inside it is still a valid invoice, with the wrong id.
const HEADER = "currency,destination_country,archive_policy,external_id\n";
const ROWS = 1200;
const row = (i: number) => `EUR,DE,eu-10y,R-${String(i).padStart(6, "0")}\n`;
const WHOLE = HEADER + Array.from({ length: ROWS }, (_, i) => row(i)).join("");
/** The first 1000 rows and the start of the next, cut inside its external_id. */
const HEAD = HEADER + Array.from({ length: 1000 }, (_, i) => row(i)).join("") + "EUR,DE,eu-10y,R-0010";

async function bytesIn(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) total += (await stat(join(dir, name))).size;
  return total;
}

describe("ingest FILE from another file system", () => {
  it("when ingest FILE is killed while copying the file into processing/, then the next run ingests nothing of it, a later pass removes the interrupted copy, the source stays in place and ingests whole", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 7 });
    const source = await tempDropDir();
    const drop = await tempDropDir();
    cleanups.push(() => sim.close(), drop.cleanup, source.cleanup);
    const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "copy", dropDir: drop.dir });
    // A named pipe is a source as slow as the test wants: the copy holds what was written so far.
    const fifo = join(source.dir, "invoices.csv");
    execFileSync("mkfifo", [fifo]);
    const copyEnv = { ...env, INVOICE_RELAY_TEST_FORCE_COPY: "1" };

    const killed = spawnNode("workers/cli.js", ["ingest", fifo], copyEnv);
    const writer = await open(fifo, "w"); // opens once the copy has opened its source
    await writer.write(HEAD);
    const processing = join(drop.dir, "processing");
    await until(async () => (await bytesIn(processing)) >= HEAD.length, 20_000, "the copy to hold the head");
    killed.child.kill("SIGKILL");
    await killed.exited;
    await writer.close();

    const next = await runCli(["run"], env);
    expect(next.code, next.output).toBe(0);
    expect(next.output).toMatch(/nothing to do/);
    expect(await readdir(join(drop.dir, "reports"))).toEqual([".deployment.json"]);
    expect(sim.stats().requests.total).toBe(0);
    const left = await readdir(processing);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(/^\./); // a copy in progress, never taken for a claimed file
    expect((await lstat(fifo)).isFIFO()).toBe(true); // the source was not removed

    // An hour later the copier is known dead: the next pass removes its leftover.
    const hourAgo = new Date(Date.now() - 61 * 60 * 1000);
    await utimes(join(processing, left[0] ?? ""), hourAgo, hourAgo);
    const later = await runCli(["run"], env);
    expect(later.code, later.output).toBe(0);
    expect(later.output).toMatch(/interrupted copy/);
    expect(await readdir(processing)).toEqual([]);

    const again = spawnNode("workers/cli.js", ["ingest", fifo], copyEnv);
    const whole = await open(fifo, "w");
    await whole.write(WHOLE);
    await whole.close();
    const ingested = await finish(again);
    expect(ingested.code, ingested.output).toBe(0);
    const done = await runCli(["run"], env);
    expect(done.code, done.output).toBe(0);
    const report = [...(await readReports(drop.dir)).values()];
    expect(report).toHaveLength(1);
    expect(report[0]?.rows.map((r) => [r.external_id, r.status])).toEqual(
      Array.from({ length: ROWS }, (_, i) => [`R-${String(i).padStart(6, "0")}`, "succeeded"]),
    );
    expect(sim.stats().effects).toMatchObject({ total: ROWS, keysWithMultipleEffects: 0 });
    await expect(lstat(fifo)).rejects.toThrow(/ENOENT/); // claimed whole, then removed
  });

  it("when ingest FILE names a named pipe on the drop folder's own file system, then what is written to it is copied in whole and sent, and no pipe is left in processing/ for later passes to wait on", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 8 });
    const drop = await tempDropDir();
    const source = await tempDropDir(); // beside it, on the same file system
    cleanups.push(() => sim.close(), drop.cleanup, source.cleanup);
    const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "pipe", dropDir: drop.dir });
    const fifo = join(source.dir, "piped.csv");
    execFileSync("mkfifo", [fifo]);

    const ingesting = spawnNode("workers/cli.js", ["ingest", fifo], env);
    const writer = await open(fifo, "w"); // opens once the relay reads it
    await writer.write(WHOLE);
    await writer.close();
    const ingested = await finish(ingesting, 30_000);
    expect(ingested.code, ingested.output).toBe(0);
    for (const name of await readdir(join(drop.dir, "processing")))
      expect((await lstat(join(drop.dir, "processing", name))).isFIFO(), name).toBe(false);

    const done = await runCli(["run"], env, 60_000);
    expect(done.signal, done.output).toBeNull();
    expect(done.code, done.output).toBe(0);
    expect(sim.stats().effects).toMatchObject({ total: ROWS, keysWithMultipleEffects: 0 });
  });
});
