import { appendFile, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readReports } from "../support/drop.js";
import { finish, runCli } from "../support/cli-run.js";
import { spawnNode } from "../support/processes.js";
import { sftpSetup, type SftpSetup } from "../support/sftp-source.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const cleanups = cleanupsAfterEach();

async function setup(): Promise<SftpSetup> {
  const s = await sftpSetup();
  cleanups.push(() => s.close());
  await s.writeSources();
  return s;
}

const HEADER = "external_id,currency,destination_country,archive_policy\n";
const rowsFrom = (from: number, to: number): string =>
  Array.from({ length: to - from + 1 }, (_, i) => `GROW-${from + i},EUR,DE,eu-10y\n`).join("");

describe("invoice-relay run with an SFTP file that changes on the server", () => {
  it("when rows are appended to the server's copy while run takes it, then run sends every row once and exits 0, and the next run has nothing to do", async () => {
    const s = await setup();
    await writeFile(join(s.inbox, "grow.csv"), HEADER + rowsFrom(1, 5));
    const env = { ...s.env, SETTLE_MS: "300" };
    const run = spawnNode("workers/cli.js", ["run"], env);
    // A writer that kept the file open goes on writing into it once the relay has moved it.
    const processing = join(s.inbox, "processing");
    let appended = false;
    while (!appended && run.child.exitCode === null) {
      const [moved] = await readdir(processing).catch(() => [] as string[]);
      if (moved !== undefined) {
        await appendFile(join(processing, moved), rowsFrom(6, 10));
        appended = true;
      } else await new Promise((r) => setTimeout(r, 2));
    }
    expect(appended, run.output()).toBe(true);
    const ended = await finish(run, 120_000);
    expect(ended.code, ended.output).toBe(0);
    const stats = s.sim.stats();
    expect(stats.effects.distinctExternalIds).toBe(10);
    expect(stats.effects.externalIdsWithMultipleEffects).toBe(0);
    expect(await s.remote("processing")).toEqual([]);
    const archived = await s.remote("archive");
    expect(archived).toHaveLength(1);
    expect(await readFile(join(s.inbox, "archive", archived[0] ?? ""), "utf8")).toBe(
      HEADER + rowsFrom(1, 10),
    );
    // The batch that read the whole file reports every row.
    const whole = [...(await readReports(s.dir)).values()].find((r) => r.rows.length === 10);
    expect(whole?.rows.map((r) => r.external_id).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `GROW-${i + 1}`).sort(),
    );

    const again = await runCli(["run"], env, 60_000);
    expect(again.code, again.output).toBe(0);
    expect(again.output).toContain("nothing to do");
  }, 180_000);
  it("when the partner removes a file from the server while run downloads it, then run names it as gone while downloaded in the output and `status`, sends nothing of it, and exits 2", async () => {
    const s = await setup();
    // 2 MB: its download lasts long enough to be seen under way.
    const rows = Array.from({ length: 80_000 }, (_, i) => `GONE-${i + 1},EUR,DE,eu-10y\n`).join("");
    await writeFile(join(s.inbox, "gone.csv"), HEADER + rows);
    const run = spawnNode("workers/cli.js", ["run"], s.env);
    const processing = join(s.dir, "processing");
    let removed = false;
    while (!removed && run.child.exitCode === null) {
      const names = await readdir(processing).catch(() => [] as string[]);
      if (names.some((n) => n.endsWith(".download"))) {
        await rm(join(s.inbox, "gone.csv"));
        removed = true;
      } else await new Promise((r) => setTimeout(r, 2));
    }
    expect(removed, run.output()).toBe(true);
    const ended = await finish(run, 120_000);
    const named =
      /SFTP source acme: gone\.csv left on the server: it went away from the server while it was being downloaded; nothing of it is taken/;
    expect(ended.code, ended.output).toBe(2);
    expect(ended.output).toMatch(named);
    expect(s.sim.stats().requests.total).toBe(0);
    expect(await readdir(processing)).toEqual([]);
    const status = await runCli(["status"], s.env);
    expect(status.output).toMatch(named);
  }, 180_000);
});
