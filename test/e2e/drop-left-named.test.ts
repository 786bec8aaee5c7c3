import { appendFile, mkdir, readdir, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { runCli } from "../support/cli-run.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const HEADER = "external_id,currency,destination_country,archive_policy\n";
const csv = (id: string) => `${HEADER}${id}-1,EUR,DE,eu-10y\n${id}-2,EUR,FR,eu-10y\n`;
/** A share whose clock runs five minutes ahead dates its files so. */
const AHEAD_S = 300;

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 21 });
});
afterAll(async () => {
  await sim.close();
});
const cleanups = cleanupsAfterEach();

async function drop(): Promise<string> {
  const made = await tempDropDir();
  cleanups.push(made.cleanup);
  return made.dir;
}

async function future(path: string): Promise<void> {
  const at = new Date(Date.now() + AHEAD_S * 1000);
  await utimes(path, at, at);
}

const env = (dir: string, more: Record<string, string> = {}) =>
  cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "left", dropDir: dir }, { SETTLE_MS: "500", ...more });

describe("drop files a pass sees and does not take", () => {
  it("when a drop file is dated five minutes in the future, then run takes it once it has not changed for SETTLE_MS by this machine's clock, and exits 0", async () => {
    const dir = await drop();
    await writeFile(join(dir, "ahead.csv"), csv("AHEAD"));
    await future(join(dir, "ahead.csv"));
    const result = await runCli(["run", "--deadline", "30s"], env(dir));
    expect(result.code, result.output).toBe(0);
    expect([...(await readReports(dir)).keys()]).toEqual(["ahead.csv"]);
  });

  it("when DONE_MARKER_SUFFIX is set and a file and its marker are dated in the future, then run takes the file; one without its marker is named as waiting for it and run exits 2", async () => {
    const dir = await drop();
    await writeFile(join(dir, "marked.csv"), csv("MARKED"));
    await future(join(dir, "marked.csv"));
    await writeFile(join(dir, "marked.csv.done"), "");
    await future(join(dir, "marked.csv.done"));
    await writeFile(join(dir, "unmarked.csv"), csv("UNMARKED"));
    await future(join(dir, "unmarked.csv"));
    const result = await runCli(["run", "--deadline", "30s"], env(dir, { DONE_MARKER_SUFFIX: ".done" }));
    expect(result.code, result.output).toBe(2);
    expect([...(await readReports(dir)).keys()]).toEqual(["marked.csv"]);
    expect(result.output).toContain(
      "drop folder: unmarked.csv left in the drop folder: it waits for its done-marker unmarked.csv.done (DONE_MARKER_SUFFIX), written after it",
    );
  });

  it("when DONE_MARKER_SUFFIX is set and a file is dated in the future but its marker by this machine's clock, then run takes the file once it has not changed for SETTLE_MS, and exits 0", async () => {
    const dir = await drop();
    await writeFile(join(dir, "ahead.csv"), csv("AHEAD"));
    await future(join(dir, "ahead.csv"));
    await writeFile(join(dir, "ahead.csv.done"), "");
    const result = await runCli(["run", "--deadline", "30s"], env(dir, { DONE_MARKER_SUFFIX: ".done" }));
    expect(result.code, result.output).toBe(0);
    expect([...(await readReports(dir)).keys()]).toEqual(["ahead.csv"]);
    expect(await readdir(dir)).not.toContain("ahead.csv.done");
  });

  it("when names end in a space or a dot after the extension, or a folder has a drop file's name, then run and status name each with what to do, run exits 2, and the rest is taken", async () => {
    const dir = await drop();
    await writeFile(join(dir, "good.csv"), csv("GOOD"));
    await writeFile(join(dir, "space.csv "), csv("SPACE"));
    await writeFile(join(dir, "dot.csv."), csv("DOT"));
    await mkdir(join(dir, "folder.csv"));
    const settings = env(dir, { SETTLE_MS: "0" });
    const result = await runCli(["run", "--deadline", "30s"], settings);
    expect(result.code, result.output).toBe(2);
    expect([...(await readReports(dir)).keys()]).toEqual(["good.csv"]);
    expect(result.output).toContain(
      'left in the drop folder: its name "space.csv " ends in a space or a dot after the extension, so it is no drop file; rename it to space.csv',
    );
    expect(result.output).toMatch(
      /drop folder: dot\.csv\. left in the drop folder: its name "dot\.csv\." ends in a space or a dot .*rename it to dot\.csv/,
    );
    expect(result.output).toMatch(
      /drop folder: folder\.csv left in the drop folder: it is a folder, not a file/,
    );
    expect((await readdir(dir)).sort()).toEqual(
      ["archive", "dot.csv.", "folder.csv", "processing", "rejected", "reports", "space.csv "].sort(),
    );
    // `status` names them too, with the pass that left them.
    const status = await runCli(["status"], settings);
    expect(status.code, status.output).toBe(0);
    expect(status.output).toMatch(
      /pass \S+: drop folder: dot\.csv\. left in the drop folder: its name "dot\.csv\." ends/,
    );
    expect(status.output).toMatch(
      /pass \S+: drop folder: folder\.csv left in the drop folder: it is a folder/,
    );
  });

  it("when a file is still being written through the pass's wait, then run names it as still being written and exits 2 within twice SETTLE_MS of its start", async () => {
    const dir = await drop();
    const path = join(dir, "growing.csv");
    await writeFile(path, HEADER);
    let n = 0;
    const writer = setInterval(() => void appendFile(path, `GROW-${n++},EUR,DE,eu-10y\n`), 100);
    cleanups.push(() => {
      clearInterval(writer);
      return Promise.resolve();
    });
    const result = await runCli(["run", "--deadline", "30s"], env(dir, { SETTLE_MS: "1000" }));
    clearInterval(writer);
    expect(result.code, result.output).toBe(2);
    expect(result.output).toMatch(
      /drop folder: growing\.csv left in the drop folder: it is still being written \(changed 0\.\d s ago; SETTLE_MS=1000 ms\): a later pass takes it once it has settled/,
    );
    // Generous: the wait is 2 s; the rest is the process's start and end.
    expect(result.ms).toBeLessThan(20_000);
  });

  it("when the pass's --deadline comes before it takes a ready file, then run and status --json name it as left for a later pass, nothing is sent, and run exits 1", async () => {
    const dir = await drop();
    await writeFile(join(dir, "ok.csv"), csv("OK"));
    const settings = env(dir, { SETTLE_MS: "0" });
    const requests = sim.stats().requests.total;
    const result = await runCli(["run", "--deadline", "1ms"], settings);
    expect(result.code, result.output).toBe(1);
    const why =
      "left in the drop folder: the pass's --deadline came before it was taken; a later pass takes it";
    expect(result.output).toContain(`drop folder: ok.csv ${why}`);
    expect(sim.stats().requests.total).toBe(requests);
    expect(await readdir(dir)).toContain("ok.csv");
    const status = await runCli(["status", "--json"], settings);
    expect(status.code, status.output).toBe(0);
    const passes = (JSON.parse(status.output) as { passes: { left: unknown[] }[] }).passes;
    expect(passes[0]?.left).toEqual([{ where: "drop folder", file: "ok.csv", why }]);
  });

  it("when ingest sees a drop file's name ending in a dot, then it names it with the name meant and exits 2", async () => {
    const dir = await drop();
    await writeFile(join(dir, "late.csv."), csv("LATE"));
    const result = await runCli(["ingest"], env(dir, { SETTLE_MS: "0" }));
    expect(result.code, result.output).toBe(2);
    expect(result.output).toMatch(
      /invoice-relay ingest: drop folder: late\.csv\. left in the drop folder: .*rename it to late\.csv/,
    );
  });
});
