import { execFileSync } from "node:child_process";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { claimedName, newBatchId } from "../../src/ingest/drop-folder.js";
import { startSimulator } from "../../src/simulator/index.js";
import { readReports, summarySchema, tempDropDir } from "../support/drop.js";
import { spawnNode } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { segment } from "../support/file-names.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const cleanups = cleanupsAfterEach();

/** Names a Linux file system accepts and a careless parser does not: line breaks first. */
const ODD_NAMES = [
  "line\nbreak.csv",
  "carriage\rreturn.csv",
  "crlf\r\n.csv",
  "line\u2028separator.csv",
  "paragraph\u2029separator.csv",
  "tab\there.csv",
  "  leading and trailing  .csv",
  `quo"te's.csv`,
  "dash--dash.csv",
  "20261121T020000Z-3fa9c1--looks-claimed.csv",
  "back\\slash.csv",
  "glob*?[].csv",
  "emoji😀.ndjson",
  `${"日本語".repeat(16)}.csv`,
];

function csvFor(i: number): string {
  return `external_id,currency,destination_country,archive_policy\nNAME-${i}-A,EUR,DE,eu-10y\nNAME-${i}-B,EUR,FR,eu-10y\n`;
}

function ndjsonFor(i: number): string {
  return [`NAME-${i}-A`, `NAME-${i}-B`]
    .map((id) =>
      JSON.stringify({
        external_id: id,
        currency: "EUR",
        destination_country: "DE",
        archive_policy: "eu-10y",
      }),
    )
    .join("\n");
}

describe("drop files with odd names", () => {
  it("when files whose names hold line breaks, quotes, globs and emoji are left claimed in processing/ by a killed run or freshly dropped, then the next run resumes and claims them all, reports and archives each and exits 0", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 3 });
    const drop = await tempDropDir();
    cleanups.push(() => sim.close(), drop.cleanup);
    const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "names", dropDir: drop.dir });
    await mkdir(join(drop.dir, "processing"));
    // Even-numbered names lie in processing/ as a run killed right after claiming them leaves them;
    // odd-numbered ones are freshly dropped.
    for (const [i, name] of ODD_NAMES.entries()) {
      const content = name.endsWith(".ndjson") ? ndjsonFor(i) : csvFor(i);
      const path =
        i % 2 === 0
          ? join(drop.dir, "processing", claimedName(newBatchId(), segment(name)))
          : join(drop.dir, name);
      await writeFile(path, content);
    }

    const proc = spawnNode("workers/cli.js", ["run"], env);
    const { code } = await proc.exited;
    expect(code, proc.output()).toBe(0);
    const reports = await readReports(drop.dir);
    expect([...reports.keys()].sort()).toEqual([...ODD_NAMES].sort());
    for (const [i, name] of ODD_NAMES.entries()) {
      const report = reports.get(name);
      expect(
        report?.rows.map((r) => [r.external_id, r.status]),
        JSON.stringify(name),
      ).toEqual([
        [`NAME-${i}-A`, "succeeded"],
        [`NAME-${i}-B`, "succeeded"],
      ]);
      expect(summarySchema.parse(report?.summary).file).toBe(name);
    }
    expect(await readdir(join(drop.dir, "processing"))).toEqual([]);
    expect(await readdir(join(drop.dir, "archive"))).toHaveLength(ODD_NAMES.length);
    expect(sim.stats().effects).toMatchObject({ total: 2 * ODD_NAMES.length, keysWithMultipleEffects: 0 });
  });

  it("when a dropped file's name is too long for the names made from it, then run leaves it where it is with an error naming it, the other files go on, and it exits 2", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 4 });
    const drop = await tempDropDir();
    cleanups.push(() => sim.close(), drop.cleanup);
    const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "names", dropDir: drop.dir });
    // 228 bytes: its claimed name (252 bytes) fits, its report's name (263) does not.
    const long = `${"日".repeat(74)}.csv`;
    await writeFile(join(drop.dir, long), csvFor(1));
    await writeFile(join(drop.dir, "short.csv"), csvFor(2));

    const proc = spawnNode("workers/cli.js", ["run"], env);
    const { code } = await proc.exited;
    // A file left behind: never "all is well".
    expect(code, proc.output()).toBe(2);
    expect([...(await readReports(drop.dir)).keys()]).toEqual(["short.csv"]);
    expect(await readdir(drop.dir)).toContain(long);
    expect(await readdir(join(drop.dir, "processing"))).toEqual([]);
    expect(proc.output()).toMatch(/name is too long/);
    expect(proc.output()).toContain(long);
    expect(sim.stats().effects.total).toBe(2);
  });

  it("when a dropped file's name is not UTF-8, then every run names it, its bytes escaped, leaves it where it is and exits 2, and the other files go on", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 5 });
    const drop = await tempDropDir();
    cleanups.push(() => sim.close(), drop.cleanup);
    const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "names", dropDir: drop.dir });
    const bad = Buffer.concat([Buffer.from("loc"), Buffer.from([0xff]), Buffer.from("al.csv")]);
    await writeFile(Buffer.concat([Buffer.from(`${drop.dir}/`), bad]), csvFor(1));
    await writeFile(join(drop.dir, "fine.csv"), csvFor(2));

    for (const pass of [1, 2]) {
      const proc = spawnNode("workers/cli.js", ["run"], env);
      const { code } = await proc.exited;
      expect(code, proc.output()).toBe(2);
      expect(proc.output(), `pass ${pass}`).toContain('"loc\\xffal.csv"');
      expect(proc.output()).toMatch(/not UTF-8/);
    }
    expect([...(await readReports(drop.dir)).keys()]).toEqual(["fine.csv"]);
    expect(await readdir(drop.dir, { encoding: "buffer" })).toContainEqual(bad);
    expect(sim.stats().effects.total).toBe(2);
  });

  it("when a named pipe and a folder carry drop files' names, then every run names each as not a file, never opens the pipe, exits 2, and the other files go on", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 6 });
    const drop = await tempDropDir();
    cleanups.push(() => sim.close(), drop.cleanup);
    const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "names", dropDir: drop.dir });
    execFileSync("mkfifo", [join(drop.dir, "pipe.csv")]);
    await mkdir(join(drop.dir, "folder.ndjson"));
    await writeFile(join(drop.dir, "fine.csv"), csvFor(3));

    for (const pass of [1, 2]) {
      const proc = spawnNode("workers/cli.js", ["run"], env);
      const { code } = await proc.exited;
      expect(code, proc.output()).toBe(2);
      expect(proc.output(), `pass ${pass}`).toMatch(/pipe\.csv[^\n]*it is a named pipe, not a file/);
      expect(proc.output(), `pass ${pass}`).toMatch(/folder\.ndjson[^\n]*it is a folder, not a file/);
    }
    expect([...(await readReports(drop.dir)).keys()]).toEqual(["fine.csv"]);
    expect(await readdir(drop.dir)).toEqual(expect.arrayContaining(["pipe.csv", "folder.ndjson"]));
    expect(sim.stats().effects.total).toBe(2);
  });
});
